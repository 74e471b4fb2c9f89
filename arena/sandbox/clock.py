"""A sandboxed bot's time account: each move's deadline (from the allowance the referee computed with
:meth:`arena.limits.Limits.allowance` and handed to :meth:`arena.sandbox.proxy.BotProcess.step`), the CPU time it
is charged, and the credit for time spent waiting for a CPU.

Time waiting for a CPU is not the bot's time (docs/sandbox.md, "Time under load"): when a move passes its deadline,
the run-queue delay of the bot's main thread during the move (``/proc/PID/schedstat``, second field) extends the
deadline, at most by ``MAX_CREDIT`` move times; a bot the machine starves beyond that raises
:class:`arena.errors.MachineOverloadedError` instead of losing on time.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from arena.errors import BotTimeoutError, MachineOverloadedError
from arena.limits import Limits
from arena.sandbox import _sys

GRACE = 0.05
"""Seconds added to every deadline: the referee's clock and the bot's disagree by a few ms on a busy machine."""
STARTUP_GRACE = 5.0
"""Seconds added to the first move time for starting the process (interpreter, imports, ``Bot(...)``):
the cost of our own process start must not count against the bot, even on a loaded machine."""
LOAD_ALLOWANCE = 0.1
"""Wall seconds of a bot's load (``init`` sent to ``ready``) that are arena's own part of start-up (rebuilding the
game, applying Landlock and seccomp): not charged to the first move. Measured: a trivial bot's init->ready on a
loaded 2-core machine: median 0.010 s, 99th percentile 0.028 s (30 games), rounded up with room for load."""
MAX_CREDIT = 2.0
"""Most run-queue delay credited to one move, in move times: a move may last up to its deadline plus twice
its limit when the bot spent that long waiting for a CPU; past that the machine is declared overloaded."""
SAMPLE_FRACTION = 0.1
"""The run-queue delay is read after a move only when the moves since the last reading took this fraction
of the limit (a fast move cannot be late; it saves a ``pread`` per move). A reading covers every move
since the previous one, so an unread move's few microseconds of waiting count in the next read move."""
MIN_EXTENSION = 0.001
"""Extensions shorter than this end the move (the re-check loop converges geometrically)."""
FREEZE_CPU = 0.01
"""CPU seconds a bot may use from the end of its move until the kernel reports it frozen (its threads finish the
system calls they are in), and again while frozen until its next move: more is its failure (timeout)."""
FREEZE_WAIT = 1.0
"""Wall seconds a bot may take to become frozen after its move (a bot waiting for a CPU uses none of FREEZE_CPU
meanwhile): more is its failure (timeout)."""

THAW_HELD = 0.0005
"""Seconds a bot's thaw must take before its move's start moves past it (``Clock.postpone``): a usual thaw takes
tens of microseconds, a thaw held by the kernel's cgroup lock milliseconds."""
THAW_RAN = 0.0005
"""CPU seconds the bot may have used since its last move ended (frozen: next to none) for a slow thaw to be left out
of its move: more means its threads ran during the thaw's write, which is then its time as before."""

CPU_LIMIT_SHARE = 0.5
"""Share of RLIMIT_CPU a bot killed by SIGXCPU (or SIGKILL) must have used, by the referee's exact measure, for the
kill to be its CPU limit: the kernel's tick-sampled count ran up to 20% ahead of the exact CPU time on a loaded
2-core machine (SIGXCPU at 1.65 s of a 2 s limit, 0.81 s of 1 s); a bot that sends itself the signal has used
next to none."""


def deadline_for(seconds: float) -> float:
    """Wall-clock allowance the referee enforces for a move limit of ``seconds``."""
    return seconds * 1.02 + GRACE


class Clock:
    """The time account of one bot process: ``begin`` a move, ``charge`` its CPU at each freeze, ``end`` it;
    ``overtime`` decides what a passed deadline means."""

    def __init__(self, limits: Limits, name: str) -> None:
        self.limits = limits
        self.name = name
        self.moves = 0
        """Own moves begun (the referee's allowance of the next one is ``limits.allowance(moves)``)."""
        self.last_cpu_time: float | None = None
        self.move_timing: list[tuple[float | None, float]] = []
        """Per own move: (run-queue delay in seconds or None when not read, deadline extension granted)."""
        self.proc: Any = None
        """The process handle's Popen (set once the process starts)."""
        self.cg: Any = None
        """The bot's cgroup, or None (CPU then comes from the main thread's schedstat)."""
        self._main_pid: int | None = None
        self._schedstat_fd = -1
        self._cpu_mark: float | None = None
        self._process_mark: float | None = None  # without a cgroup: every thread's CPU at the last charge
        self._process_mark_at: float | None = None  # and when it was read
        self._delay_mark: float | None = None  # run-queue delay (s) at the last reading
        self._unsampled = 0.0  # wall seconds of moves since that reading
        self._move: tuple[float, float, float] | None = None  # (start, deadline, limit) of the move under way
        self._extension = 0.0
        self._late_read = False
        self._load_started: float | None = None  # when the init frame was sent (the bot starts loading)
        self._load_charge = 0.0  # wall seconds of the load the first move pays for (taken off its deadline)
        self._move_load = 0.0  # that charge, while the first move is under way (named when it times out)
        self._load_cpu: float | None = None  # CPU seconds before ready, added to the first move's CPU figure
        self.load_wall: float | None = None
        """Wall seconds from ``init`` to ``ready`` (None: not measured)."""
        self.clocked = limits.time_control is not None
        """A game clock is kept (its moves are charged by ``move_charge``: the run-queue delay is read every move)."""
        self._flag: str | None = None  # the move under way is limited by the game clock: how the timeout reads

    # -- the allowance (each move's comes from the referee: Limits.allowance, passed to BotProcess.step) ---------
    def startup_deadline(self) -> float:
        """When a bot that is not ready yet has missed its start-up allowance."""
        return time.monotonic() + deadline_for(self.limits.startup_time()) + STARTUP_GRACE

    def loading(self) -> None:
        """The ``init`` frame is sent: the bot loads its code now, and the first move's clock starts."""
        self._load_started = time.monotonic()

    def begin(self, seconds: float, started: float, flag: str | None = None) -> float:
        """Starts the account of a move of ``seconds`` (begun at ``started``); returns its deadline. The first move's
        is earlier by the load's charge (see ``ready``): the first move time pays for start-up. ``flag``: the move
        is limited by the bot's game clock (what a timeout then says: the clock ran out)."""
        self._flag = flag
        deadline = started + deadline_for(seconds) - self._load_charge
        self._move_load, self._load_charge = self._load_charge, 0.0
        self._move, self._extension, self._late_read = (started, deadline, seconds), 0.0, False
        return deadline

    def cpu_marked(self) -> bool:
        """Whether a CPU figure was taken at the end of the bot's last move (or its first thaw): ``cpu_since_charge``
        then says what it used since."""
        return self._cpu_mark is not None if self.cg is not None else self._process_mark is not None

    def postpone(self, seconds: float) -> tuple[float, float]:
        """Starts the move under way ``seconds`` later, its deadline with it: the referee's own wait before the bot
        could run (its thaw). Returns the move's (start, deadline)."""
        if self._move is None:
            raise RuntimeError("postpone: no move under way (begin first)")
        started, deadline, seconds_allowed = self._move
        self._move = (started + seconds, deadline + seconds, seconds_allowed)
        return self._move[0], self._move[1]

    def load_overran(self, started: float, deadline: float, freeze: Callable[[], None]) -> None:
        """Raises the first move's BotTimeoutError when its load was charged the whole allowance (its deadline,
        from ``begin``, is past when it starts): no answer can be in time, however fast, so none is asked for."""
        if deadline > started or self.limits.debug:
            return
        self.end(started, 0.0, force=True)
        self.last_cpu_time, self._load_cpu = self._load_cpu, None  # the move's CPU figure: the load's
        cpu = "?" if self.last_cpu_time is None else f"{self.last_cpu_time:.3f}"
        self.timed_out(freeze, f": start-up charged {self._move_load:.3f} s of it (loading took wall "
                               f"{self.load_wall or 0.0:.3f} s, CPU {cpu} s)")

    def load_charge(self) -> float:
        """The wall seconds of the load the next move (the first) pays for: the bot is told its time less this."""
        return self._load_charge

    def ready(self) -> None:
        """The bot is ready: the baseline of the first move's CPU-wait credit, and the load's charge to it.

        The load (``init`` sent to ``ready``) is charged like a move: its wall time less LOAD_ALLOWANCE (arena's
        own part) and less the credit for waiting for a CPU, the main thread's run_delay since it started bounded
        by wall - CPU of every thread (a main thread waiting behind the bot's own threads is owed nothing), so the
        charge is at least the load's CPU less LOAD_ALLOWANCE. That CPU (since the process started: its cgroup's,
        else every thread's, dead ones included) is added to the first move's CPU figure."""
        self._delay_mark = self._run_delay()
        cpu = self.last_cpu_time  # the charge of the freeze at ready: the cgroup's, else the main thread's
        if self.cg is None:
            every = self.process_cpu()
            if every is not None:
                cpu = max(cpu or 0.0, every)
        self._load_cpu = cpu
        if self._load_started is None or self.limits.debug:
            return
        wall = time.monotonic() - self._load_started
        self.load_wall = wall
        wait = self._delay_mark or 0.0
        credit = max(0.0, min(wait, wall - cpu) if cpu is not None else min(wait, wall))
        self._load_charge = max(0.0, wall - credit - LOAD_ALLOWANCE)

    def move_charge(self, started: float) -> float:
        """What the move under way (begun at ``started``) is charged to a game clock, read as its answer came (before
        the freeze): what its deadline holds it to, its wall time less the credit for waiting for a CPU (the main
        thread's run-queue delay bounded by wall - CPU, at most MAX_CREDIT move times: ``overtime``'s rule), plus
        the load's charge on the first move (``ready``)."""
        wall = time.monotonic() - started
        wait = self._wait_so_far()
        cpu = self.cpu_so_far()
        credit = max(0.0, min(wait, wall - cpu) if cpu is not None else wait) if wait is not None else 0.0
        seconds = self._move[2] if self._move is not None else 0.0
        return max(0.0, wall - min(credit, MAX_CREDIT * seconds)) + self._move_load

    def end(self, started: float, seconds: float, force: bool = False) -> None:
        """Keeps the move's run-queue delay (read only for slow moves, see SAMPLE_FRACTION, and every move of a game
        clock: ``move_charge`` credits each move's own) and extension."""
        self._move = None
        self._unsampled += time.monotonic() - started
        delay = None
        if force or self.clocked or self._extension or self._unsampled >= SAMPLE_FRACTION * seconds:
            now = self._run_delay()
            if now is not None and self._delay_mark is not None:
                delay = now - self._delay_mark
            self._delay_mark = now
            self._unsampled = 0.0
        self.move_timing.append((delay, self._extension))

    def skipped(self) -> None:
        """A move that failed before it began (the bot never started, or is gone): no timing."""
        self.move_timing.append((None, 0.0))

    # -- CPU time --------------------------------------------------------------------------------
    def start_cpu(self) -> None:
        """The CPU baseline, at the bot's first thaw."""
        if self._cpu_mark is None:
            self._cpu_mark = self.cg.cpu_seconds() if self.cg is not None else self._schedstat()

    def charge(self) -> None:
        """The CPU time of the move just frozen (its whole tree with a cgroup; else its main thread's)."""
        if self.cg is not None:
            cpu = self.cg.cpu_seconds()
        elif self.proc is not None:
            cpu = self._schedstat()
            self._process_mark = self.process_cpu()  # every thread's, for the check between moves
            self._process_mark_at = time.monotonic()
        else:
            return
        if cpu is not None:
            self.last_cpu_time = cpu - (self._cpu_mark or 0.0) + (self._load_cpu or 0.0 if self.moves else 0.0)
            if self.moves:
                self._load_cpu = None  # counted once, in the first move's figure
            self._cpu_mark = cpu

    def cpu_since_charge(self) -> float | None:
        """CPU seconds used since the last ``charge`` (the end of the last move, or readiness): what a bot used
        while frozen, read before it is thawed. It stays in the account: the next ``charge`` counts it too.
        Without a cgroup: every thread's (``/proc/PID/stat``, whole clock ticks, less one tick of that
        granularity: a tick is charged whole to the thread it lands on)."""
        if self.cg is not None:
            cpu = self.cg.cpu_seconds()
            return None if cpu is None or self._cpu_mark is None else cpu - self._cpu_mark
        if self._process_mark is None:
            return None
        cpu = self.process_cpu()
        return None if cpu is None else max(0.0, cpu - self._process_mark - 1 / os.sysconf("SC_CLK_TCK"))

    def cpu_limit_reached(self, limit: float | None) -> bool:
        """Whether the bot can have reached ``limit`` CPU seconds (its RLIMIT_CPU) by now: only then is a kill by
        SIGXCPU or SIGKILL the kernel's CPU limit (a bot can send either to itself). The kernel counts that limit
        in scheduler ticks, which run ahead of the exact CPU time on a loaded machine: at least CPU_LIMIT_SHARE of
        it must have been used. With a cgroup: its tree's exact CPU time (still readable once the process is
        gone). Without: an upper bound, every thread's CPU at the last reading plus the wall time since on every
        CPU of the machine (the process itself is gone)."""
        if limit is None:
            return False
        if self.cg is not None:
            cpu = self.cg.cpu_seconds()
            if cpu is not None:
                return cpu >= CPU_LIMIT_SHARE * limit
        since = self._process_mark_at or self._load_started
        if since is None:
            return False  # it never got its init frame: none of its code ran
        bound = (self._process_mark or 0.0) + (time.monotonic() - since) * (os.cpu_count() or 1)
        return bound >= CPU_LIMIT_SHARE * limit

    # -- a passed deadline -----------------------------------------------------------------------
    def overtime(self, deadline: float, answer_waiting: Callable[[], bool], freeze: Callable[[], None]) -> float:
        """The deadline passed: returns a later deadline when the bot's wait for a CPU accounts for it (or an
        answer is already waiting: this process was late, not the bot), else freezes the bot and raises
        BotTimeoutError (the bot used its time) or MachineOverloadedError (the machine kept it waiting longer
        than MAX_CREDIT move times).

        Slow path only: runs once the deadline has passed, and again after each extension."""
        if self.limits.debug:  # no time limits: wait on (an hour at a time)
            return time.monotonic() + 3600.0
        if self._move is None:  # start-up and the init frame: no credit
            self.timed_out(freeze)
        now = time.monotonic()
        if not self._late_read and answer_waiting():
            self._late_read = True
            return now
        assert self._move is not None
        started, base, seconds = self._move
        wall = now - started
        wait = self._wait_so_far()
        cpu = self.cpu_so_far()
        # Only time the bot spent neither running nor sleeping is credited: wall - CPU bounds the main
        # thread's wait (a multi-threaded bot's main thread waiting behind its own threads gets nothing).
        credit = max(0.0, min(wait, wall - cpu) if cpu is not None else wait) if wait is not None else 0.0
        cap = MAX_CREDIT * seconds
        if base + min(credit, cap) > now + MIN_EXTENSION:
            self._extension = min(credit, cap)
            return base + self._extension
        freeze()
        numbers = (f"wall {wall:.3f} s, CPU {'?' if cpu is None else f'{cpu:.3f}'} s, waited for a CPU "
                   f"{'?' if wait is None else f'{wait:.3f}'} s"
                   + (f", start-up charged {self._move_load:.3f} s" if self._move_load else ""))
        if base + credit > now + MIN_EXTENSION:
            raise MachineOverloadedError(
                f"machine overloaded: bot {self.name} waited {credit:.2f} s for a CPU during a {seconds:g} s move "
                f"({numbers}; at most {cap:g} s is credited); lower --concurrency or stop other work")
        self.timed_out(freeze, f": {numbers}" + (f", {self._extension:.3f} s credited" if self._extension else ""))
        return deadline

    def timed_out(self, freeze: Callable[[], None], detail: str = "") -> None:
        """Raises the move's BotTimeoutError (not with debug limits: no time limits)."""
        freeze()
        if self.limits.debug:
            return
        if self._flag is not None:
            raise BotTimeoutError(f"{self._flag}{detail}")
        raise BotTimeoutError(f"no answer within the move time ({self.limits.time_for(max(self.moves - 1, 0)):g} s)"
                              f"{detail}")

    def _wait_so_far(self) -> float | None:
        """Run-queue delay of the bot's main thread since the last reading (None: not measurable)."""
        if self._delay_mark is None:
            return None
        now = self._run_delay()
        return None if now is None else now - self._delay_mark

    def cpu_so_far(self) -> float | None:
        """CPU seconds of the bot since the move began: its whole tree with a cgroup; else its main thread's,
        plus all the CPU its other threads used in the whole game (no per-move baseline exists for them
        without a read per move; the overstatement only ever lowers the credit)."""
        if self._cpu_mark is None:
            return None
        if self.cg is not None:
            cpu = self.cg.cpu_seconds()
            return None if cpu is None else cpu - self._cpu_mark
        main = self._schedstat()
        if main is None:
            return None
        return main - self._cpu_mark + max(0.0, (self.process_cpu() or 0.0) - main)

    def process_cpu(self) -> float | None:
        """CPU seconds of every thread of the bot process, dead ones included (``/proc/PID/stat``, clock ticks)."""
        pid = self._bot_pid()
        if pid is None:
            return None
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def _schedstat(self, field: int = 0) -> float | None:
        """A field of the bot's main-thread ``/proc/PID/schedstat`` in seconds: 0 = CPU time, 1 = time runnable
        but waiting for a CPU. The file stays open (one pread, not open+read+close)."""
        if self._schedstat_fd < 0:
            pid = self._bot_pid()
            if pid is None:
                return None
            try:
                self._schedstat_fd = os.open(f"/proc/{pid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        try:
            return int(os.pread(self._schedstat_fd, 256, 0).split()[field]) / 1e9
        except (OSError, ValueError, IndexError):
            return None

    def _bot_pid(self) -> int | None:
        """The host pid of the bot's own process: ``proc`` may be its PID namespace's init (or a relay above
        that), which only waits. Looked up once, after the bot is ready."""
        if self._main_pid is None and self.proc is not None:
            pid: int | None = self.proc.pid
            for _ in range(getattr(self.proc, "bot_depth", 0)):
                pid = _sys.child_pid(pid) if pid is not None else None
            self._main_pid = pid
        return self._main_pid

    def _run_delay(self) -> float | None:
        """Seconds the bot's main thread has spent runnable but not running (the kernel's run_delay; the wait
        under way is added when the thread next runs)."""
        return self._schedstat(1)

    def close(self) -> None:
        if self._schedstat_fd >= 0:
            try:
                os.close(self._schedstat_fd)
            except OSError:
                pass
            self._schedstat_fd = -1
