"""The referee's side of a bot's pipes: request frames out, answer frames in (:mod:`arena.sandbox.protocol`), and the
bot's stderr kept as a small ring buffer, every wait bounded by a deadline.

The channel knows bytes and frames only; what a passed deadline, a closed pipe or a malformed frame means for the
bot is decided by its owner (:class:`arena.sandbox.proxy.BotProcess`) through the callbacks it is given.
"""
from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from typing import Any, NoReturn

from arena.sandbox import protocol, seccomp
from arena.sandbox.protocol import FrameError

STDERR_KEEP = 16 * 1024
"""Bytes of the bot's stderr kept (the tail) for crash reports."""
READS_PER_MOVE = 1000
"""Reads of each of a bot's pipes (its answers, its output) the referee makes as they come in one move: each is a
wake-up of the referee, so a bot that trickles bytes cannot make it work without bound. Past it the output is read
only every OUTPUT_PAUSE, and an answer still incomplete is the bot's failure (protocol)."""
OUTPUT_PER_MOVE = 8 << 20
"""Bytes of a bot's output (stdout and stderr) read as they come in one move (start-up counts as one); past it, as
past READS_PER_MOVE."""
OUTPUT_PAUSE = 0.01
"""Past the move's bounds the output pipe is read once every this many seconds at most (64 KiB, a pipe's worth), not
at each write: a bot that prints on still plays (its prints wait for the read), and the referee's reads of it stay
under 100 a second."""
FINAL_OUTPUT = 1 << 20
"""Bytes read past the move's bounds for a failure report (the tail of what the bot printed last)."""


class Channel:
    """The request pipe (written), the answer pipe (read) and the stderr pipe (drained) of one bot."""

    def __init__(self, req_w: int, resp_r: int, err_r: int, *, overtime: Callable[[float], float],
                 closed: Callable[[], NoReturn], malformed: Callable[[FrameError], NoReturn],
                 full: Callable[[], None]) -> None:
        """Args:
            overtime: called with a passed deadline; returns a later one or raises.
            closed: the bot closed its answer or request pipe (raises why).
            malformed: a frame that breaks the protocol (raises).
            full: the request pipe is full (the bot must run to empty it).
        """
        self.req_w, self.resp_r, self.err_r = req_w, resp_r, err_r
        self._overtime, self._closed, self._malformed, self._full = overtime, closed, malformed, full
        self._buffer = bytearray()
        self._stderr = bytearray()
        self._reads = self._output = 0  # this move's reads of the output, its bytes (READS_PER_MOVE, OUTPUT_PER_MOVE)
        self._answer_reads = 0  # this move's reads of the answer pipe (READS_PER_MOVE)
        self._output_state = "open"  # "paused": its bounds were reached this move; "closed": it hung up
        self._next_drain = 0.0  # when paused: the next read of the output
        for fd in (req_w, resp_r, err_r):
            os.set_blocking(fd, False)
        # poll, not select: a runner with many games open has descriptors above FD_SETSIZE (1024).
        self.read_poll = select.poll()
        self.read_poll.register(resp_r, select.POLLIN)
        self.read_poll.register(err_r, select.POLLIN)
        self._write_poll = select.poll()
        self._write_poll.register(req_w, select.POLLOUT)
        self._write_poll.register(err_r, select.POLLIN)

    def new_move(self) -> None:
        """A move (or the start-up) begins: its bounds start afresh, and output paused at the last move's is read."""
        self._reads = self._output = self._answer_reads = 0
        if self._output_state == "paused":
            self._output_state = "open"
            self.read_poll.register(self.err_r, select.POLLIN)
            self._write_poll.register(self.err_r, select.POLLIN)

    def _stop_output(self, state: str) -> None:
        """No more waits on the output pipe: its bounds are reached ("paused", until the next move) or it hung up
        ("closed": a hung-up pipe is always ready, a wait on it would spin)."""
        if self._output_state == "open":
            self.read_poll.unregister(self.err_r)
            self._write_poll.unregister(self.err_r)
        self._output_state = state

    def answer_waiting(self) -> bool:
        return bool(self.read_poll.poll(0))

    def send_fast(self, frame: bytes) -> int:
        """Writes what the pipe takes at once (a request fits it: almost always all of it); returns the bytes."""
        try:
            return os.write(self.req_w, frame)
        except (BlockingIOError, BrokenPipeError):
            return 0

    def write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.req_w, view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            except BrokenPipeError:
                self._closed()
            self._full()  # a full pipe: a frozen bot could never empty it
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                deadline = self._overtime(deadline)
                remaining = max(deadline - time.monotonic(), 0.0)
            if self._output_state == "paused":
                remaining = min(remaining, OUTPUT_PAUSE)
            self._write_poll.poll(remaining * 1000)
            self.drain_stderr()

    def read_message(self, deadline: float) -> dict[str, Any]:
        while True:
            message = self._take_frame()
            if message is not None:
                return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                deadline = self._overtime(deadline)
                remaining = max(deadline - time.monotonic(), 0.0)
            if self._output_state == "paused":  # its output is read on a timer now, not when it comes
                self.drain_stderr()
                remaining = min(remaining, OUTPUT_PAUSE)
            events = self.read_poll.poll(remaining * 1000)
            if len(events) == 1 and events[0][0] == self.resp_r:  # the usual case: an answer, nothing on stderr
                answer = True
            else:
                self.drain_stderr()
                answer = any(fd == self.resp_r for fd, _ in events)
            if answer:
                try:
                    chunk = os.read(self.resp_r, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    self._closed()
                self._answer_reads += 1
                if self._answer_reads > READS_PER_MOVE:
                    self._malformed(FrameError(f"answer sent in pieces past {READS_PER_MOVE} reads in one move"))
                if not self._buffer and len(chunk) >= 4:  # usually exactly one whole frame: no buffering
                    (length,) = protocol.HEADER.unpack_from(chunk)
                    if length == len(chunk) - 4 and length <= protocol.MAX_BOT_MESSAGE:
                        try:
                            return protocol.decode_answer(chunk[4:])
                        except FrameError as exc:
                            self._malformed(exc)
                self._buffer += chunk
                if len(self._buffer) > protocol.MAX_BOT_MESSAGE + protocol.HEADER.size:
                    self._check_header()

    def _check_header(self) -> None:
        try:
            protocol.frame_length(bytes(self._buffer[:4]), protocol.MAX_BOT_MESSAGE)
        except FrameError as exc:
            self._malformed(exc)

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
            self._malformed(exc)

    # -- the bot's stderr ------------------------------------------------------------------------
    def drain_stderr(self, final: bool = False) -> None:
        """Reads what the bot printed: within the move's bounds, then (paused) one read every OUTPUT_PAUSE at most;
        ``final``: up to FINAL_OUTPUT more at once, for a failure report."""
        if final:
            self._read_output(FINAL_OUTPUT, FINAL_OUTPUT)
        elif self._output_state == "open":
            self._read_output(OUTPUT_PER_MOVE - self._output, READS_PER_MOVE - self._reads, count=True)
            if self._output >= OUTPUT_PER_MOVE or self._reads >= READS_PER_MOVE:
                self._stop_output("paused")
                self._next_drain = time.monotonic() + OUTPUT_PAUSE
        elif self._output_state == "paused" and time.monotonic() >= self._next_drain:
            self._read_output(1 << 16, 1)
            self._next_drain = time.monotonic() + OUTPUT_PAUSE

    def _read_output(self, budget: int, reads: int, count: bool = False) -> None:
        """Reads the output pipe until it is empty, ``budget`` bytes or ``reads`` reads; keeps the tail."""
        while self._output_state != "closed" and budget > 0 and reads > 0:
            want = min(1 << 16, budget)
            try:
                chunk = os.read(self.err_r, want)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._stop_output("closed")
                return
            budget -= len(chunk)
            reads -= 1
            if count:
                self._reads += 1
                self._output += len(chunk)
            self._stderr += chunk
            if len(self._stderr) > 2 * STDERR_KEEP:
                del self._stderr[:-STDERR_KEEP]
            if len(chunk) < want:  # the pipe is empty: no read to learn it again
                return

    def stderr_text(self) -> str:
        """The tail of everything the bot printed (stdout and stderr)."""
        self.drain_stderr(final=True)
        return bytes(self._stderr[-STDERR_KEEP:]).decode("utf-8", "replace")

    def stderr_tail(self, lines: int = 12) -> str:
        """The last lines of the bot's output, each cut at 300 characters, denied system calls named."""
        tail = self.stderr_text().rstrip().splitlines()[-lines:]
        return seccomp.explain("\n" + "\n".join(line[:300] for line in tail)) if tail else ""

    def close(self) -> None:
        for fd in (self.req_w, self.resp_r, self.err_r):
            try:
                os.close(fd)
            except OSError:
                pass
