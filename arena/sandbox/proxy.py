"""The referee's handle on one sandboxed bot process (``BotProcess``): a bot object for ``arena.play``.

``step(state, limit)`` thaws the bot, sends it the actions it has not seen, and waits for an answer until the
move's deadline. The work is split by job: the pipes and frames (:mod:`arena.sandbox.channel`), the process tree
(:mod:`arena.sandbox.handle`), the time account (:mod:`arena.sandbox.clock`: each move's allowance, its deadline,
its CPU time and the credit for waiting on a loaded machine) and the names of failures
(:mod:`arena.sandbox.failures`). Every failure raises an :class:`arena.errors.BotError` subclass with a reason
(timeout, crash, memory, illegal, protocol); ``alive`` tells ``arena.play`` whether the bot can go on (COMP424's
random-move rule keeps a bot that merely timed out: it is frozen and its late answer is discarded by id).
"""
from __future__ import annotations

import os
import resource
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any, NoReturn

from arena.errors import (
    BotCrashedError,
    BotError,
    BotTimeoutError,
    IllegalMoveError,
    MachineOverloadedError,
    ProtocolError,
)
from arena.limits import GameClock, Limits
from arena.sandbox import failures, protocol
from arena.sandbox.channel import STDERR_KEEP, Channel
from arena.sandbox.clock import (
    FREEZE_CPU,
    FREEZE_WAIT,
    GRACE,
    MAX_CREDIT,
    STARTUP_GRACE,
    THAW_HELD,
    THAW_RAN,
    Clock,
    deadline_for,
)
from arena.sandbox.handle import ProcessHandle
from arena.sandbox.protocol import FrameError
from bots.base import Limit

__all__ = ["FREEZE_CPU", "FREEZE_WAIT", "GRACE", "MAX_CREDIT", "STARTUP_GRACE", "STDERR_KEEP", "BotProcess",
           "deadline_for"]


_STOPPING: weakref.WeakKeyDictionary[Any, list[BotProcess]] = weakref.WeakKeyDictionary()
"""Per sandbox (one game): its bots asked to stop, until the kernel reports them frozen (``BotProcess._settle``)."""


class BotProcess:
    """One bot in its own (sandboxed) process for one game."""

    _init_frame: bytes | None = None
    """The ``init`` frame until it is sent (``_send_init``)."""
    reads_state_only = True
    """``step`` only reads the state's new actions: the referee hands it the game's state, not a copy (a copy
    per move costs the game's length: quadratic over a long game)."""
    game_clock: GameClock | None = None
    """The bot's game clock (``limits.time_control``; set by the referee): each move is charged to it here, as the
    sandbox charges a move (:meth:`arena.sandbox.clock.Clock.move_charge`), and a move it cannot hold is a flag."""

    def __init__(self, bot: dict[str, Any], game: Any, seat: int, seed: int, limits: Limits, *,
                 sandbox: Any, name: str = "") -> None:
        """Starts the process; start-up failures are kept and raised by the first ``step``.

        Args:
            bot: ``{"kind": "builtin", "spec": ...}`` or ``{"kind": "file", "path": ...}``.
            sandbox: an :class:`arena.sandbox.launcher.Sandbox` that knows the active layers.
        """
        self.name = name or bot.get("spec") or os.path.basename(bot.get("path", "bot"))
        self.seat = seat
        self.limits = limits
        self.uid: int | None = None
        """The uid the referee gave the process (its slot's, or the referee's own without root): what the record
        states. Set when the process is planned; nothing the bot sends changes it."""
        self._game = game
        self._num_actions = game.num_distinct_actions()
        self._limit_sent: tuple[Any, ...] | None = None
        self._sent = 0
        self._next_id = 1
        self._late: set[int] = set()
        """Requests that timed out unanswered: each may be answered late once (discarded); any other id is a failure."""
        self._stopping = _STOPPING.setdefault(sandbox, [])
        """The game's bots asked to stop whose stop the kernel has not confirmed yet (shared by its sandbox)."""
        self._pending_error: BotError | None = None
        self._ready = False
        self._left_out = 0.0
        self._cpu_limit: int | None = None
        """The process's RLIMIT_CPU (soft) in seconds: a kill by SIGXCPU is a timeout only once its CPU reached it."""
        self.handle = ProcessHandle()
        self.clock = Clock(limits, self.name)
        req_r, req_w = os.pipe2(os.O_CLOEXEC)
        resp_r, resp_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        self.channel = Channel(req_w, resp_r, err_r, overtime=self._overtime, closed=self._died,
                               malformed=self._malformed, full=self._thaw)
        try:
            proc, cg, slot, plan = sandbox.start(bot, (req_r, resp_w), err_w)
            self.handle.proc, self.handle.cg, self.handle.slot = proc, cg, slot
            self.clock.proc, self.clock.cg = proc, cg
            self.uid = plan.uid if plan.mode == "root" else os.getuid()
            self._cpu_limit = dict(plan.rlimits).get(resource.RLIMIT_CPU)
            bot_msg = dict(bot)
            if bot["kind"] == "file":
                bot_msg["path"] = os.path.join(plan.bot_dir_inside, os.path.basename(bot["path"]))
            init = {"type": "init", "game": str(game), "seat": seat, "seed": seed, "bot": bot_msg,
                    "layers": {"landlock": sandbox.use_landlock, "seccomp": sandbox.use_seccomp,
                               # no cpuset holds the bot to its one CPU (launcher.game_cpu): it may not widen it
                               "deny_affinity": cg is None or cg.cpuset is None,
                               "read_paths": plan.read_paths}}
            # Sent by start_up (or the first step): the host loads the game and the bot's code only once it has
            # it, so every bot's process is set up at once but its own code starts when the referee says.
            self._init_frame = protocol.encode(init)
        except (OSError, BotError) as exc:
            self._pending_error = failures.start_failed(exc, self.channel.stderr_tail())
            self.handle.alive = False
        finally:
            for fd in (req_r, resp_w, err_w):
                os.close(fd)

    # -- what arena.play and the referee read ------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.handle.alive

    @property
    def proc(self) -> Any:
        return self.handle.proc

    @property
    def last_cpu_time(self) -> float | None:
        """CPU seconds of the last move (None until it is read: never a previous move's)."""
        return self.clock.last_cpu_time

    @property
    def last_wait_left_out(self) -> float:
        """Seconds of the last move's step that were the referee's wait, not the bot's (a thaw held in the kernel
        while the bot was frozen): left out of its clock, and of its recorded wall time (arena.referee.loop)."""
        return self._left_out

    @property
    def move_timing(self) -> list[tuple[float | None, float]]:
        """Per own move: (run-queue delay in seconds or None when not read, deadline extension granted)."""
        return self.clock.move_timing

    @property
    def moves(self) -> int:
        """Own moves begun so far (the next one's allowance is ``limits.allowance(moves)``)."""
        return self.clock.moves

    # -- the bot protocol -----------------------------------------------------------------------
    def step(self, state: Any, limit: Limit) -> int:
        """Asks the bot for a move within ``limit``, the allowance the referee computed for it
        (:meth:`arena.limits.Limits.allowance`): sent to the bot, and its ``time`` is the move's deadline. Raises
        BotError on any failure."""
        clock = self.clock
        clock.last_cpu_time = None  # set when this move's CPU time is read: never a previous move's
        self._left_out = 0.0
        if self._init_frame is not None:
            self._send_init()
        if self._pending_error is not None:
            clock.skipped()
            raise self._pending_error
        if not self.handle.alive:
            clock.skipped()
            raise BotCrashedError("bot process is not running")
        seconds, first = limit.time, limit.first_move
        if seconds is None:  # a sandboxed move always has a deadline (only the debug path plays without one)
            raise ValueError("a sandboxed bot's move needs a time limit (Limit.time)")
        clock.moves += 1
        game_clock = self.game_clock
        if game_clock is not None and limit.clock is not None and limit.clock <= 0:
            clock.skipped()  # a move within the last one's grace emptied the clock, and no increment came back
            game_clock.flag()
            raise BotTimeoutError(f"the clock ran out (time control {self.limits.time_control}): no time left on it")
        self._settle()  # the others' stops are confirmed before this move's clock starts: that wait is not its time
        started = time.monotonic()
        if not self._ready:
            try:
                self._await_ready(clock.startup_deadline())
            except BotError:
                clock.skipped()
                raise
            started = time.monotonic()
        # the first move pays for the load (clock.ready): the bot is told the time it has left, not the full limit
        told = max(0.0, round(seconds - clock.load_charge(), 3))
        told_clock = None if limit.clock is None else max(0.0, round(limit.clock - clock.load_charge(), 3))
        # a move held to the time left on the game clock (not to a smaller move time): its timeout is a flag
        flag = None if game_clock is None or limit.clock is None or seconds < limit.clock else (
            f"the clock ran out (time control {self.limits.time_control}): no answer within the {seconds:.3f} s left "
            "on its clock")
        deadline = clock.begin(seconds, started, flag)
        try:
            clock.load_overran(started, deadline, self._freeze)  # the load took the whole first move: timed out
        except BotTimeoutError:
            self._clock_timeout(flag, seconds)
            raise
        # only what the bot has not seen (it rebuilds the state, and who moved, itself); history_since copies
        # just those, so a move's cost does not grow with the game (other games' states: history()'s tail)
        since = getattr(state, "history_since", None)
        actions = since(self._sent) if since is not None else state.history()[self._sent:]
        self._sent += len(actions)
        request_id = self._next_id
        self._next_id += 1
        key = (told, first, told_clock, limit.moves_to_go)
        if key == self._limit_sent:  # the host keeps the last limit: send it only when it changes
            frame = protocol.step_frame(request_id, actions)
        else:
            self._limit_sent = key
            sent = {"time": told, "memory_mb": limit.memory_mb, "first_move": first,
                    "think": limit.think}  # think: the budget on every move; the first's time covers start-up
            if told_clock is not None:  # a game clock: what is left on it, the increment, the moves to go
                sent.update(clock=told_clock, increment=limit.increment, moves_to_go=limit.moves_to_go)
            frame = protocol.step_frame(request_id, actions, protocol.encode_value(sent))
        channel = self.channel
        channel.new_move()
        try:
            # Write first, then thaw: the frozen bot cannot read it yet, and it wakes once (with its
            # request waiting) instead of waking on the thaw and again on the write.
            written = channel.send_fast(frame)
            if written < len(frame):
                channel.write(frame[written:], deadline)
            # The move starts when the bot can run: the thaw's write can wait on the kernel's cgroup lock (held by
            # another game's bot while it joins its groups: up to ~20 ms), with this bot still frozen. Credited only
            # when the bot used next to no CPU meanwhile: the write wakes its threads one by one, and many woken
            # threads can take the referee's CPU from it before the write returns (attack round 33d). (A move too
            # big for the pipe thawed the bot inside channel.write already: nothing is left out then.)
            marked = clock.cpu_marked()
            thawing = time.monotonic()
            self._thaw()
            held = time.monotonic() - thawing
            if held > THAW_HELD and marked:
                ran = clock.cpu_since_charge()
                if ran is not None and ran <= THAW_RAN:
                    started, deadline = clock.postpone(held)
                    self._left_out = held
            while True:
                reply = channel.read_message(deadline)
                reply_id = reply.get("id")
                if type(reply_id) is int and reply_id == request_id:
                    break
                if reply_id is None:
                    self._raise_reported(reply)
                if type(reply_id) is not int or reply_id not in self._late:
                    self._kill()
                    raise ProtocolError(f"answer to a request that was never sent or has no late answer left: "
                                        f"{str(reply)[:200]}")
                self._late.discard(reply_id)  # the one late answer to a move that timed out: discarded
        except (BotError, MachineOverloadedError) as exc:
            if isinstance(exc, BotTimeoutError):
                self._late.add(request_id)  # its answer may still come, once (a bot kept by the random-move rule)
                self._clock_timeout(flag, seconds)
            self._freeze()
            clock.end(started, seconds, force=isinstance(exc, (BotTimeoutError, MachineOverloadedError)))
            raise
        charged = clock.move_charge(started) if game_clock is not None else 0.0  # read before the freeze
        self._freeze()
        clock.end(started, seconds)
        if game_clock is not None:
            game_clock.charge(charged)
        if "action" not in reply:
            if "bad_action" in reply:
                raise IllegalMoveError(f"bot returned {str(reply['bad_action'])[:200]} instead of an int action")
            if "illegal" in reply:  # an adapter's illegal answer (a COMP424 agent raised): its traceback is the detail
                raise IllegalMoveError(
                    f"{str(reply['illegal'])[:300]}\n{str(reply.get('traceback', ''))[-2000:]}".strip())
            self._kill()
            raise ProtocolError(f"answer without an action: {str(reply)[:200]}")
        try:
            return protocol.parse_action(reply, self._num_actions)
        except FrameError:
            raise IllegalMoveError(
                f"action {str(reply.get('action'))[:40]} is not an action id of {self._game}") from None

    def start_up(self) -> None:
        """Waits for the bot to become ready within its start-up allowance, then freezes it until its first move
        (the referee starts bots one at a time, each while the others are frozen: no bot computes on another's
        start-up or moves). A failure is kept and raised by the first ``step``."""
        self._send_init()
        if self._ready or self._pending_error is not None or not self.handle.alive:
            return
        try:
            self._await_ready(self.clock.startup_deadline())
        except BotError as exc:
            self._pending_error = exc

    def _send_init(self) -> None:
        """Sends the ``init`` frame once; a bot that cannot take it failed to start (kept for its first move)."""
        frame, self._init_frame = self._init_frame, None
        if frame is None or self._pending_error is not None:
            return
        self._settle()  # the bot loads its code now: the others are stopped first
        try:
            self.clock.loading()  # the first move's clock starts with the load (docs/sandbox.md, Failures)
            self.channel.write(frame, time.monotonic() + 5.0)
        except (OSError, BotError) as exc:
            self._pending_error = failures.start_failed(exc, self.channel.stderr_tail())
            self.handle.alive = False

    def _await_ready(self, deadline: float) -> None:
        try:
            reply = self.channel.read_message(deadline)
        except BotTimeoutError:
            # Missing the start-up allowance is dealt with once: the bot is killed (alive turns False), so it
            # forfeits now instead of being waited for again at every move (under random_move its game would
            # stall on it every turn).
            self._kill()
            raise BotTimeoutError(f"bot did not become ready within its start-up allowance "
                                  f"({self.limits.startup_time():g} s "
                                  f"{'on its clock' if self.limits.time_control else 'first move time'} + "
                                  f"{STARTUP_GRACE:g} s to start the process)") from None
        if reply.get("type") != "ready":
            self._raise_reported(reply)
        self._ready = True  # the frame's own claims (its uid, its layers) are the bot's word: never kept as facts
        self._freeze()
        self.clock.ready()

    @property
    def started(self) -> bool:
        """Whether the bot loaded its code and answered ``ready`` (False: it failed, or was never asked, to start)."""
        return self._ready

    def stderr_text(self) -> str:
        """The tail of everything the bot printed (stdout and stderr)."""
        return self.channel.stderr_text()

    # -- failures ----------------------------------------------------------------------------------
    def _clock_timeout(self, flag: str | None, seconds: float) -> None:
        """A move timed out: with a game clock, a flag when the clock held it, else the move time it had is charged."""
        if self.game_clock is not None:
            if flag is not None:
                self.game_clock.flag()
            else:
                self.game_clock.charge(seconds)

    def _overtime(self, deadline: float) -> float:
        return self.clock.overtime(deadline, self.channel.answer_waiting, self._freeze)

    def _raise_reported(self, reply: dict[str, Any]) -> NoReturn:
        """The bot reported its own failure (or sent something that is not part of the protocol)."""
        tail = ""
        if reply.get("type") == "error":
            self.handle.wait_exit(0.5)
            tail = self.channel.stderr_tail()
        oom = self.handle.oom_killed()
        self._kill()
        raise failures.reported(reply, tail, oom, memory_group=bool(self.handle.cg and self.handle.cg.memory))

    def _malformed(self, exc: FrameError) -> NoReturn:
        self._kill()
        raise ProtocolError(str(exc)) from None

    def _died(self) -> NoReturn:
        """The process closed its pipe: find out why, from what the referee can establish (its memory group's OOM
        events, the CPU time it measured against RLIMIT_CPU), never from the bot's exit status or output alone."""
        code = self.handle.wait_exit(1.0)
        self.channel.drain_stderr(final=True)
        oom = self.handle.oom_killed()
        cpu_reached = self.clock.cpu_limit_reached(self._cpu_limit)
        self._kill()
        raise failures.ended(code, oom, self.channel.stderr_tail(), self.limits.memory_mb, cpu_reached)

    # -- process control ---------------------------------------------------------------------------
    def _freeze(self) -> None:
        """Asks for the bot to be stopped and charges the move's CPU time, once per move: the timeout path freezes
        more than once and must keep the move's CPU time, not the ~0 s since the first call.

        The kernel stops it a little later (a thread finishes the system call it is in): before any bot of the
        game runs again, ``_settle`` waits for that (the wait is usually over by then: nothing to wait for)."""
        if self.handle.freeze():
            self.clock.charge()
            self._stopping.append(self)

    def _settle(self) -> None:
        """Before a bot runs: waits until the kernel reports every other bot of the game that was asked to stop frozen.
        A bot that keeps running (more than FREEZE_CPU of CPU, or FREEZE_WAIT s) is killed: its failure (timeout)
        is raised by its next move. The CPU it used meanwhile is charged to that move (``_thaw`` reads it)."""
        stopping = self._stopping
        while stopping:
            bot = stopping.pop()
            if bot is self or not bot.handle.alive:  # about to run itself (``_thaw`` checks its CPU), or killed
                continue
            problem = bot.handle.wait_frozen(FREEZE_CPU, FREEZE_WAIT)
            if problem is not None:
                bot._kill()
                bot._pending_error = bot._pending_error or BotTimeoutError(f"bot {problem}")

    def _thaw(self) -> None:
        """Starts the bot once the others are stopped; one that used more than FREEZE_CPU of CPU since its last move
        ended (while stopping and frozen, or, without a freezer, between its moves) is killed instead: a timeout."""
        self._settle()
        if self.handle.frozen:
            used = self.clock.cpu_since_charge()
            if used is not None and used > FREEZE_CPU:
                self._kill()
                raise BotTimeoutError(f"bot kept running after its move ended: {used:.3f} s of CPU before its next "
                                      f"move (at most {FREEZE_CPU:g} s)")
        self.handle.thaw()
        self.clock.start_cpu()

    def _kill(self) -> None:
        self.handle.kill()

    def close(self) -> None:
        """Ends the bot: kills its tree, removes its cgroups, frees its uid slot and pipes."""
        handle = getattr(self, "handle", None)
        if handle is None or handle._closed:
            return
        while self in self._stopping:  # nothing left to wait for (and no cycle keeps this object alive)
            self._stopping.remove(self)
        handle.close()
        self.clock.close()
        self.channel.close()

    def exited(self) -> bool:
        """Whether the bot's process (its PID namespace's init, whose exit ends the namespace) has exited and been
        reaped, without waiting: its close then waits for nothing but an emptied cgroup."""
        handle = getattr(self, "handle", None)
        return handle is None or handle.proc is None or handle.proc.poll() is not None

    def begin_close(self) -> None:
        """Sends the kill to the bot's whole tree without waiting (``close`` waits and cleans up)."""
        handle = getattr(self, "handle", None)
        if handle is not None:
            handle.begin_kill()

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten proxy must not leave a process behind
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


_CLOSING: list[BotProcess] = []
"""Bots of ended games sent their kill whose close (waiting for the exit, giving back the cgroups and the uid slot)
was left for later (``close_all(..., wait=False)``): :func:`finish_closing` does it."""
_CLOSING_LOCK = threading.Lock()


def close_all(bots: Sequence[BotProcess], *, wait: bool = True) -> None:
    """Ends a game's bots together: each whole tree is sent its kill first, then each is waited for and cleaned up
    (:meth:`BotProcess.close`), so their exits overlap instead of following one another. Every bot is closed even
    when one close fails (the first error is raised after).

    ``wait=False`` returns once the kills are sent and leaves the rest to :func:`finish_closing` (a league worker
    sends the game's result first: the kernel ends the bots, and the worker cleans up after them, while the writer
    stores it). No bot code runs after the kill; only what it held (cgroups, a uid slot) waits."""
    error: BaseException | None = None
    for bot in bots:
        try:
            bot.begin_close()
        except BaseException as exc:  # noqa: BLE001 - close() below still kills and waits
            error = error or exc
    if not wait:
        with _CLOSING_LOCK:
            _CLOSING.extend(bots)
        bots = ()
    for bot in bots:
        try:
            bot.close()
        except BaseException as exc:  # noqa: BLE001 - the other bots are closed all the same
            error = error or exc
    if error is not None:
        raise error


def finish_closing(wait: bool = True) -> None:
    """Closes every bot whose close was left for later (:func:`close_all`).

    ``wait=False`` closes only those whose process has exited already, and the oldest beyond
    :data:`CLOSING_MOST`, so a game's bots start while the last game's still end: a killed bot's exit (the kernel
    unmapping a forked interpreter, its init's namespaces torn down after it) takes ~4-10 ms on this project's 2-core
    machine, and runs no bot code. A league worker's next game calls it so; a worker with nothing to do, and the end
    of ``arena match``, wait for all."""
    with _CLOSING_LOCK:
        if wait:
            bots = list(_CLOSING)
        else:
            oldest = len(_CLOSING) - CLOSING_MOST
            bots = [bot for i, bot in enumerate(_CLOSING) if i < oldest or bot.exited()]
        for bot in bots:
            _CLOSING.remove(bot)
    if bots:
        close_all(bots)


CLOSING_MOST = 4
"""Bots at most left ending while the next game's start (two games of two): their cgroups and uid slots are held
till then, so the pools hold that many more."""
