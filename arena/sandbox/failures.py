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


def exit_fact(code: int | None) -> str:
    """What the kernel reported of the process's end, as a fact: ``exited with status 152``, ``killed by signal
    SIGXCPU``."""
    if code is None:
        return "closed its pipe and did not exit"
    if code >= 0:
        return f"exited with status {code}"
    try:
        return f"killed by signal {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def ended(code: int | None, oom: bool, tail: str, memory_mb: int, cpu_limit_reached: bool = False) -> BotError:
    """The process closed its pipe: why, from what the referee established alone. ``oom``: its memory group's OOM
    events; ``cpu_limit_reached``: the CPU time the referee measured reached its RLIMIT_CPU. A kill by SIGXCPU or
    SIGKILL is the CPU limit only then (a bot can send either to itself); its exit status and its output are facts
    to record, never a reason (a bot can ``os._exit(152)`` or print "MemoryError")."""
    tail = hide_host_paths(tail)
    if oom:
        return BotMemoryError(f"bot exceeded the memory limit ({memory_mb} MB){tail}")
    what = exit_fact(code)
    if cpu_limit_reached and code in (-signal.SIGXCPU, -signal.SIGKILL):
        return BotTimeoutError(f"bot exceeded its CPU time limit (process {what}){tail}")
    return BotCrashedError(f"bot process {what}{tail}")


def reported(reply: dict[str, Any], tail: str, oom: bool = False, memory_group: bool = False) -> BotError:
    """The bot reported its own failure (``{"type": "error"}``), or sent a message that is not part of the protocol.
    A MemoryError it reports is ``memory`` only when its memory group's OOM events confirm it (``oom``); else it
    is the bot's word: a crash that quotes it (without a memory group, RLIMIT_AS shows only as that MemoryError)."""
    if reply.get("type") == "error":
        detail = hide_host_paths(seccomp.explain(f"{str(reply.get('detail', ''))[:300]}{tail}"))
        if reply.get("reason") == Termination.MEMORY:
            if oom:
                return BotMemoryError(f"bot ran out of memory: {detail}")
            why = "no OOM event in its memory group" if memory_group else "no memory group here"
            return BotCrashedError(f"bot raised MemoryError, which the referee could not confirm ({why}): {detail}")
        return BotCrashedError(f"bot raised an exception: {detail}")
    return ProtocolError(hide_host_paths(f"unexpected message from bot: {str(reply)[:200]}"))


def start_failed(exc: BaseException, tail: str) -> BotError:
    return BotCrashedError(hide_host_paths(f"bot process failed to start: {exc}{tail}"))
