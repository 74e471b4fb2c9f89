"""The Ray backend: games run as Ray tasks on a cluster; results stream back to the one writer
(:mod:`arena.league.runner`, through :mod:`arena.league.backends`).

A task carries a batch of games (game spec, seed, limits, built-in specs) and the ObjectRefs of the bot
snapshots they need: each snapshot is put into Ray's object store once per league, fetched by the node that
runs the task, checked against its digest there (:func:`arena.submissions.snapshot.unpack`) and written into a private
directory of the task (:func:`arena.sandbox.bot_files.scoped_root`), removed when the task ends; the refs are dropped
(and Ray frees the objects) when the league ends. Every game goes through the same referee and sandbox as
on the local backend, so the same league file, seeds and chance key give the same games.

Faults: a task lost to a dead worker or node, or one that outlives its games' time bound (a hung worker),
is submitted again, at most ``retries`` times; a game still lost then is reported as an error (the next run
plays it). The store keeps each schedule key once, so a game played twice is stored once.

Every worker checks that it runs the driver's arena (:func:`identity`: version and a hash of the installed
code); a node that does not is refused before any game, naming both.

``ray`` is an optional extra: ``pip install "arena[ray]"``. Every node needs the same arena installed
(docs/ray.md).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import math
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import arena
import games
from arena.errors import ArenaError, ConfigError
from arena.league.task import Task, TaskFailure, TaskResult, decode_result, encode_result, play_task
from arena.sandbox.bot_files import scoped_root
from arena.submissions.snapshot import pack, unpack

RETRIES = 2
"""Times a game lost to a worker or node failure (or a hung task) is submitted again before it is given up."""
START_SLACK = 30.0
"""Seconds a task may take beyond its games' own time bound: a worker's start-up, fetching the snapshots and
starting the sandbox's fork server."""
_PACKAGES = ("arena", "games", "bots", "leaderboards")
_BUILD_SUFFIXES = (".py", ".pyx", ".pxd", ".so", ".toml", ".tcss", ".txt")


class RayConnectionError(ArenaError):
    """The driver could not connect to (or start) Ray: nothing was written."""


class VersionSkewError(ArenaError):
    """A worker node runs another arena than the driver."""


def _ray() -> Any:
    try:
        import ray  # optional: ray
    except ImportError:
        raise ConfigError('the ray backend needs Ray: pip install "arena[ray]" (or "ray[default]")') from None
    return ray


# -- which arena is this? --------------------------------------------------------------------------------
@functools.cache
def identity() -> tuple[str, str]:
    """(version, build) of the arena this process imports: the version with the Python it runs on, and a hash
    of every source and compiled module of arena's packages (computed once per process)."""
    digest = hashlib.sha256()
    for package in _PACKAGES:
        top = Path(str(__import__(package).__file__)).parent
        for path in sorted(top.rglob("*")):
            if path.suffix in _BUILD_SUFFIXES and "__pycache__" not in path.parts and path.is_file():
                digest.update(f"{package}/{path.relative_to(top).as_posix()}\0".encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return (f"{arena.__version__} (Python {sys.version_info[0]}.{sys.version_info[1]})", digest.hexdigest()[:16])


def skew(worker: tuple[str, str], driver: tuple[str, str], where: str) -> str | None:
    """The refusal of a worker (at ``where``) that runs another arena than the driver, or None."""
    if tuple(worker) == tuple(driver):
        return None
    return (f"{where} runs arena {worker[0]} build {worker[1]}, the driver runs arena {driver[0]} build {driver[1]}: "
            "install the same arena on every node (docs/ray.md, 'What every node needs')")


def _node_identity() -> tuple[tuple[str, str], str]:
    """Runs on a worker: its identity and where it runs."""
    return identity(), socket.gethostname()


# -- connecting ------------------------------------------------------------------------------------------
def _token_auth() -> None:
    """Ray (2.52+) turns token authentication on by itself only when it finds a local cluster; for an explicit
    address it stays off unless RAY_AUTH_MODE=token. So with a token at hand (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH
    or ~/.ray/auth_token) and no RAY_AUTH_MODE, the token is sent: a cluster without authentication ignores it."""
    if "RAY_AUTH_MODE" in os.environ:
        return
    try:
        # optional: ray
        from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available
    except ImportError:  # a Ray without token authentication
        return
    quiet = logging.getLogger("ray._private.authentication.authentication_token_setup")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # ("token authentication is enabled": what the user asked for)
    try:
        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    finally:
        quiet.setLevel(level)


@contextmanager
def _neutral_cwd() -> Iterator[None]:
    """Ray adds the driver's working directory to every worker's sys.path; a league directory holds bot files
    (``bots/``, or a bot named like a module arena imports), so the driver connects from ``/`` instead."""
    here = os.getcwd()
    os.chdir("/")
    try:
        yield
    finally:
        os.chdir(here)


def _reachable(target: str | None) -> None:
    """A ``HOST:PORT`` that accepts no connection fails here in seconds (Ray itself retries for many minutes)."""
    if not target or target in ("auto", "local") or "://" in target or ":" not in target:
        return
    host, _, port = target.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except ValueError:
        raise ConnectionError(f"{target!r} is not HOST:PORT") from None
    except OSError as exc:
        raise ConnectionError(f"nothing answers at {target} ({exc.strerror or exc})") from None


def connect(address: str | None) -> bool:
    """Connects this process to Ray: ``address`` (``HOST:PORT``, ``auto`` or ``ray://...``), else
    ``$RAY_ADDRESS``, else a running local cluster, else a new local instance. True when it called ray.init.

    Raises:
        RayConnectionError: one line saying what failed and what to check.
    """
    ray = _ray()
    if ray.is_initialized():
        return False
    target = address or os.environ.get("RAY_ADDRESS") or None
    _token_auth()
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
    if target:
        kwargs["address"] = target  # an existing cluster: its resources are its own (no num_cpus)
    try:
        _reachable(target)
        with _neutral_cwd():
            ray.init(**kwargs)
    except Exception as exc:  # noqa: BLE001 - ConnectionError, AuthenticationError, RuntimeError, ValueError...
        detail = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise RayConnectionError(
            f"cannot connect to Ray at {target or 'a local instance'}: {type(exc).__name__}: {detail}; check "
            "--address or RAY_ADDRESS and that the cluster is up (token authentication: RAY_AUTH_TOKEN or "
            "~/.ray/auth_token on this machine, docs/ray.md)") from None
    return True


@contextmanager
def ray_connection(address: str | None) -> Iterator[None]:
    """Connected to Ray with every node checked (:func:`check_nodes`) for the block; disconnected after it if this
    call connected. run_league enters it before the store is opened: a failure writes nothing."""
    ray = _ray()
    started = connect(address)
    try:
        check_nodes(ray)
        yield
    finally:
        if started:
            ray.shutdown()


def check_nodes(ray: Any) -> None:
    """Every alive node runs the driver's arena (one small task pinned to each, no CPU needed).

    Raises:
        VersionSkewError: naming the node, its version and build, and the driver's.
    """
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # optional: ray
    probe = ray.remote(num_cpus=0, max_retries=1)(_node_identity)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    refs = [probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote()
            for n in nodes]
    for node, ref in zip(nodes, refs):
        where = f"Ray node {node.get('NodeManagerAddress')}"
        try:
            theirs, host = ray.get(ref, timeout=300)
        except Exception as exc:  # noqa: BLE001 - arena missing there, or the node died meanwhile
            if not any(n["NodeID"] == node["NodeID"] and n.get("Alive") for n in ray.nodes()):
                continue
            raise VersionSkewError(f"{where} cannot run arena ({_why(exc)}); install the driver's arena "
                                   f"{' build '.join(identity())} there (docs/ray.md)") from None
        problem = skew(theirs, identity(), f"{where} ({host})")
        if problem:
            raise VersionSkewError(problem)


# -- the backend -----------------------------------------------------------------------------------------
class RayBackend:
    """Keeps ``concurrency`` Ray tasks (one CPU each, ``batch`` games each) in flight."""

    def __init__(self, concurrency: int | None = None, address: str | None = None, *, retries: int = RETRIES,
                 batch: int = 1, start_slack: float = START_SLACK) -> None:
        self.ray = _ray()
        self.started = connect(address)  # False inside run_league's ray_connection (or a caller's ray.init)
        self.refs: dict[str, Any] = {}
        try:
            if self.started:
                check_nodes(self.ray)
            self.cpus = int(self.ray.cluster_resources().get("CPU", 0))
        except BaseException:
            self.close()
            raise
        self.concurrency = concurrency or max(self.cpus, 1)
        # Tasks queued beyond the CPUs start the moment a game ends (no round trip to the driver in between); only
        # when the cluster cannot run more than `concurrency` games at once anyway.
        self.queued = self.concurrency if self.concurrency >= self.cpus else 0
        self.retries, self.batch, self.start_slack = retries, max(batch, 1), start_slack
        self.remote = self.ray.remote(num_cpus=1, max_retries=0)(_play_remote)
        self.lost: list[str] = []
        """Why each lost batch was lost (it was played again, or given up: ``gave_up``)."""
        self.gave_up: list[str] = []
        self.ready = 0  # (:class:`arena.league.backends.Backend`: a batch's results are yielded one at a time)
        self.columns: dict[str, tuple[str, ...]] = {}  # (records only: the writer encodes them for the store)

    def execute(self, tasks: Iterator[Task], tick: float | None = None) -> Iterator[tuple[Task, TaskResult] | None]:
        """See :class:`arena.league.backends.Backend`: batches of games as Ray tasks, a hung one played again."""
        running: dict[Any, tuple[list[Task], int, float | None]] = {}  # ref -> (batch, attempt, deadline)
        retry: list[tuple[list[Task], int]] = []
        exhausted = False
        while True:
            while len(running) < self.concurrency + self.queued and (retry or not exhausted):
                if retry:
                    games, attempt = retry.pop(0)
                else:
                    games = [t for t in (next(tasks, None) for _ in range(self.batch)) if t is not None]
                    exhausted = len(games) < self.batch
                    attempt = 0
                    if not games:
                        break
                running[self._submit(games)] = (games, attempt, self._deadline(games))
            if not running:
                return
            deadlines = [d for _, _, d in running.values() if d is not None]
            wait = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            if tick is not None:
                wait = tick if wait is None else min(wait, tick)
            ready, _ = self.ray.wait(list(running), num_returns=1, timeout=wait)
            now = time.monotonic()
            late = [r for r, (_, _, d) in running.items() if d is not None and d <= now and r not in ready]
            if not ready and not late:  # ``tick`` seconds without a result
                yield None
                continue
            for ref in late:  # hung (a frozen worker, a lost node not yet declared dead): stopped and played again
                games, attempt, _ = running.pop(ref)
                self.ray.cancel(ref, force=True)
                yield from self._lost(games, attempt, f"no result after {self._bound(games):.0f} s", retry)
            for ref in ready:
                games, attempt, _ = running.pop(ref)
                try:
                    results = self.ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - a lost worker or node: the batch is played again
                    yield from self._lost(games, attempt, _why(exc), retry)
                    continue
                if isinstance(results, str):  # the worker refused: another arena than ours
                    raise VersionSkewError(results)
                yield from zip(games, map(decode_result, results))

    def _lost(self, games: list[Task], attempt: int, why: str, retry: list[tuple[list[Task], int]]
              ) -> Iterator[tuple[Task, TaskResult]]:
        self.lost.append(why)
        if attempt < self.retries:
            retry.append((games, attempt + 1))
            return
        for task in games:
            message = (f"lost on Ray {attempt + 1} times, given up (last: {why}); the next run plays it")
            self.gave_up.append(f"{task.key}: {message}")
            yield task, TaskFailure(message)

    def _submit(self, games: list[Task]) -> Any:
        """Submits one batch: tasks without their snapshots, and the snapshots' refs as arguments (Ray fetches them
        to the node that runs the task)."""
        digests: list[str] = []
        for task in games:
            for digest, snapshot in task.files.items():
                if digest not in self.refs:
                    self.refs[digest] = self.ray.put(pack(snapshot))  # once per league
                if digest not in digests:
                    digests.append(digest)
        # the snapshots travel apart (each put into the object store once); the remote side fills them back in
        bare = [dataclasses.replace(t, files=dict.fromkeys(t.files, None)) for t in games]  # type: ignore[arg-type]
        return self.remote.remote(identity(), bare, digests, *(self.refs[d] for d in digests))

    def _bound(self, games: list[Task]) -> float:
        """A batch's time bound from its submission: its games', twice when it may wait behind a running batch."""
        return self.start_slack + (2 if self.queued else 1) * sum(game_bound(t) for t in games)

    def _deadline(self, games: list[Task]) -> float | None:
        bound = self._bound(games)
        return None if math.isinf(bound) else time.monotonic() + bound

    def close(self) -> None:
        self.refs.clear()  # the league's snapshots leave the object store with their last ref
        if self.started:
            self.started = False
            self.ray.shutdown()


def _why(exc: BaseException) -> str:
    """One line for a Ray error: the exception a task raised (not Ray's wrapper), else Ray's own."""
    cause = getattr(exc, "cause", None) or exc
    return f"{type(cause).__name__}: {(str(cause).splitlines() or [''])[0]}"


def game_bound(task: Task) -> float:
    """Seconds one game may take at most: each seat's first move, then the game's longest play at the move time
    (twice over for the referee's own work), and never much more than the game's wall-clock bound (the referee
    ends a game at ``max_game_seconds``; one move and the bots' start-up may follow); infinite without time limits."""
    limits = task.limits
    if limits.debug:
        return math.inf
    moves = limits.max_moves or _max_moves(task.game)
    clock = limits.game_seconds(len(task.seats), moves)
    by_clock = math.inf if clock is None else clock + len(task.seats) * limits.startup_time() + 60
    if moves is None:
        return by_clock
    return min(by_clock, limits.moves_seconds(len(task.seats), moves))


@functools.lru_cache(maxsize=256)
def _max_moves(spec: str) -> int | None:
    try:
        return int(games.load(spec).max_game_length())
    except NotImplementedError:
        return None


def _play_remote(driver: tuple[str, str], games: list[Task], digests: list[str], *blobs: bytes
                 ) -> list[dict[str, Any]] | str:
    """One batch of games on a Ray worker (a refusal string if it runs another arena than the driver). Each
    snapshot is checked against its digest and written into a private directory of this task (never a path derived
    from the worker's or the driver's directory), removed when the task ends: a long-lived worker keeps nothing."""
    problem = skew(identity(), driver, f"Ray worker on {socket.gethostname()}")
    if problem:
        return problem
    snapshots = {d: unpack(blob, d) for d, blob in zip(digests, blobs)}  # SnapshotError on a digest mismatch
    with scoped_root() if snapshots else nullcontext():  # (a root costs ~3 ms, its rmdir most: only for file bots)
        return [encode_result(play_task(dataclasses.replace(t, files={d: snapshots[d] for d in t.files})))
                for t in games]
