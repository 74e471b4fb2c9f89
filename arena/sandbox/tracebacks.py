"""A bot's traceback as its author needs it: the frames of the bot's own code, with paths relative to its snapshot.

A bot's exception passes through arena's own code (the bot host, the COMP424 adapter, the OpenSpiel wrapper) and
maybe libraries; those frames name the organiser's install path and say nothing the author can fix. Used in the bot's
process (imports only the standard library: the bot host loads it before every bot).
"""
from __future__ import annotations

import os
import traceback

_ARENA_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding arena/, bots/, games/


def bot_traceback(exc: BaseException, root: str | None) -> str:
    """``exc``'s traceback with only the frames under ``root`` (the bot's snapshot folder), their paths relative to
    it; ``root`` None (a built-in bot): arena's own frames, relative to arena's folder. Chained exceptions are kept
    and filtered alike; a syntax error's file is made relative too. Never raises (the text may come from bot code)."""
    base = os.path.abspath(root) if root else _ARENA_ROOT
    try:
        te = traceback.TracebackException.from_exception(exc, capture_locals=False)
        seen: set[int] = set()
        todo = [te]
        while todo:
            t = todo.pop()
            if id(t) in seen:
                continue
            seen.add(id(t))
            _keep_own(t, base)
            todo.extend(x for x in (t.__cause__, t.__context__) if x is not None)
        return "".join(te.format()).rstrip("\n")
    except BaseException:  # noqa: BLE001 - a raising __str__, a deep chain: the type alone still says what
        try:
            return f"{type.__dict__['__name__'].__get__(type(exc))} (its traceback could not be shown)"
        except BaseException:  # noqa: BLE001
            return "an exception (its traceback could not be shown)"


def _relative(path: str, base: str) -> str | None:
    """``path`` relative to ``base``, or None when it lies outside it."""
    try:
        full = os.path.abspath(path)
    except (TypeError, ValueError):
        return None
    if full == base or not full.startswith(base.rstrip(os.sep) + os.sep):
        return None
    return os.path.relpath(full, base)


def _keep_own(te: traceback.TracebackException, base: str) -> None:
    frames = [f for f in te.stack if _relative(f.filename, base) is not None]
    for f in frames:
        f.filename = _relative(f.filename, base) or f.filename
    te.stack = traceback.StackSummary.from_list(frames)
    filename = getattr(te, "filename", None)  # a SyntaxError's own file and line
    if isinstance(filename, str):
        te.filename = _relative(filename, base) or os.path.basename(filename)
