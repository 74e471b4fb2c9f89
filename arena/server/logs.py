"""The log of ``arena serve``, rate-limited: what a stranger can make the server log (a bad request, an accept
error, a full server) is at most :data:`LINES` lines of one kind per :data:`PERIOD` seconds, so the log grows
with time, never with an attacker's traffic."""
from __future__ import annotations

import logging
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

LINES = 5
"""Lines of one kind let through in each period."""
PERIOD = 60.0
"""Seconds of a period."""
KINDS = 1000
"""Kinds remembered at once (the least recently logged forgotten first)."""
LOGGER = "arena.serve"
"""The server's own logger (its lines go through the same limit)."""


_VARYING = re.compile(r"'[^']*'|\"[^\"]*\"|b'[^']*'|\d+")
"""What a message fills in from the request (numbers, quoted values): not part of its kind."""


def kind_of(message: str) -> str:
    """A message's kind: its first line without what the request filled in (a library that formats its message
    before logging it, ``Expected boundary character 99, got 45 at index 3``, makes one kind of all of them)."""
    return _VARYING.sub("#", message.split("\n", 1)[0])[:120]


class Repeats(logging.Filter):
    """Lets :data:`LINES` records of one kind (logger, the message's first line, the exception's type) through per
    :data:`PERIOD`; the last one says that more are dropped, and the first of the next period how many were."""

    def __init__(self, lines: int = LINES, period: float = PERIOD, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        super().__init__()
        self.lines, self.period, self.clock = lines, period, clock
        self.kinds: OrderedDict[tuple[str, str, str], list[float]] = OrderedDict()
        """kind -> [start of its period, lines let through in it, lines dropped in it]."""
        self.lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        kind = (record.name, kind_of(str(record.msg)), type(error).__name__ if error else "")
        now = self.clock()
        with self.lock:
            seen = self.kinds.pop(kind, None)
            if seen is None or now - seen[0] >= self.period:
                dropped = int(seen[2]) if seen is not None else 0
                seen = [now, 0, 0]
                if dropped:
                    lines = "line" if dropped == 1 else "lines"
                    self._note(record, f" [{dropped} {lines} like this dropped before this one]")
            self.kinds[kind] = seen
            while len(self.kinds) > KINDS:
                self.kinds.popitem(last=False)
            if seen[1] >= self.lines:
                seen[2] += 1
                return False
            seen[1] += 1
            if seen[1] == self.lines:
                self._note(record, f" [further lines like this dropped for {self.period:g} s]")
            return True

    @staticmethod
    def _note(record: logging.LogRecord, text: str) -> None:
        record.msg = str(record.msg) + (text.replace("%", "%%") if record.args else text)


def limit(loggers: tuple[str, ...] = ("uvicorn", "uvicorn.error", "uvicorn.access")) -> Repeats:
    """Puts one :class:`Repeats` on the handlers of ``loggers`` and on a stderr handler of the root logger (asyncio's
    and arena's own lines reach it; without it they would go to logging's last resort, unlimited)."""
    repeats = Repeats()
    for name in loggers:
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(repeats)
    root = logging.getLogger()
    if not any(repeats in h.filters for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler.setLevel(logging.WARNING)
        handler.addFilter(repeats)
        root.addHandler(handler)
    return repeats
