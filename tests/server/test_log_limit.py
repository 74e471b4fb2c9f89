"""The log of `arena serve` grows with time, not with traffic: LINES lines of one kind per PERIOD, then a count."""
from __future__ import annotations

import logging

from arena.server.logs import LINES, PERIOD, Repeats


def record(msg: str, *args: object, name: str = "uvicorn.error", error: BaseException | None = None
           ) -> logging.LogRecord:
    exc_info = (type(error), error, None) if error else None
    return logging.LogRecord(name, logging.WARNING, __file__, 1, msg, args, exc_info)


def test_lines_of_one_kind_are_limited_per_period_and_the_dropped_ones_counted() -> None:
    now = [0.0]
    repeats = Repeats(clock=lambda: now[0])
    shown = [r.getMessage() for r in (record("Invalid HTTP request received.") for _ in range(1000))
             if repeats.filter(r)]
    assert len(shown) == LINES
    assert "further lines like this dropped" in shown[-1]
    # another kind (another message, or the same one with another exception) has its own count
    assert repeats.filter(record("socket.accept() out of system resource", error=OSError(24, "Too many")))
    assert repeats.filter(record("Invalid HTTP request received.", error=ValueError("x")))
    now[0] += PERIOD
    first = record("Invalid HTTP request received.")
    assert repeats.filter(first)
    assert f"[{1000 - LINES} lines like this dropped before this one]" in first.getMessage()
    now[0] += PERIOD
    again = record("Invalid HTTP request received.")
    assert repeats.filter(again) and "dropped" not in again.getMessage()


def test_a_message_with_arguments_keeps_them_and_a_percent_in_the_note_is_harmless() -> None:
    now = [0.0]
    repeats = Repeats(lines=1, period=10, clock=lambda: now[0])
    r = record("%d connections open (%s)", 64, "100%")
    assert repeats.filter(r)
    assert r.getMessage() == "64 connections open (100%) [further lines like this dropped for 10 s]"
    assert not repeats.filter(record("%d connections open (%s)", 65, "x"))
    now[0] = 10
    r = record("%d connections open (%s)", 66, "y")
    assert repeats.filter(r)
    assert r.getMessage().startswith("66 connections open (y) [1 line like this dropped before this one]")
