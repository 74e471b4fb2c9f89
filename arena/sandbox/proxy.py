"""The referee's handle on one sandboxed bot process (``BotProcess``): a bot object for ``arena.play``.

``step(state, limit)`` thaws the bot, sends it the actions it has not seen, and waits with ``poll``
for an answer until the move's deadline, draining the bot's stderr into a small ring buffer. Every
failure raises an :class:`arena.errors.BotError` subclass with a reason (timeout, crash, memory,
illegal, protocol); ``alive`` tells ``arena.play`` whether the bot can go on (COMP424's random-move
rule keeps a bot that merely timed out: it is frozen and its late answer is discarded by id).

Time waiting for a CPU is not the bot's time (docs/sandbox.md, "Time under load"): when a move passes
its deadline, the run-queue delay of the bot's main thread during the move (``/proc/PID/schedstat``,
second field) extends the deadline, at most by ``MAX_CREDIT`` move times; a bot the machine starves
beyond that raises :class:`arena.errors.MachineOverloadedError` instead of losing on time.
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from typing import Any

from arena.errors import (
    BotCrashedError,
    BotError,
    BotMemoryError,
    BotTimeoutError,
    IllegalMoveError,
    MachineOverloadedError,
    ProtocolError,
)
from arena.limits import Limits
from arena.sandbox import _sys, cgroups, protocol, seccomp
from arena.sandbox.protocol import FrameError

STDERR_KEEP = 16 * 1024
"""Bytes of the bot's stderr kept (the tail) for crash reports."""
GRACE = 0.05
"""Seconds added to every deadline: the referee's clock and the bot's disagree by a few ms on a busy machine."""
STARTUP_GRACE = 5.0
"""Seconds added to the first move time for starting the process (interpreter, imports, ``Bot(...)``):
the cost of our own process start must not count against the bot, even on a loaded machine."""


MAX_CREDIT = 2.0
"""Most run-queue delay credited to one move, in move times: a move may last up to its deadline plus twice
its limit when the bot spent that long waiting for a CPU; past that the machine is declared overloaded."""
SAMPLE_FRACTION = 0.1
"""The run-queue delay is read after a move only when the moves since the last reading took this fraction
of the limit (a fast move cannot be late; it saves a ``pread`` per move). A reading covers every move
since the previous one, so an unread move's few microseconds of waiting count in the next read move."""
MIN_EXTENSION = 0.001
"""Extensions shorter than this end the move (the re-check loop converges geometrically)."""


def deadline_for(seconds: float) -> float:
    """Wall-clock allowance the referee enforces for a move limit of ``seconds``."""
    return seconds * 1.02 + GRACE


class BotProcess:
    """One bot in its own (sandboxed) process for one game."""

    _main_pid: int | None = None
    """The host pid of the bot's own process, once looked up (see ``_bot_pid``)."""
    _init_frame: bytes | None = None
    """The ``init`` frame until it is sent (``_send_init``)."""

    def __init__(self, bot: dict[str, Any], game: Any, seat: int, seed: int, limits: Limits, *,
                 sandbox: Any, name: str = "") -> None:
        """Starts the process; start-up failures are kept and raised by the first ``step``.

        Args:
            bot: ``{"kind": "builtin", "spec": ...}`` or ``{"kind": "file", "path": ...}``.
            sandbox: an :class:`arena.sandbox.runner.Sandbox` that knows the active layers.
        """
        self.name = name or bot.get("spec") or os.path.basename(bot.get("path", "bot"))
        self.seat = seat
        self.limits = limits
        self.alive = True
        self.last_cpu_time: float | None = None
        self.move_timing: list[tuple[float | None, float]] = []
        """Per own move: (run-queue delay in seconds or None when not read, deadline extension granted)."""
        self.layers: dict[str, Any] = {}
        self.uid: int | None = None
        self._game = game
        self._num_actions = game.num_distinct_actions()
        self._limit_sent: tuple[float, bool] | None = None
        self._schedstat_fd = -1
        self._delay_mark: float | None = None  # run-queue delay (s) at the last reading
        self._unsampled = 0.0  # wall seconds of moves since that reading
        self._move: tuple[float, float, float] | None = None  # (start, deadline, limit) of the move under way
        self._extension = 0.0
        self._late_read = False
        self._frozen = False
        self._sent = 0
        self._moves = 0
        self._next_id = 1
        self._buffer = bytearray()
        self._stderr = bytearray()
        self._pending_error: BotError | None = None
        self._ready = False
        self._cpu_mark: float | None = None
        self._closed = False
        self.proc: subprocess.Popen | None = None
        self._cg = None
        self._slot = None
        req_r, self._req_w = os.pipe2(os.O_CLOEXEC)
        self._resp_r, resp_w = os.pipe2(os.O_CLOEXEC)
        self._err_r, err_w = os.pipe2(os.O_CLOEXEC)
        for fd in (self._req_w, self._resp_r, self._err_r):
            os.set_blocking(fd, False)
        # poll, not select: a runner with many games open has descriptors above FD_SETSIZE (1024).
        self._read_poll = select.poll()
        self._read_poll.register(self._resp_r, select.POLLIN)
        self._read_poll.register(self._err_r, select.POLLIN)
        self._write_poll = select.poll()
        self._write_poll.register(self._req_w, select.POLLOUT)
        self._write_poll.register(self._err_r, select.POLLIN)
        try:
            self.proc, self._cg, self._slot, plan = sandbox.start(bot, (req_r, resp_w), err_w)
            self.uid = plan.uid if plan.mode == "root" else os.getuid()
            bot_msg = dict(bot)
            if bot["kind"] == "file":
                bot_msg["path"] = os.path.join(plan.bot_dir_inside, os.path.basename(bot["path"]))
            init = {"type": "init", "game": str(game), "seat": seat, "seed": seed, "bot": bot_msg,
                    "layers": {"landlock": sandbox.use_landlock, "seccomp": sandbox.use_seccomp,
                               "deny_affinity": (self._cg is None or self._cg.cpuset is None) and cgroups.pinned(),
                               "read_paths": plan.read_paths}}
            # Sent by start_up (or the first step): the host loads the game and the bot's code only once it has
            # it, so every bot's process is set up at once but its own code starts when the referee says.
            self._init_frame = protocol.encode(init)
        except (OSError, BotError) as exc:
            self._drain_stderr()
            self._pending_error = BotCrashedError(f"bot process failed to start: {exc}{self._stderr_tail()}")
            self.alive = False
        finally:
            for fd in (req_r, resp_w, err_w):
                os.close(fd)

    # -- the bot protocol -----------------------------------------------------------------------
    def step(self, state: Any, limit: Any) -> int:
        """Asks the bot for a move within this bot's own move limit; raises BotError on any failure."""
        self.last_cpu_time = None  # set when this move's CPU time is read: never a previous move's
        if self._init_frame is not None:
            self._send_init()
        if self._pending_error is not None:
            self.move_timing.append((None, 0.0))
            raise self._pending_error
        if not self.alive:
            self.move_timing.append((None, 0.0))
            raise BotCrashedError("bot process is not running")
        seconds = self.limits.time_for(self._moves)
        first = self._moves == 0
        self._moves += 1
        started = time.monotonic()
        if not self._ready:
            try:
                self._await_ready(started + deadline_for(self.limits.first_move_time) + STARTUP_GRACE)
            except BotError:
                self.move_timing.append((None, 0.0))
                raise
            started = time.monotonic()
        deadline = started + deadline_for(seconds)
        self._move, self._extension, self._late_read = (started, deadline, seconds), 0.0, False
        history = state.history()
        actions = history[self._sent:]  # the bot rebuilds the state (and who moved) itself
        self._sent = len(history)
        request_id = self._next_id
        self._next_id += 1
        key = (seconds, first)
        if key == self._limit_sent:  # the host keeps the last limit: send it only when it changes
            frame = protocol.step_frame(request_id, actions)
        else:
            self._limit_sent = key
            frame = protocol.step_frame(request_id, actions, protocol.encode_value(
                {"time": seconds, "memory_mb": self.limits.memory_mb, "first_move": first,
                 "think": self.limits.move_time}))  # think: the budget on every move; the first's time covers start-up
        try:
            # Write first, then thaw: the frozen bot cannot read it yet, and it wakes once (with its
            # request waiting) instead of waking on the thaw and again on the write.
            try:
                written = os.write(self._req_w, frame)  # a request fits the pipe: almost always one write
            except (BlockingIOError, BrokenPipeError):
                written = 0
            if written < len(frame):
                self._write(frame[written:], deadline)
            self._thaw()
            while True:
                reply = self._read_message(deadline)
                reply_id = reply.get("id")
                if type(reply_id) is int and reply_id == request_id:
                    break
                if reply_id is None:
                    self._raise_reported(reply)
                if isinstance(reply_id, bool) or not isinstance(reply_id, int) or not 0 < reply_id < request_id:
                    self._kill()
                    raise ProtocolError(f"answer to a request that was never sent: {str(reply)[:200]}")
                # a late answer to a move that already timed out: discard it
        except (BotError, MachineOverloadedError) as exc:
            self._freeze()
            self._end_move(started, seconds, force=isinstance(exc, (BotTimeoutError, MachineOverloadedError)))
            raise
        self._freeze()
        self._end_move(started, seconds)
        if "action" not in reply:
            if "bad_action" in reply:
                raise IllegalMoveError(f"bot returned {str(reply['bad_action'])[:200]} instead of an int action")
            self._kill()
            raise ProtocolError(f"answer without an action: {str(reply)[:200]}")
        try:
            return protocol.parse_action(reply, self._num_actions)
        except FrameError:
            raise IllegalMoveError(f"action {str(reply.get('action'))[:40]} is not an action id of {self._game}") from None

    def start_up(self) -> None:
        """Waits for the bot to become ready within its start-up allowance, then freezes it until its first move
        (the referee starts bots one at a time, each while the others are frozen: no bot computes on another's
        start-up or moves). A failure is kept and raised by the first ``step``."""
        self._send_init()
        if self._ready or self._pending_error is not None or not self.alive:
            return
        try:
            self._await_ready(time.monotonic() + deadline_for(self.limits.first_move_time) + STARTUP_GRACE)
        except BotError as exc:
            self._pending_error = exc

    def _send_init(self) -> None:
        """Sends the ``init`` frame once; a bot that cannot take it failed to start (kept for its first move)."""
        frame, self._init_frame = self._init_frame, None
        if frame is None or self._pending_error is not None:
            return
        try:
            self._write(frame, time.monotonic() + 5.0)
        except (OSError, BotError) as exc:
            self._drain_stderr()
            self._pending_error = BotCrashedError(f"bot process failed to start: {exc}{self._stderr_tail()}")
            self.alive = False

    def _await_ready(self, deadline: float) -> None:
        try:
            reply = self._read_message(deadline)
        except BotTimeoutError:
            # Missing the start-up allowance is dealt with once: the bot is killed (alive turns False), so it
            # forfeits now instead of being waited for again at every move (random_move games stalled on it).
            self._kill()
            raise BotTimeoutError(f"bot did not become ready within its start-up allowance "
                                  f"({self.limits.first_move_time:g} s first move time + {STARTUP_GRACE:g} s to "
                                  "start the process)") from None
        if reply.get("type") != "ready":
            self._raise_reported(reply)
        self._ready = True
        self.layers = reply.get("layers", {})
        if isinstance(self.layers.get("uid"), int):
            self.uid = self.layers["uid"]
        self._freeze()
        self._delay_mark = self._run_delay()  # the baseline of the first move (start-up waits are not its)

    def _raise_reported(self, reply: dict[str, Any]) -> None:
        """The bot reported its own failure (or sent something that is not part of the protocol)."""
        if reply.get("type") == "error":
            reason = reply.get("reason")
            self._wait_exit(0.5)
            self._drain_stderr()
            detail = seccomp.explain(f"{str(reply.get('detail', ''))[:300]}{self._stderr_tail()}")
            self._kill()
            if reason == "memory":
                raise BotMemoryError(f"bot ran out of memory: {detail}")
            raise BotCrashedError(f"bot raised an exception: {detail}")
        self._kill()
        raise ProtocolError(f"unexpected message from bot: {str(reply)[:200]}")

    # -- I/O with deadlines ------------------------------------------------------------------------
    def _write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._req_w, view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            except BrokenPipeError:
                self._died()
            self._thaw()  # a full pipe: a frozen bot could never empty it
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                deadline = self._overtime(deadline)
                remaining = max(deadline - time.monotonic(), 0.0)
            self._write_poll.poll(remaining * 1000)
            self._drain_stderr()

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while True:
            message = self._take_frame()
            if message is not None:
                return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                deadline = self._overtime(deadline)
                remaining = max(deadline - time.monotonic(), 0.0)
            events = self._read_poll.poll(remaining * 1000)
            if len(events) == 1 and events[0][0] == self._resp_r:  # the usual case: an answer, nothing on stderr
                answer = True
            else:
                self._drain_stderr()
                answer = any(fd == self._resp_r for fd, _ in events)
            if answer:
                try:
                    chunk = os.read(self._resp_r, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    self._died()
                if not self._buffer and len(chunk) >= 4:  # usually exactly one whole frame: no buffering
                    (length,) = protocol.HEADER.unpack_from(chunk)
                    if length == len(chunk) - 4 and length <= protocol.MAX_BOT_MESSAGE:
                        try:
                            return protocol.decode_answer(chunk[4:])
                        except FrameError as exc:
                            self._kill()
                            raise ProtocolError(str(exc)) from None
                self._buffer += chunk
                if len(self._buffer) > protocol.MAX_BOT_MESSAGE + protocol.HEADER.size:
                    self._check_header()

    def _check_header(self) -> None:
        try:
            protocol.frame_length(bytes(self._buffer[:4]), protocol.MAX_BOT_MESSAGE)
        except FrameError as exc:
            self._kill()
            raise ProtocolError(str(exc)) from None

    def _take_frame(self) -> dict[str, Any] | None:
        if len(self._buffer) < 4:
            return None
        try:
            length = protocol.frame_length(bytes(self._buffer[:4]), protocol.MAX_BOT_MESSAGE)
            if len(self._buffer) < 4 + length:
                return None
            body = bytes(self._buffer[4:4 + length])
            del self._buffer[:4 + length]
            return protocol.decode_answer(body)
        except FrameError as exc:
            self._kill()
            raise ProtocolError(str(exc)) from None

    def _drain_stderr(self) -> None:
        while True:
            try:
                chunk = os.read(self._err_r, 1 << 16)
            except (BlockingIOError, OSError):
                return
            if not chunk:
                return
            self._stderr += chunk
            if len(self._stderr) > 2 * STDERR_KEEP:
                del self._stderr[:-STDERR_KEEP]

    def stderr_text(self) -> str:
        """The tail of everything the bot printed (stdout and stderr)."""
        self._drain_stderr()
        return bytes(self._stderr[-STDERR_KEEP:]).decode("utf-8", "replace")

    def _stderr_tail(self, lines: int = 12) -> str:
        tail = self.stderr_text().rstrip().splitlines()[-lines:]
        return seccomp.explain("\n" + "\n".join(line[:300] for line in tail)) if tail else ""

    # -- failures ----------------------------------------------------------------------------------
    def _timed_out(self, detail: str = "") -> None:
        self._freeze()
        if self.limits.debug:
            return
        raise BotTimeoutError(f"no answer within the move time ({self.limits.time_for(max(self._moves - 1, 0)):g} s)"
                              f"{detail}")

    # -- time under load ---------------------------------------------------------------------------
    def _overtime(self, deadline: float) -> float:
        """The deadline passed: returns a later deadline when the bot's wait for a CPU accounts for it,
        else raises BotTimeoutError (the bot used its time) or MachineOverloadedError (the machine kept
        it waiting longer than MAX_CREDIT move times).

        Slow path only: runs once the deadline has passed, and again after each extension."""
        if self.limits.debug:  # no time limits: wait on (an hour at a time)
            return time.monotonic() + 3600.0
        if self._move is None:  # start-up and the init frame: no credit
            self._timed_out()
        now = time.monotonic()
        if not self._late_read and self._read_poll.poll(0):  # this process was late, not the bot: read what came
            self._late_read = True
            return now
        started, base, seconds = self._move
        wall = now - started
        wait = self._wait_so_far()
        cpu = self._cpu_so_far()
        # Only time the bot spent neither running nor sleeping is credited: wall - CPU bounds the main
        # thread's wait (a multi-threaded bot's main thread waiting behind its own threads gets nothing).
        credit = max(0.0, min(wait, wall - cpu) if cpu is not None else wait) if wait is not None else 0.0
        cap = MAX_CREDIT * seconds
        if base + min(credit, cap) > now + MIN_EXTENSION:
            self._extension = min(credit, cap)
            return base + self._extension
        self._freeze()
        numbers = (f"wall {wall:.3f} s, CPU {'?' if cpu is None else f'{cpu:.3f}'} s, waited for a CPU "
                   f"{'?' if wait is None else f'{wait:.3f}'} s")
        if base + credit > now + MIN_EXTENSION:
            raise MachineOverloadedError(
                f"machine overloaded: bot {self.name} waited {credit:.2f} s for a CPU during a {seconds:g} s move "
                f"({numbers}; at most {cap:g} s is credited); lower --concurrency or stop other work")
        self._timed_out(f": {numbers}" + (f", {self._extension:.3f} s credited" if self._extension else ""))
        return deadline

    def _wait_so_far(self) -> float | None:
        """Run-queue delay of the bot's main thread since the last reading (None: not measurable)."""
        if self._delay_mark is None:
            return None
        now = self._run_delay()
        return None if now is None else now - self._delay_mark

    def _cpu_so_far(self) -> float | None:
        """CPU seconds of the bot since the move began: its whole tree with a cgroup; else its main thread's,
        plus all the CPU its other threads used in the whole game (no per-move baseline exists for them
        without a read per move; the overstatement only ever lowers the credit)."""
        if self._cpu_mark is None:
            return None
        if self._cg is not None:
            cpu = self._cg.cpu_seconds()
            return None if cpu is None else cpu - self._cpu_mark
        main = self._schedstat()
        if main is None:
            return None
        return main - self._cpu_mark + max(0.0, (self._process_cpu() or 0.0) - main)

    def _process_cpu(self) -> float | None:
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

    def _end_move(self, started: float, seconds: float, force: bool = False) -> None:
        """Keeps the move's run-queue delay (read only for slow moves, see SAMPLE_FRACTION) and extension."""
        self._move = None
        self._unsampled += time.monotonic() - started
        delay = None
        if force or self._extension or self._unsampled >= SAMPLE_FRACTION * seconds:
            now = self._run_delay()
            if now is not None and self._delay_mark is not None:
                delay = now - self._delay_mark
            self._delay_mark = now
            self._unsampled = 0.0
        self.move_timing.append((delay, self._extension))

    def _died(self) -> None:
        """The process closed its pipe: find out why (OOM kill, CPU limit, exception, signal)."""
        code = self._wait_exit(1.0)
        self._drain_stderr()
        oom = self._cg is not None and self._cg.oom_killed()
        self._kill()
        tail = self._stderr_tail()
        if oom or "MemoryError" in tail[-2000:]:
            raise BotMemoryError(f"bot exceeded the memory limit ({self.limits.memory_mb} MB){tail}")
        if code == -signal.SIGXCPU:
            raise BotTimeoutError(f"bot exceeded its CPU time limit{tail}")
        what = "closed its pipe and did not exit" if code is None else \
            f"killed by signal {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
        raise BotCrashedError(f"bot process {what}{tail}")

    def _wait_exit(self, timeout: float) -> int | None:
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    # -- process control ---------------------------------------------------------------------------
    def _freeze(self) -> None:
        """Stops the bot (with a cgroup) and accounts the move's CPU time, once per move: the timeout path
        freezes more than once and must keep the move's CPU time, not the ~0 s since the first call."""
        if self._frozen:
            return
        self._frozen = True
        if self._cg is not None:
            self._cg.freeze(True)
            cpu = self._cg.cpu_seconds()
        elif self.proc is not None:  # no cgroup: the main thread's CPU time from schedstat
            cpu = self._schedstat()
        else:
            return
        if cpu is not None:
            self.last_cpu_time = cpu - (self._cpu_mark or 0.0)
            self._cpu_mark = cpu

    def _thaw(self) -> None:
        if self._cg is not None:
            if self._frozen:
                self._cg.freeze(False)
            if self._cpu_mark is None:
                self._cpu_mark = self._cg.cpu_seconds()
        elif self.proc is not None and self._cpu_mark is None:
            self._cpu_mark = self._schedstat()
        self._frozen = False

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

    def _kill(self) -> None:
        """Kills the whole process tree (cgroup.kill where available)."""
        self.alive = False
        if self._cg is not None:
            self._cg.kill()
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:
                pass
            self._wait_exit(2.0)

    def close(self) -> None:
        """Ends the bot: kills its tree, removes its cgroups, frees its uid slot and pipes."""
        if self._closed:
            return
        self._closed = True
        self._kill()
        # Its uid may go to the next bot without a look through /proc only when its processes are known gone:
        # the process reaped (with a PID namespace, its init: the kernel ends the namespace with it) and the
        # cgroups emptied and removed.
        gone = self.proc is None or self.proc.poll() is not None
        if self._cg is not None:
            gone = self._cg.destroy() and gone
        if self._slot is not None:
            self._slot.release(clean=gone)

        for fd in (self._req_w, self._resp_r, self._err_r, self._schedstat_fd):
            if fd < 0:
                continue
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten proxy must not leave a process behind
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass
