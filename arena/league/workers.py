"""The local backend of the league runner: ``concurrency`` worker processes, each playing one game at a time.

Each worker is a fresh interpreter started by the writer (a direct child, in its process group) that reads
tasks from one pipe and writes results to another, one length-prefixed pickle frame each way. Both ends are
arena's own code (a bot never writes to these pipes; its messages are JSON that the referee parses). There
are no multiprocessing queues or locks, so nothing is registered with multiprocessing's resource tracker: a
SIGKILLed runner leaves no "leaked semaphore" warnings (a ProcessPoolExecutor's locks do), and the writer can
stop every worker at once.

A task's bot snapshots travel to a worker once: the writer keeps, per worker, which snapshots it holds
(:class:`_SnapshotCache`, the least recently used dropped past :data:`SNAPSHOT_CACHE_BYTES`) and sends each
task without the ones it has. The worker still checks every snapshot against its digest before a bot runs it.

Lifetimes and stopping:

- A worker dies with the writer (``PR_SET_PDEATHSIG``, SIGTERM), its fork server with it, each bot with the
  fork server.
- SIGTERM: a worker kills the cgroups of its bots and exits at once. The game it was playing is abandoned:
  never stored, so the next run replays it.
- SIGINT is ignored by workers (and so by their fork servers and bots, which inherit that through ``exec``): a
  Ctrl-C reaches the whole foreground process group, and the writer answers it by closing the pool (below),
  so one Ctrl-C gives one orderly stop instead of a KeyboardInterrupt traceback from every fork server.
- :meth:`LocalBackend.close`: idle workers read end-of-file and exit; busy ones get SIGTERM; whatever is still
  alive after :data:`STOP_GRACE` seconds gets SIGKILL.
"""
from __future__ import annotations

import dataclasses
import os
import pickle
import select
import selectors
import signal
import struct
import subprocess
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from arena.errors import ArenaError
from arena.league.task import decode_result, encode_result, play_task, stored_columns

if TYPE_CHECKING:
    from arena.league.task import Task, TaskResult
    from arena.submissions.snapshot import Snapshot

STOP_GRACE = 2.0
"""Seconds a busy worker gets to kill its bots and exit after SIGTERM before it is SIGKILLed."""
_HEADER = struct.Struct("!Q")


# -- frames ------------------------------------------------------------------------------------------------
def _write_frame(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int) -> Any:
    """The next object, or None at end-of-file (the other side closed or died)."""
    head = _read_exact(fd, _HEADER.size)
    if head is None:
        return None
    data = _read_exact(fd, _HEADER.unpack(head)[0])
    return None if data is None else pickle.loads(data)  # noqa: S301 - written by arena's own writer/worker


# -- the worker process --------------------------------------------------------------------------------------
def worker_cpus(concurrency: int) -> list[int] | None:
    """The CPUs league workers are pinned to, one each in turn: only when there are at least as many
    workers as CPUs (each game then gets one CPU anyway) and ``ARENA_PIN_WORKERS`` is not ``0``.

    A game is a strict ping-pong between the referee and one bot at a time, so one CPU serves it; on
    the same CPU every hand-over is a local wake-up instead of a cross-CPU one (expensive in a VM), and
    one game's bots cannot take CPU time from the game next to it."""
    if os.environ.get("ARENA_PIN_WORKERS", "1") == "0" or not hasattr(os, "sched_getaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return cpus if len(cpus) > 1 and concurrency >= len(cpus) else None


def kill_own_bots() -> None:
    """Kills every bot process this worker started: each bot's cgroup (``bot-<this pid>-<n>``) is killed whole
    (``cgroup.kill``; SIGKILL to each member on cgroup v1). Bots outside a cgroup die with the fork server."""
    from arena.sandbox import cgroups  # start-up: the writer never loads the sandbox, only its workers
    try:
        groups = cgroups.groups_of(os.getpid())
    except OSError:
        return
    for group in groups:
        try:
            if os.path.exists(os.path.join(group, "cgroup.kill")):
                with open(os.path.join(group, "cgroup.kill"), "w") as fh:
                    fh.write("1")
                continue
            with open(os.path.join(group, "cgroup.procs")) as fh:
                pids = [int(p) for p in fh.read().split()]
        except OSError:
            continue
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _stop(signum: int, frame: object) -> None:
    """SIGTERM in a worker: its bots die now, the game is abandoned, the worker exits."""
    kill_own_bots()
    os._exit(128 + signum)


def worker_init(cpus: list[int] | None = None, index: int = 0) -> None:
    """A worker dies with the writer (a SIGKILLed runner leaves no orphans playing on), stops at once on SIGTERM
    and leaves SIGINT to the writer; with ``cpus`` it pins itself (before its fork server starts, so its bots inherit
    the CPU)
    to ``cpus[index % len(cpus)]``."""
    try:
        import ctypes  # start-up: workers only
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: SIGTERM, so the worker kills its bots on the way out
        if os.getppid() == 1:
            os._exit(0)
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the writer's to handle (see the module docstring)
    signal.signal(signal.SIGTERM, _stop)
    if cpus:
        try:
            os.sched_setaffinity(0, {cpus[index % len(cpus)]})
        except OSError:
            pass
    from arena.sandbox.launcher import warm_up  # start-up: workers only
    warm_up()  # this worker's own fork server, started once and reused for all its games


def worker_main(task_fd: int, result_fd: int, cpus: list[int] | None, index: int) -> None:
    """A worker's life: play each task that arrives, send its result back, exit at end-of-file."""
    worker_init(cpus, index)
    from arena.sandbox.proxy import finish_closing  # start-up: workers only
    snapshots: dict[str, Snapshot] = {}  # digest -> snapshot, kept as the writer says (_SnapshotCache)
    while True:
        frame = _read_frame(task_fd)
        if frame is None:
            break
        task, new, drop = frame
        for digest in drop:
            snapshots.pop(digest, None)
        snapshots.update(new)
        # (each snapshot is still checked against its digest before it is written for a bot: arena.submissions.snapshot)
        task = dataclasses.replace(task, files={b[5:]: snapshots[b[5:]] for b in task.bots if b.startswith("file:")})
        # plain data in the record's schema, with the store's JSON text of it: encoded here, not by the one writer
        _write_frame(result_fd, encode_result(play_task(task, close_later=True), columns=True))
        # The game's bots end while the writer stores the result and the next game's bots are set up; that game
        # cleans up after them before its own bots load. A worker left without a task cleans up at once.
        if not select.select([task_fd], [], [], IDLE_CLEAN_UP)[0]:
            finish_closing()
    finish_closing()
    os._exit(0)  # no interpreter shutdown: nothing to flush, and the fork server's thread must not be waited for


IDLE_CLEAN_UP = 0.05
"""Seconds a worker waits for its next task before it cleans up after its last game's bots itself (a busy worker's
next game does it, overlapped with its own bots' set-up)."""

SNAPSHOT_CACHE_BYTES = 64 << 20
"""Bytes of bot snapshots a worker keeps between games (the least recently used go first)."""


class _SnapshotCache:
    """The writer's copy of what one worker keeps: each snapshot travels to a worker once, not with every task
    (a bot file may be up to ``max_bot_mb``, pickled and unpickled once per game otherwise)."""

    def __init__(self) -> None:
        self.held: OrderedDict[str, int] = OrderedDict()  # digest -> bytes, least recently used first
        self.bytes = 0

    def frame(self, task: Task) -> tuple[Task, dict[str, Snapshot], list[str]]:
        """What the worker is sent for ``task``: the task without its files, the snapshots it lacks, and those it
        should drop to stay within :data:`SNAPSHOT_CACHE_BYTES`."""
        new = {}
        for digest, snapshot in task.files.items():
            if digest in self.held:
                self.held.move_to_end(digest)
            else:
                new[digest] = snapshot
                self.held[digest] = snapshot.size
                self.bytes += snapshot.size
        drop = []
        for digest in list(self.held):
            if self.bytes <= SNAPSHOT_CACHE_BYTES:
                break
            if digest not in task.files:  # (this task's own stay, even past the budget)
                self.bytes -= self.held.pop(digest)
                drop.append(digest)
        return dataclasses.replace(task, files={}), new, drop


# -- the writer's side ------------------------------------------------------------------------------------
class _Worker:
    def __init__(self, index: int, cpus: list[int] | None) -> None:
        task_r, self.task_w = os.pipe()
        try:
            self.result_r, result_w = os.pipe()
        except OSError:  # (out of open files: none of this worker's is left open)
            os.close(task_r)
            os.close(self.task_w)
            raise
        program = (f"import sys; sys.path[0:0] = {[p for p in sys.path if p]!r}; from arena.league.workers import "
                   f"worker_main; worker_main({task_r}, {result_w}, {cpus!r}, {index})")
        try:
            self.proc = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.DEVNULL,
                                         pass_fds=(task_r, result_w))
        except BaseException:
            os.close(self.task_w)
            os.close(self.result_r)
            raise
        finally:
            os.close(task_r)
            os.close(result_w)
        self.snapshots = _SnapshotCache()

    def close_tasks(self) -> None:
        if self.task_w >= 0:
            os.close(self.task_w)
            self.task_w = -1


class LocalBackend:
    """``concurrency`` worker processes, each playing one game at a time."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        cpus = worker_cpus(concurrency)
        self.workers: list[_Worker] = []
        self.busy: dict[int, tuple[_Worker, Task]] = {}
        """result fd -> (worker, the task it is playing)."""
        self.ready = 0
        """Results already known to be waiting after the one just yielded: the writer stores them in the same
        transaction (one commit for games that finished together)."""
        self.columns: dict[str, tuple[str, ...]] = {}
        """Schedule key -> the store's JSON text of the record just yielded, as its worker encoded it (the writer
        pops it and inserts it as it is)."""
        try:
            for i in range(concurrency):
                self.workers.append(_Worker(i, cpus))
        except BaseException:
            self.close()
            raise

    def execute(self, tasks: Iterator[Task], tick: float | None = None) -> Iterator[tuple[Task, TaskResult] | None]:
        """See :class:`arena.league.backends.Backend`: one game per worker at a time."""
        idle = list(reversed(self.workers))
        exhausted = False
        waiting: deque[int] = deque()  # result fds the last select() found readable, not yet read
        with selectors.DefaultSelector() as selector:
            for worker in self.workers:  # registered once: an idle worker's pipe is readable only if it died
                selector.register(worker.result_r, selectors.EVENT_READ, worker)
            while True:
                while not exhausted and idle:  # one game per worker: a queued game would escape probation
                    task = next(tasks, None)
                    if task is None:
                        exhausted = True
                        break
                    worker = idle.pop()
                    try:
                        _write_frame(worker.task_w, worker.snapshots.frame(task))
                    except BrokenPipeError:
                        self._died(worker)
                    self.busy[worker.result_r] = (worker, task)
                if not self.busy:
                    self.ready = 0
                    return
                if not waiting:
                    waiting.extend(key.fd for key, _ in selector.select(tick))
                    if not waiting:  # ``tick`` seconds without a result
                        self.ready = 0
                        yield None
                        continue
                fd = waiting.popleft()
                self.ready = len(waiting)
                if fd not in self.busy:  # an idle worker's end-of-file
                    self._died(next(w for w in self.workers if w.result_r == fd))
                worker, task = self.busy.pop(fd)
                result = _read_frame(fd)
                if result is None:
                    self._died(worker)
                idle.append(worker)
                columns = stored_columns(result)
                if columns is not None:
                    self.columns[task.key] = columns
                yield task, decode_result(result)

    @staticmethod
    def _died(worker: _Worker) -> None:
        time.sleep(0.05)  # a worker killed by the same Ctrl-C as the writer: let the writer's own stop surface first
        code = worker.proc.poll()
        raise ArenaError(f"a league worker process died (pid {worker.proc.pid}, exit status {code}); run the "
                         "same command again to resume")

    def close(self) -> None:
        """Stops every worker within :data:`STOP_GRACE` seconds; games still being played are abandoned. May be
        called from another thread than the one in :meth:`execute` (``arena serve`` stops its validator's backend
        so): ``busy`` is copied first (``list`` of a dict's values holds the GIL; a loop over them does not, as
        it signals, and the executing thread may store a result meanwhile)."""
        for worker in list(self.workers):
            worker.close_tasks()  # an idle worker exits at end-of-file
        for worker, _ in list(self.busy.values()):
            try:
                worker.proc.send_signal(signal.SIGTERM)  # a busy one kills its bots and exits
            except OSError:
                pass
        deadline = time.monotonic() + STOP_GRACE
        for worker in list(self.workers):
            try:
                worker.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.proc.kill()
                worker.proc.wait()
            os.close(worker.result_r)
        self.workers = []
        self.busy.clear()
