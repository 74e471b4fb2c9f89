"""The league runner: plays a league's schedule on a backend and stores results with one writer.

The writer (this process) is the only one that touches the store. Games run elsewhere: in a pool of
worker processes (``local``, ``--concurrency N`` games at once) or as Ray tasks (``ray``,
:mod:`arena.ray_backend`). Each finished game is committed in its own transaction; a schedule key can
be stored only once, so a run that is killed and started again plays exactly the games that are
missing (the ones in flight when it died included) and counts nothing twice. Ratings are folded in
schedule-key order, only up to the first game still outstanding, so they never depend on the order in
which games happened to finish.
"""
from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arena.errors import ArenaError, ConfigError, MachineOverloadedError
from arena.league import LeagueConfig
from arena.limits import Limits
from arena.schedule import Fixture, league_schedule
from leaderboards.probation import ProbationRule
from leaderboards.store import DEFAULT_DB, Bot, Store

BACKENDS = ("local", "ray")


@dataclass(frozen=True)
class Task:
    """Everything a worker needs to play one fixture (picklable, no store access)."""

    key: str
    game: str
    round: int
    seats: tuple[int, ...]
    """Bot id per seat."""
    bots: tuple[str, ...]
    """Per seat: a built-in spec, or ``file:<content hash>`` (a key of ``files``)."""
    names: tuple[str, ...]
    seed: int
    limits: dict[str, Any]
    on_failure: str
    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    """content hash -> (file name, source) of the bot files at this table; they travel with the task."""
    chance_key: bytes | None = None
    """The league's secret chance key (keys chance and bot seeds; never sent to a bot). None: a fresh one per game."""


@dataclass
class RunSummary:
    """What one ``league run`` did."""

    league: str
    database: Path
    scheduled: int = 0
    """Fixtures in the whole schedule."""
    already: int = 0
    """Fixtures stored by earlier runs."""
    played: int = 0
    skipped: int = 0
    """Fixtures not played because a bot is on probation."""
    errors: list[str] = field(default_factory=list)
    """Games the referee could not play (arena bugs, not bot failures); they are retried on the next run."""
    overloaded: list[str] = field(default_factory=list)
    """Games abandoned because the machine starved a bot of CPU (never a time loss); retried on the next run."""
    elapsed: float = 0.0
    probation: list[str] = field(default_factory=list)


class Backend(Protocol):
    def execute(self, tasks: Iterator[Task]) -> Iterator[tuple[Task, dict[str, Any]]]:
        """Runs tasks (pulled lazily, as slots free up) and yields (task, result) as games finish."""
        ...

    def close(self) -> None: ...


# -- playing one game (runs in a worker) ---------------------------------------------------------
def materialize(files: dict[str, tuple[str, str]], root: str | os.PathLike[str]) -> dict[str, str]:
    """Writes bot files into content-addressed directories under ``root``; returns hash -> path."""
    paths = {}
    for digest, (filename, source) in files.items():
        directory = Path(root) / digest[:16]
        target = directory / filename
        if not target.exists() or target.read_text() != source:
            directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".py")
            with os.fdopen(fd, "w") as fh:
                fh.write(source)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)  # atomic: concurrent workers never see half a file
        paths[digest] = str(target)
    return paths


def play_task(task: Task, bot_root: str | None = None) -> dict[str, Any]:
    """Plays one fixture through the referee and returns the record as a dict (``{"error": ...}`` when the
    referee itself failed)."""
    try:
        root = bot_root or os.path.join(tempfile.gettempdir(), f"arena-bots-{os.getuid()}")
        paths = materialize(task.files, root)
        bots = [paths[b[5:]] if b.startswith("file:") else b for b in task.bots]
        record = _referee()(task.game, bots, task.seed, Limits.from_dict(task.limits), on_failure=task.on_failure,
                            names=list(task.names), chance_key=task.chance_key)
        return record.to_dict()
    except MachineOverloadedError as exc:  # abandoned, not forfeited: the writer says so, the next run replays it
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}", "overloaded": True}
    except Exception as exc:  # noqa: BLE001 - reported by the writer, the game is retried next run
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}


def _referee() -> Callable[..., Any]:
    from arena.referee import play_game
    return play_game


# -- the writer --------------------------------------------------------------------------------------
def sync_bots(store: Store, league_id: int, config: LeagueConfig) -> list[Bot]:
    """Enters the league file's bots (a changed spec or file becomes a new version) and retires config bots that
    were removed from the file. Submitted bots are left alone. Returns the bots not retired."""
    listed = set()
    for entry in config.bots:
        listed.add(entry.name)
        store.upsert_bot(league_id, entry.name, origin="config", spec=entry.spec,
                         filename=entry.file.name if entry.file else None, source=entry.source,
                         games=entry.games, trusted=entry.trusted)
    for bot in store.bots(league_id, include_retired=False):
        if bot.origin == "config" and bot.name not in listed:
            store.retire_bot(bot.id, "removed from the league file")
    return store.bots(league_id, include_retired=False)


def plan(store: Store, league_id: int, config: LeagueConfig) -> list[Fixture]:
    """The league's whole schedule for its active bots (stored games included)."""
    active = [b for b in store.bots(league_id, include_retired=False) if b.status == "active"]
    players = {g: [b.id for b in active if b.plays(g)] for g in config.games}
    return league_schedule([(g, config.seats(g)) for g in config.games], players, config.games_per_pairing,
                           config.seed, mode=config.tables)


def missing(fixtures: list[Fixture], stored: Iterable[str]) -> list[Fixture]:
    """The fixtures (in key order) whose keys are not among ``stored`` (also in key order): one merge pass, no set
    of 100,000 stored keys (keys of games no longer scheduled, e.g. of a retired bot, are passed over)."""
    todo: list[Fixture] = []
    keys = iter(stored)
    current = next(keys, None)
    for fixture in fixtures:
        while current is not None and current < fixture.key:
            current = next(keys, None)
        if current == fixture.key:
            current = next(keys, None)
        else:
            todo.append(fixture)
    return todo


def make_task(fixture: Fixture, bots: dict[int, Bot], config: LeagueConfig, chance_key: bytes | None = None) -> Task:
    files = {}
    specs = []
    for bot_id in fixture.seats:
        bot = bots[bot_id]
        if bot.kind == "file":
            files[bot.content_hash] = (bot.filename or "bot.py", bot.source or "")
            specs.append(f"file:{bot.content_hash}")
        else:
            specs.append(bot.spec or "")
    file_bots = [bots[b] for b in fixture.seats if bots[b].kind == "file"]
    trusted = config.limits.trusted or (bool(file_bots) and all(b.trusted for b in file_bots))
    limits = config.limits.with_(trusted=trusted).to_dict()
    return Task(fixture.key, fixture.game, fixture.round, fixture.seats, tuple(specs),
                tuple(bots[b].label for b in fixture.seats), fixture.seed, limits, config.on_failure, files, chance_key)


def run_league(config: LeagueConfig, *, db: str | os.PathLike[str] | None = None, concurrency: int | None = None,
               backend: str = "local", address: str | None = None,
               progress: Callable[[int, int, Task, dict[str, Any]], None] | None = None) -> RunSummary:
    """Plays (or resumes) a league and returns what this run did.

    Args:
        config: the validated league.
        db: the store (default: the league file's ``database``, else arena.sqlite in the current directory).
        concurrency: games at once (default: the league file's, else the number of cores).
        backend: ``local`` (worker processes) or ``ray``.
        address: the Ray cluster (``ray`` backend; None starts or joins a local instance).
        progress: called after every stored game as ``progress(done, total, task, record)``.
    """
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; valid backends: {', '.join(BACKENDS)}")
    n = concurrency or config.concurrency or os.cpu_count() or 1
    if n < 1:
        raise ConfigError(f"--concurrency must be at least 1, got {n}")
    path = Path(db) if db is not None else (config.database or Path(DEFAULT_DB))
    if backend == "ray":
        from arena.ray_backend import _ray
        _ray()  # a missing Ray is a usage error before anything is written
    started = time.perf_counter()
    store = Store.open(path, create=True)
    try:
        existing = store.league(config.name)
        if existing is not None and existing.config.get("seed", config.seed) != config.seed:
            raise ConfigError(f"league {config.name!r} was played with seed {existing.config['seed']}, the file now "
                              f"says {config.seed}; stored games keep their seeds, so use a new league name or "
                              "database for a new seed")
        league = store.ensure_league(config.name, config.to_dict())
        sync_bots(store, league.id, config)
        bots = {b.id: b for b in store.bots(league.id)}
        fixtures = plan(store, league.id, config)
        scheduled = len(fixtures)
        todo = missing(fixtures, store.sorted_schedule_keys(league.id))
        del fixtures  # a resumed run keeps only what it still has to play
        summary = RunSummary(config.name, path, scheduled=scheduled, already=scheduled - len(todo),
                             probation=[b.label for b in bots.values() if b.status == "probation"])
        store.rate_pending(league.id, before=todo[0].key if todo else None)
        if todo:
            runner = _Writer(store, league.id, config, bots, todo, summary, progress)
            chosen = _make_backend(backend, n, path, address)
            try:
                runner.drain(chosen)
            finally:
                chosen.close()
        store.rate_pending(league.id)
        summary.probation = [b.label for b in store.bots(league.id, include_retired=False) if b.status == "probation"]
    finally:
        store.close()
    summary.elapsed = time.perf_counter() - started
    return summary


class _Writer:
    """Feeds fixtures to a backend and stores what comes back (the one writer)."""

    def __init__(self, store: Store, league_id: int, config: LeagueConfig, bots: dict[int, Bot],
                 todo: list[Fixture], summary: RunSummary,
                 progress: Callable[[int, int, Task, dict[str, Any]], None] | None) -> None:
        self.store, self.league_id, self.config, self.bots = store, league_id, config, bots
        self.todo, self.summary, self.progress = todo, summary, progress
        self.finished: set[str] = set()  # stored, skipped or failed at or past todo[low]: no longer blocks rating
        self.low = 0  # todo[low] is the first fixture that may still be outstanding
        self.on_probation = {b.id for b in bots.values() if b.status == "probation"}
        self.chance_key = store.chance_key(league_id)  # the league's secret: the same for every game and resume

    def tasks(self) -> Iterator[Task]:
        for fixture in self.todo:
            if any(b in self.on_probation for b in fixture.seats):
                self.summary.skipped += 1
                self.finished.add(fixture.key)
                continue
            yield make_task(fixture, self.bots, self.config, self.chance_key)

    def drain(self, backend: Backend) -> None:
        total = len(self.todo)
        for task, result in backend.execute(self.tasks()):
            self.finished.add(task.key)
            if result.get("overloaded"):
                self.summary.overloaded.append(f"{task.key}: {result['error']}")
            elif "error" in result:
                self.summary.errors.append(f"{task.key}: {result['error']}")
            else:
                self.store.record_game(self.league_id, task.key, task.game, task.round, task.seats, result,
                                       probation=ProbationRule.from_config(self.config))
                self.summary.played += 1
                for bot_id in set(task.seats):
                    if bot_id not in self.on_probation and self.store.bot(bot_id).status == "probation":
                        self.on_probation.add(bot_id)
            while self.low < total and self.todo[self.low].key in self.finished:
                self.finished.discard(self.todo[self.low].key)  # behind the frontier: kept flat at 100k games
                self.low += 1
            self.store.rate_pending(self.league_id, before=self.todo[self.low].key if self.low < total else None)
            if self.progress:
                self.progress(self.summary.played + self.summary.skipped + len(self.summary.errors)
                              + len(self.summary.overloaded), total, task,
                              result)


def _make_backend(name: str, concurrency: int, db: Path, address: str | None) -> Backend:
    if name == "ray":
        from arena.ray_backend import RayBackend
        return RayBackend(concurrency=concurrency, address=address)
    return LocalBackend(concurrency, bot_root=str(bot_directory(db)))


def bot_directory(db: str | os.PathLike[str]) -> Path:
    """Where the local backend writes bot files: ``<store>.bots/`` next to the store."""
    db = Path(db)
    return db.with_name(db.name + ".bots")


# -- the local backend ---------------------------------------------------------------------------------
def _worker_cpus(concurrency: int) -> list[int] | None:
    """The CPUs league workers are pinned to, one each in turn: only when there are at least as many
    workers as CPUs (each game then gets one CPU anyway) and ``ARENA_PIN_WORKERS`` is not ``0``.

    A game is a strict ping-pong between the referee and one bot at a time, so one CPU serves it; on
    the same CPU every hand-over is a local wake-up instead of a cross-CPU one (expensive in a VM), and
    one game's bots cannot take CPU time from the game next to it."""
    if os.environ.get("ARENA_PIN_WORKERS", "1") == "0" or not hasattr(os, "sched_getaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return cpus if len(cpus) > 1 and concurrency >= len(cpus) else None


def _worker_init(cpus: list[int] | None = None, counter: Any = None) -> None:
    """Worker processes die with the writer (a SIGKILLed runner leaves no orphans playing on); with ``cpus``
    each pins itself (before its fork server starts, so its bots inherit the CPU) to the next one in turn."""
    try:
        import ctypes
        import signal
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            os._exit(0)
    except (OSError, AttributeError):
        pass
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the writer's to handle
    if cpus and counter is not None:
        with counter.get_lock():
            index = counter.value
            counter.value += 1
        try:
            os.sched_setaffinity(0, {cpus[index % len(cpus)]})
        except OSError:
            pass
    from arena.sandbox.runner import warm_up
    warm_up()  # this worker's own fork server, started once and reused for all its games


class LocalBackend:
    """``concurrency`` worker processes, each playing one game at a time."""

    def __init__(self, concurrency: int, bot_root: str | None = None) -> None:
        import multiprocessing
        self.concurrency = concurrency
        self.bot_root = bot_root
        # spawn: workers are direct children of this process (so PR_SET_PDEATHSIG kills them with it; forkserver
        # children would outlive it) and never a fork of a process holding an open store and threads.
        context = multiprocessing.get_context("spawn")
        cpus = _worker_cpus(concurrency)
        self.pool = ProcessPoolExecutor(max_workers=concurrency, mp_context=context, initializer=_worker_init,
                                        initargs=(cpus, context.Value("i", 0) if cpus else None))

    def execute(self, tasks: Iterator[Task]) -> Iterator[tuple[Task, dict[str, Any]]]:
        from concurrent.futures.process import BrokenProcessPool
        running: dict[Future[dict[str, Any]], Task] = {}
        exhausted = False
        while True:
            while not exhausted and len(running) < self.concurrency:  # a queued game would escape probation
                task = next(tasks, None)
                if task is None:
                    exhausted = True
                    break
                running[self.pool.submit(play_task, task, self.bot_root)] = task
            if not running:
                return
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                task = running.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool:
                    raise ArenaError("a league worker process died; run the same command again to resume") from None
                yield task, result

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def run_tasks(tasks: Iterable[Task], backend: Backend) -> list[tuple[Task, dict[str, Any]]]:
    """Plays tasks without a store (benchmarks, tests)."""
    try:
        return list(backend.execute(iter(tasks)))
    finally:
        backend.close()
