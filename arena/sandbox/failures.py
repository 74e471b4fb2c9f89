"""What a bot's failure is called: the :class:`arena.errors.BotError` for a process that ended, a failure the bot
reported itself, or an answer outside the protocol (docs/sandbox.md, the failure table). Decided here only."""
from __future__ import annotations

import functools
import os
import re
import signal
import sys
from typing import Any

from arena.errors import BotCrashedError, BotError, BotMemoryError, BotTimeoutError, ProtocolError
from arena.results.outcome import Termination
from arena.sandbox import seccomp


@functools.lru_cache(maxsize=1)
def _host_folders() -> tuple[tuple[str, str], ...]:
    """(host folder, what it is called in a failure's text), longest first: where this install lives on the host
    is nobody's business but the organiser's, and a library's message (numpy's import error) names it."""
    names: dict[str, str] = {}
    for path in sys.path:
        if path.endswith(("site-packages", "dist-packages")):
            names[path] = names[os.path.realpath(path)] = "<site-packages>"
    arena_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for path in (arena_root, os.path.realpath(arena_root)):
        names.setdefault(path, "<arena>")
    for prefix in {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}:
        for path in (prefix, os.path.realpath(prefix)):
            names.setdefault(path, "<python>")
    return tuple(sorted(((p, n) for p, n in names.items() if len(p) > 1), key=lambda x: -len(x[0])))


def hide_host_paths(text: str) -> str:
    """``text`` with the host's install folders (site-packages, arena's checkout, the interpreter's prefix)
    named instead of shown: every failure's text passes here before it is recorded."""
    for path, name in _host_folders():
        if path in text:  # the folder itself or below it, not a longer name that starts the same
            text = re.sub(re.escape(path) + r"(?![\w.-])", name, text)
    return text


def ended(code: int | None, oom: bool, tail: str, memory_mb: int) -> BotError:
    """The process closed its pipe: why (OOM kill, CPU limit, exception, signal)."""
    tail = hide_host_paths(tail)
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
        detail = hide_host_paths(seccomp.explain(f"{str(reply.get('detail', ''))[:300]}{tail}"))
        if reply.get("reason") == Termination.MEMORY:  # the only failure a bot may name itself: else a crash
            return BotMemoryError(f"bot ran out of memory: {detail}")
        return BotCrashedError(f"bot raised an exception: {detail}")
    return ProtocolError(hide_host_paths(f"unexpected message from bot: {str(reply)[:200]}"))


def start_failed(exc: BaseException, tail: str) -> BotError:
    return BotCrashedError(hide_host_paths(f"bot process failed to start: {exc}{tail}"))
