"""What a bot's failure is called: the :class:`arena.errors.BotError` for a process that ended, a failure the bot
reported itself, or an answer outside the protocol (docs/sandbox.md, the failure table). Decided here only."""
from __future__ import annotations

import signal
from typing import Any

from arena.errors import BotCrashedError, BotError, BotMemoryError, BotTimeoutError, ProtocolError
from arena.results.outcome import Termination
from arena.sandbox import seccomp


def ended(code: int | None, oom: bool, tail: str, memory_mb: int) -> BotError:
    """The process closed its pipe: why (OOM kill, CPU limit, exception, signal)."""
    if oom or "MemoryError" in tail[-2000:]:
        return BotMemoryError(f"bot exceeded the memory limit ({memory_mb} MB){tail}")
    if code == -signal.SIGXCPU:
        return BotTimeoutError(f"bot exceeded its CPU time limit{tail}")
    what = "closed its pipe and did not exit" if code is None else \
        f"killed by signal {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
    return BotCrashedError(f"bot process {what}{tail}")


def reported(reply: dict[str, Any], tail: str) -> BotError:
    """The bot reported its own failure (``{"type": "error"}``), or sent a message that is not part of the protocol."""
    if reply.get("type") == "error":
        detail = seccomp.explain(f"{str(reply.get('detail', ''))[:300]}{tail}")
        if reply.get("reason") == Termination.MEMORY:  # the only failure a bot may name itself: else a crash
            return BotMemoryError(f"bot ran out of memory: {detail}")
        return BotCrashedError(f"bot raised an exception: {detail}")
    return ProtocolError(f"unexpected message from bot: {str(reply)[:200]}")


def start_failed(exc: BaseException, tail: str) -> BotError:
    return BotCrashedError(f"bot process failed to start: {exc}{tail}")
