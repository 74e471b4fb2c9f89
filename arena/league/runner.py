"""The league runner: plays a league's schedule on a backend and stores results with one writer.

The writer (this process) is the only one that touches the store. Games run elsewhere: in a pool of
worker processes (``local``, ``--concurrency N`` games at once) or as Ray tasks (``ray``,
:mod:`arena.league.ray_backend`). Each finished game is committed as soon as the writer reads it (games that
finished together share one transaction); a schedule key can be stored only once, so a run that is
killed and started again plays exactly the games that are missing (the ones in flight when it died
included) and counts nothing twice. Ratings are folded in schedule-key order, only up to the first game
still outstanding, so they never depend on the order in which games happened to finish (at most every
:data:`FOLD_EVERY` seconds, and at the end of a run).
"""
from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arena.adapters.comp424 import DEFAULT_AGENT, take_agent
from arena.errors import ConfigError
from arena.league import workers
from arena.league.config import TOURNAMENTS, LeagueConfig
from arena.league.schedule import Fixture, keyed_seed, league_schedule
from arena.league.task import Task, TaskFailure, TaskResult, play_task  # noqa: F401 - Task, play_task: also imported from here
from arena.limits import Limits
from arena.results.records import GameRecord
from arena.sandbox.bot_files import worker_files
from arena.submissions.duplicates import twins, warning
from arena.submissions.snapshot import MB, Snapshot
from arena.submissions.take import take
from arena.tournament.progress import Settings, expected_games, frozen_field, replay, seeded_field
from arena.tournament.progress import batches as progress_batches
from leaderboards import ledger, lock
from leaderboards.probation import ProbationRule
from leaderboards.store import DEFAULT_DB, Bot, Store

BACKENDS = ("local", "ray")


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
    interrupted: str | None = None
    """``SIGINT`` or ``SIGTERM`` when the run was stopped by that signal (the games in flight were abandoned)."""
    abandoned: int = 0
    """Games in flight when the run was stopped: not stored, not counted, played by the next run."""
    in_flight: int = 0
    """Games being played right now (kept live while the run goes: the progress note the dashboard reads)."""
    duplicates: list[str] = field(default_factory=list)
    """One line per bot that entered in this run byte-identical to a bot of another name
    (:mod:`arena.submissions.duplicates`)."""
    writer_cpu: float = 0.0
    """CPU seconds the runner spent storing games and folding ratings (part of its own CPU; ``arena bench
    league``)."""
    waiting: int = 0
    """Scheduled games of bots that entered while the run went on (``arena submit``): a run plays the schedule it
    planned at its start, so these wait for the next run."""
    yielded: bool = False
    """The run stopped starting games because a bot entered (``arena serve``'s passes): the next one plans them."""


class Backend(Protocol):
    def execute(self, tasks: Iterator[Task], tick: float | None = None) -> Iterator[tuple[Task, TaskResult] | None]:
        """Runs tasks (pulled lazily, as slots free up) and yields (task, result) as games finish; with ``tick``,
        also None after every ``tick`` seconds without a result (the writer's chance to make a fold it put off)."""
        ...

    def close(self) -> None: ...


# -- the writer --------------------------------------------------------------------------------------
def take_snapshots(config: LeagueConfig) -> dict[str, Snapshot]:
    """Snapshots of the league file's file bots, by name (taken once, before anything is written).

    Raises:
        ConfigError: a bot over ``limits.max_bot_mb``, without its entry file, or with a symlink inside.
    """
    setting = "max_bot_mb in the league's [limits]"
    return {entry.name: take_agent(entry.file, entry.agent or DEFAULT_AGENT, int(config.limits.max_bot_mb * MB),
                                   setting=setting) if entry.format == "comp424" else
            take(entry.file, entry.entry, int(config.limits.max_bot_mb * MB), setting=setting)
            for entry in config.bots if entry.file is not None}


def sync_bots(store: Store, league_id: int, config: LeagueConfig,
              snapshots: dict[str, Snapshot] | None = None, entered: list[Bot] | None = None) -> list[Bot]:
    """Enters the league file's bots (a changed spec or snapshot becomes a new version) and retires config bots
    that were removed from the file. Submitted bots are left alone. Returns the bots not retired; the new
    versions are appended to ``entered``."""
    snapshots = take_snapshots(config) if snapshots is None else snapshots
    listed = set()
    for entry in config.bots:
        listed.add(entry.name)
        bot, new = store.upsert_bot(league_id, entry.name, origin="config", spec=entry.spec,
                                    snapshot=snapshots.get(entry.name), games=entry.games, trusted=entry.trusted)
        if new and entered is not None:
            entered.append(bot)
    for bot in store.bots(league_id, include_retired=False):
        if bot.origin == "config" and bot.name not in listed:
            store.retire_bot(bot.id, "removed from the league file")
    return store.bots(league_id, include_retired=False)


def enter_field_from(store: Store, league_id: int, source: str) -> list[Bot]:
    """Copies into the tournament the current version of every bot entered into league ``source`` (same store) by
    ``arena submit`` or ``arena serve``: active ones only (a bot on probation fails its games). Their game
    restrictions are the source league's and are not copied (a final may play other games).

    Raises:
        ConfigError: no league ``source`` in this store."""
    other = store.league(source)
    if other is None:
        raise ConfigError(f"field_from = {source!r}: no such league in {store.path}; name a league of the same "
                          "database (its submitted bots enter the tournament)")
    entered = []
    for bot in store.bots(other.id, include_retired=False):
        if bot.origin != "submit" or bot.status != "active":
            continue
        copy, new = store.upsert_bot(league_id, bot.name, origin="submit", spec=bot.spec, trusted=bot.trusted,
                                     snapshot=store.snapshot(bot.id) if bot.kind == "file" else None)
        if new:
            entered.append(copy)
    return entered


def plan(store: Store, league_id: int, config: LeagueConfig) -> list[Fixture]:
    """The league's whole schedule for its active bots (stored games included); a tournament's: the games of its
    current round (its later rounds depend on these)."""
    if config.format in TOURNAMENTS:
        field = frozen_field(store, league_id)
        return [] if field is None else replay(store, league_id, Settings.of(config.to_dict()), field).pending
    active = [b for b in store.bots(league_id, include_retired=False) if b.status == "active"]
    players = {g: [b.id for b in active if b.plays(g)] for g in config.games}
    return league_schedule([(g, config.seats(g)) for g in config.games], players, config.games_per_pairing,
                           config.seed, mode=config.tables,
                           challengers=([b.id for b in active if b.name in config.challengers]
                                        if config.challengers else None))


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


def make_task(fixture: Fixture, bots: dict[int, Bot], config: LeagueConfig, chance_key: bytes | None = None,
              snapshots: dict[int, Snapshot] | None = None, limits: dict[bool, Limits] | None = None,
              keyed: bool = False) -> Task:
    """The task of one fixture; ``snapshots`` holds each file bot's snapshot by bot id, ``limits`` the league's
    limits by ``trusted`` (:func:`task_limits`; computed here when not given); ``keyed``: the game's seed (and so
    its opening) is the fixture's under the chance key (:func:`keyed_seeds`)."""
    seed = keyed_seed(chance_key, fixture.seed) if keyed and chance_key is not None else fixture.seed
    files = {}
    specs = []
    for bot_id in fixture.seats:
        bot = bots[bot_id]
        if bot.kind == "file":
            files[bot.content_hash] = (snapshots or {})[bot_id]
            specs.append(f"file:{bot.content_hash}")
        else:
            specs.append(bot.spec or "")
    file_bots = [bots[b] for b in fixture.seats if bots[b].kind == "file"]
    trusted = config.limits.trusted or (bool(file_bots) and all(b.trusted for b in file_bots))
    return Task(fixture.key, fixture.game, fixture.round, fixture.seats, tuple(specs),
                tuple(bots[b].label for b in fixture.seats), seed, (limits or task_limits(config))[trusted],
                config.on_failure, files, chance_key,
                config.openings.opening(fixture.game, seed, fixture.round) if config.openings else ())


SEEDS_KEYED = {"seeds": "keyed"}
"""Marks a stored league config whose games are seeded under the league's key (:func:`keyed_seeds`)."""


def stored_config(store: Store, config: LeagueConfig) -> dict[str, Any]:
    """The league's config as the store keeps it (:meth:`LeagueConfig.to_dict`), with :data:`SEEDS_KEYED` for a
    league that seeds its games under its key: every league created since, and never one that stored a game
    before (its rounds keep the seeds their first games had: duplicate seeds stay duplicates).

    Raises:
        ConfigError: the league was played with another seed (checked before anything is written, by every caller:
            ``arena league run`` and ``arena serve``)."""
    existing = store.league(config.name)
    if existing is not None and existing.config.get("seed", config.seed) != config.seed:
        raise ConfigError(f"league {config.name!r} was played with seed {existing.config['seed']}, the file now "
                          f"says {config.seed}; stored games keep their seeds, so use a new league name or "
                          "database for a new seed")
    if existing is not None and existing.config.get("format") in TOURNAMENTS and \
            frozen_field(store, existing.id) is not None:
        _check_match_rules(config, existing.config)
    keyed = existing is None or existing.config.get("seeds") == "keyed" or store.count_games(existing.id) == 0
    return config.to_dict() | (SEEDS_KEYED if keyed else {})


MATCH_RULES = ("format", "games", "games_per_pairing", "tournament.tiebreak_games", "tournament.sudden_death",
               "tournament.bracket_reset", "tournament.bye_points")
"""A started tournament's keys that decide its matches: its bracket is replayed from the stored games under them,
so a changed one would decide played matches again (a finished knockout re-crowned). ``rounds`` may grow, and the
limits change what later games allow, not what earlier ones decided."""


def _check_match_rules(config: LeagueConfig, stored: dict[str, Any]) -> None:
    now = config.to_dict()
    for key in MATCH_RULES:
        head, _, sub = key.partition(".")
        old, new = (d.get(head) if not sub else (d.get(head) or {}).get(sub) for d in (stored, now))
        if old is not None and old != new:
            name = sub or head
            raise ConfigError(f"tournament {config.name!r} has started with {name} = {old!r}, the file now says "
                              f"{new!r}; its played matches would be decided again, so use a new league name or "
                              "database (limits may change)")


def keyed_seeds(store: Store, league_id: int) -> bool:
    """Whether the league's games are seeded under its secret key (:func:`stored_config`)."""
    return any(lg.id == league_id and lg.config.get("seeds") == "keyed" for lg in store.leagues())


def task_limits(config: LeagueConfig) -> dict[bool, Limits]:
    """The league's limits as a task carries them, for an untrusted and a trusted table: validated once per run,
    not once per game (a validation costs the writer ~0.1 ms a game); every task shares these objects."""
    return {trusted: config.limits.with_(trusted=trusted) for trusted in (False, True)}


def run_league(config: LeagueConfig, *, db: str | os.PathLike[str] | None = None, concurrency: int | None = None,
               backend: str = "local", address: str | None = None,
               progress: Callable[[int, int, Task, TaskResult], None] | None = None,
               on_start: Callable[[RunSummary], None] | None = None) -> RunSummary:
    """Plays (or resumes) a league and returns what this run did.

    Args:
        config: the validated league.
        db: the store (default: the league file's ``database``, else arena.sqlite in the current directory).
        concurrency: games at once (default: the league file's, else the number of cores).
        backend: ``local`` (worker processes) or ``ray``.
        address: the Ray cluster (``ray`` backend; None starts or joins a local instance).
        progress: called after every stored game as ``progress(done, total, task, record)``.
        on_start: called once the bots are entered and the schedule is known, before any game, with the summary
            so far (``scheduled``, ``already``, ``duplicates``).
    """
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; valid backends: {', '.join(BACKENDS)}")
    asked = concurrency or config.concurrency
    if asked is not None and asked < 1:
        raise ConfigError(f"--concurrency must be at least 1, got {asked}")
    n = asked or (0 if backend == "ray" else os.cpu_count() or 1)  # 0: the Ray cluster's CPUs (RayBackend)
    path = Path(db) if db is not None else (config.database or Path(DEFAULT_DB))
    connection: Any = nullcontext()
    if backend == "ray":  # connected and every node checked before anything is written (docs/ray.md)
        from arena.league.ray_backend import ray_connection  # optional: Ray is an extra, imported only for its backend
        connection = ray_connection(address)
    started = time.perf_counter()
    snapshots = take_snapshots(config)  # every file bot is copied (and its size checked) before anything is written
    summary = RunSummary(config.name, path)
    try:
        # one runner per store (the lock), then the store checked before anything is written (Store.open)
        with _stop_on_signals(), connection, lock.acquire(path), ledger.open_store(path, create=True) as store, \
                worker_files():
            _run(store, config, snapshots, summary, n, backend, address, progress, on_start)
    except Interrupted as stop:  # between games and stores: nothing half-done is left (transactions roll back)
        summary.interrupted = stop.name
    summary.elapsed = time.perf_counter() - started
    return summary


def _run(store: Store, config: LeagueConfig, snapshots: Any, summary: RunSummary, n: int, backend: str,
         address: str | None, progress: Callable[[int, int, Task, TaskResult], None] | None,
         on_start: Callable[[RunSummary], None] | None = None, yield_to: threading.Event | None = None) -> None:
    """run_league's work once the store is locked, checked and open; fills in ``summary``. Once ``yield_to`` is set
    (``arena serve``: a bot was entered) no further game starts: the games in flight are stored and the run ends
    early (``summary.yielded``), so that the next run plans the newcomer's games."""
    league = store.ensure_league(config.name, stored_config(store, config))
    entered: list[Bot] = []
    sync_bots(store, league.id, config, snapshots, entered)
    if config.tournament.get("field_from") and frozen_field(store, league.id) is None:
        entered += enter_field_from(store, league.id, config.tournament["field_from"])
    del snapshots  # the store keeps them now; the writer loads the ones it plays
    bots = {b.id: b for b in store.bots(league.id)}
    batches: Iterator[list[Fixture]] | None = None
    if config.format in TOURNAMENTS:  # round after round, each decided by the last (arena.tournament)
        batches = tournament_batches(store, league.id, config)
        todo = next(batches, [])
        stored_games = store.count_games(league.id)
        field = frozen_field(store, league.id) or []
        scheduled = max(stored_games + len(todo),
                        expected_games(Settings.of(config.to_dict()), len(field)) if todo else stored_games)
        already = stored_games
    else:
        fixtures = plan(store, league.id, config)
        scheduled = len(fixtures)
        todo = missing(fixtures, store.sorted_schedule_keys(league.id))
        del fixtures  # a resumed run keeps only what it still has to play
        already = scheduled - len(todo)
    summary.scheduled, summary.already = scheduled, already
    summary.probation = [b.label for b in bots.values() if b.status == "probation"]
    ledger.rate_pending(store, league.id, before=todo[0].key if todo else None)
    if on_start is not None:  # the progress shows done/total from the start, not after the first game
        everyone = list(bots.values())
        summary.duplicates = [warning(b, same) for b in entered if (same := twins(b, everyone, store.snapshot))]
        on_start(summary)
    # batch after batch where the ranking is least certain (arena.league.adaptive)
    if config.schedule == "adaptive" and todo:
        # start-up: only for adaptive schedules
        from arena.league.adaptive import league_batches
        batches = league_batches(store, league.id, config, todo)
        todo = next(batches, [])
    stored = store.count_games(league.id)  # (before every batch: played counts them all)
    # One backend for the whole league, adaptive batches included: its workers start once and, on Ray, each bot
    # snapshot is put into the object store once.
    chosen = _make_backend(backend, n, summary.database, address) if todo else None
    try:
        while todo:
            runner = _Writer(store, league.id, config, bots, todo, summary, progress, yield_to,
                             skip_probation=config.format not in TOURNAMENTS)
            assert chosen is not None  # made above whenever there is a batch to play
            try:
                runner.drain(chosen)
            except Interrupted as stop:
                summary.interrupted = stop.name
            summary.abandoned = runner.in_flight
            summary.writer_cpu += runner.writer_cpu
            # exact even if a signal fell between a commit and its count: only this runner stores games (the lock)
            summary.played = store.count_games(league.id) - stored
            if summary.interrupted:  # stop now: the ratings are folded up to the first missing game already
                return
            # after a yield no later batch: it would be decided (and stored) from games never played
            todo = next(batches, []) if batches is not None and not summary.yielded else []
            if config.format in TOURNAMENTS:  # tie-breaks and sudden death add games the first count could not know
                summary.scheduled = max(summary.scheduled, store.count_games(league.id) + len(todo))
    finally:
        if chosen is not None:
            chosen.close()  # within workers.STOP_GRACE: games still in flight are abandoned
    ledger.rate_pending(store, league.id)
    summary.probation = [b.label for b in store.bots(league.id, include_retired=False) if b.status == "probation"]
    summary.waiting = waiting_games(store, league.id, config, set(bots))


def tournament_batches(store: Store, league_id: int, config: LeagueConfig) -> Iterator[list[Fixture]]:
    """A tournament's batches (:func:`arena.tournament.progress.batches`): its field seeded as the league file says
    when it starts, frozen after."""
    settings = Settings.of(stored_config(store, config))
    t = config.tournament
    return progress_batches(store, league_id, settings, lambda: seeded_field(
        store, league_id, [b.name for b in config.bots], t["seeding"], t["seeding_league"]))


def waiting_games(store: Store, league_id: int, config: LeagueConfig, planned: set[int]) -> int:
    """Unplayed scheduled games with a bot outside ``planned`` (the bots a run planned for at its start): the games
    of bots submitted during that run, which the next run plays."""
    todo = missing(plan(store, league_id, config), store.sorted_schedule_keys(league_id))
    return sum(any(b not in planned for b in f.seats) for f in todo)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM reached the league runner."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.name = signal.Signals(signum).name


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the runner (main thread only); once one arrived, further
    ones are ignored so that the stop itself (a few seconds at most) is not cut short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)
        raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


_NOT_YET = object()
_clock = time.monotonic  # (the writer's clock for folds: tests pace results without waiting)
FOLD_EVERY = 1.0
"""Seconds between two rating folds while games are stored: a fold reads and writes the ratings of every bot it
touches (~2 ms of the writer's CPU whatever the games in it), so one fold for a few dozen games costs the writer
little more than one for a single game; at 0.25 s a league of slow games (a loaded 2-core machine: ~12 games/s)
folded every 3 games and the fold was a third of the runner's own CPU. The games
stored meanwhile stay unrated (as after a kill: the next fold or run rates them) until the next result or, when
none comes, until the backend wakes the writer FOLD_EVERY later (its ``tick``): the leaderboard is never more than
about two seconds behind. The last game of a run is always folded: the ratings at the end equal a schedule-order
recomputation."""


class _Writer:
    """Feeds fixtures to a backend and stores what comes back (the one writer)."""

    def __init__(self, store: Store, league_id: int, config: LeagueConfig, bots: dict[int, Bot],
                 todo: list[Fixture], summary: RunSummary,
                 progress: Callable[[int, int, Task, TaskResult], None] | None,
                 yield_to: threading.Event | None = None, skip_probation: bool = True) -> None:
        self.store, self.league_id, self.config, self.bots = store, league_id, config, bots
        self.skip_probation = skip_probation
        """A bot on probation plays no game (a tournament's matches are played out: a failed game is lost)."""
        self.yield_to = yield_to
        self.todo, self.summary, self.progress = todo, summary, progress
        self.finished: set[str] = set()  # stored, skipped or failed at or past todo[low]: no longer blocks rating
        self.low = 0  # todo[low] is the first fixture that may still be outstanding
        self.on_probation = {b.id for b in bots.values() if b.status == "probation"}
        self.chance_key = store.chance_key(league_id)  # the league's secret: the same for every game and resume
        self.keyed = keyed_seeds(store, league_id)
        self.snapshots: dict[int, Snapshot] = {}
        self.in_flight = 0  # handed to the backend, no result yet: what a stop abandons
        self.limits = task_limits(config)
        self.rule = ProbationRule.from_config(config)
        self.rated_below: object = _NOT_YET  # the ``before`` of the last rating fold
        self.folded_at = float("-inf")
        self.before: str | None = None  # the first game still outstanding, as of the last stored result
        self.writer_cpu = 0.0
        """CPU seconds this writer spent storing games and folding ratings (``arena bench league`` reads it)."""

    def tasks(self) -> Iterator[Task]:
        for fixture in self.todo:
            if self.yield_to is not None and self.yield_to.is_set():
                self.summary.yielded = True  # (the backend finishes what it was given; nothing more starts)
                return
            if self.skip_probation and any(b in self.on_probation for b in fixture.seats):
                self.summary.skipped += 1
                self.finished.add(fixture.key)
                continue
            self.in_flight += 1
            self.summary.in_flight = self.in_flight
            yield make_task(fixture, self.bots, self.config, self.chance_key, self.snapshots_of(fixture.seats),
                            self.limits, self.keyed)

    def snapshots_of(self, seats: tuple[int, ...]) -> dict[int, Snapshot]:
        """The snapshots of the file bots among ``seats`` (each read from the store once)."""
        for bot_id in seats:
            if bot_id not in self.snapshots and self.bots[bot_id].kind == "file":
                self.snapshots[bot_id] = self.store.snapshot(bot_id)
        return self.snapshots

    def drain(self, backend: Backend) -> None:
        total = len(self.todo)
        batch: list[tuple[Task, TaskResult]] = []  # stored in the open transaction, not yet committed
        tx: Any = None
        try:
            for item in backend.execute(self.tasks(), tick=FOLD_EVERY):
                if item is None:  # no result for FOLD_EVERY: a fold put off is made now (nothing is open: the
                    if self.before != self.rated_below and tx is None:  # last result was committed)
                        with self.store.transaction():
                            self._fold(self.before)
                    continue
                task, result = item
                if tx is None:
                    tx = self.store.transaction()
                    tx.__enter__()
                started = time.thread_time()
                self.finished.add(task.key)
                if isinstance(result, TaskFailure):
                    (self.summary.overloaded if result.overloaded else self.summary.errors).append(
                        f"{task.key}: {result.error}")
                else:
                    self._store(task, result, getattr(backend, "columns", {}).pop(task.key, None))
                batch.append((task, result))
                while self.low < total and self.todo[self.low].key in self.finished:
                    self.finished.discard(self.todo[self.low].key)  # behind the frontier: kept flat at 100k games
                    self.low += 1
                before = self.before = self.todo[self.low].key if self.low < total else None
                if getattr(backend, "ready", 0):  # more results already waiting: they join this transaction
                    self.writer_cpu += time.thread_time() - started
                    continue
                self._fold(before)
                tx, done = None, tx
                done.__exit__(None, None, None)  # the commit: these games and the ratings they made final
                self.writer_cpu += time.thread_time() - started
                self.in_flight -= len(batch)  # (after the commit: a stop before it abandons these games too)
                self.summary.in_flight = self.in_flight
                for task, result in batch:
                    if self.progress:
                        self.progress(self.summary.played + self.summary.skipped + len(self.summary.errors)
                                      + len(self.summary.overloaded), total, task, result)
                batch = []
        finally:
            if tx is not None:  # a stop (or an error) between a batch's games: none of them is stored
                tx.__exit__(Interrupted, None, None)

    def _fold(self, before: str | None) -> None:
        """Folds the ratings up to ``before`` (the first game still outstanding) when that moved and the last fold
        is at least :data:`FOLD_EVERY` old, or when nothing is outstanding (inside the caller's transaction)."""
        now = _clock()
        if before != self.rated_below and (before is None or now - self.folded_at >= FOLD_EVERY):
            ledger.rate_pending(self.store, self.league_id, before=before)
            self.rated_below, self.folded_at = before, now

    def _store(self, task: Task, result: GameRecord, columns: tuple[str, ...] | None = None) -> None:
        """Stores one game (inside the caller's transaction) and notes which of its bots went on probation. The
        record is the one the backend decoded; ``columns``, its JSON text as the worker encoded it (the local
        backend), is inserted as it is."""
        ledger.record_game(self.store, self.league_id, task.key, task.game, task.round, task.seats, result,
                           probation=self.rule, columns=columns)
        self.summary.played += 1
        for seat, bot_id in enumerate(task.seats):
            # only a failed seat can put its bot on probation: the others are not read back
            if bot_id not in self.on_probation and ledger.seat_failures(result, seat) \
                    and self.store.bot(bot_id).status == "probation":
                self.on_probation.add(bot_id)


def _make_backend(name: str, concurrency: int, db: Path, address: str | None) -> Backend:
    if name == "ray":  # (run_league connected already; concurrency 0: the cluster's CPUs)
        from arena.league.ray_backend import RayBackend  # optional: ray
        return RayBackend(concurrency=concurrency or None, address=address)
    return workers.LocalBackend(concurrency)


def run_tasks(tasks: Iterable[Task], backend: Backend) -> list[tuple[Task, TaskResult]]:
    """Plays tasks without a store (benchmarks, tests)."""
    try:
        return [item for item in backend.execute(iter(tasks)) if item is not None]  # (no tick: never None)
    finally:
        backend.close()
