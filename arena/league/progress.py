"""Progress of a run of games (``arena league run``, ``arena match``) on stderr.

On a terminal: a bar with done/total, games per second and an ETA. Elsewhere (a log file under ``nohup``,
CI): one line when the run starts and then at least every :data:`INTERVAL` seconds, even while no game
finishes (a Hex league's first game can take a minute). ``quiet`` prints nothing.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from arena.text import markup, shown

INTERVAL = 30.0
"""Seconds between progress lines when stderr is not a terminal."""
SIDECAR_EVERY = 1.0
"""Seconds between writes of the progress file the dashboard reads."""
REFRESH_PER_SECOND = 2
"""Redraws of the terminal bar a second: the league runner draws it in its own process, and rich's default (10)
costs it ~30 ms of CPU a second (docs/scale.md)."""


def read_progress(db: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The progress the league runner holding ``db``'s lock last noted (None without a readable one)."""
    from leaderboards import lock  # start-up: the store only when a sidecar or lock is read
    try:
        data = json.loads(lock.read_note(db) or "null")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``2 h 07 min``: short and readable in a log."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def describe(data: dict[str, Any]) -> str:
    """A progress note as one line: ``12/40 games (30%), 0.52 games/s, ETA 54 s, 2 games in flight`` (a note
    without the live count, from an older runner, says ``up to N at once``: its concurrency)."""
    try:
        done, total = int(data["done"]), None if data.get("total") is None else int(data["total"])
        rate = None if data.get("rate") is None else float(data["rate"])
        eta = None if data.get("eta") is None else float(data["eta"])
        at_once = None if data.get("concurrency") is None else int(data["concurrency"])
        flying = None if data.get("in_flight") is None else int(data["in_flight"])
    except (KeyError, TypeError, ValueError):
        return "progress unknown"
    out = f"{done}/{'?' if total is None else total} games" + (f" ({100 * done // total}%)" if total else "")
    out += f", {rate:.2f} games/s" if rate else ", no game finished yet"
    out += f", ETA {duration(eta)}" if eta is not None else ""
    if flying is not None:
        return out + f", {flying} game{'' if flying == 1 else 's'} in flight"
    return out + (f", up to {at_once} at once" if at_once else "")


class Reporter:
    """Counts finished games against a known total and shows it (see the module's docstring).

    Args:
        label: what runs (``league NAME``, a game); untrusted, shown literally.
        quiet: print nothing.
        stream: where lines go (default stderr); a terminal gets a live bar instead of lines.
        interval: seconds between lines off a terminal.
        clock: monotonic seconds (tests pass a fake).
    """

    def __init__(self, label: str, *, quiet: bool = False, stream: TextIO | None = None,
                 interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic,
                 terminal: bool | None = None, transient: bool = True, sidecar: Path | None = None,
                 concurrency: int | None = None) -> None:
        self.label, self.quiet, self.interval, self.clock = label, quiet, interval, clock
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.transient = transient
        self.total: int | None = None
        self.done = 0
        self.started = clock()
        self._bar: Any = None
        self._job: Any = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._last_line = 0.0
        self.sidecar, self.concurrency = sidecar, concurrency
        """The store whose lock file gets the progress note the dashboard reads (also when quiet: a run under nohup
        is watched too)."""
        self._last_write = float("-inf")
        self.playing: Callable[[], int] | None = None
        """The number of games being played now (the league runner's live count), read each time the note is
        written; None: the note says only the concurrency."""
        self.note_extra: dict[str, Any] = {}
        """More facts for the note (the league runner's ``scheduled``: the schedule it planned at its start)."""

    # -- what is shown ---------------------------------------------------------------------------
    def rate(self) -> float | None:
        """Games per second of this run so far (None before the first game)."""
        elapsed = self.clock() - self.started
        return self.done / elapsed if self.done and elapsed > 0 else None

    def eta(self) -> float | None:
        rate = self.rate()
        if rate is None or self.total is None:
            return None
        return max(0, self.total - self.done) / rate

    def line(self) -> str:
        """``league x: 12/40 games (30%), 0.52 games/s, ETA 54 s, 23 s elapsed``."""
        total = "?" if self.total is None else str(self.total)
        out = f"{shown(self.label)}: {self.done}/{total} games"
        if self.total:
            out += f" ({100 * self.done // self.total}%)"
        rate, eta = self.rate(), self.eta()
        out += f", {rate:.2f} games/s" if rate is not None else ", no game finished yet"
        if eta is not None:
            out += f", ETA {duration(eta)}"
        return out + f", {duration(self.clock() - self.started)} elapsed"

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self, total: int | None) -> None:
        """The run begins (or its total becomes known): ``total`` games to play in it."""
        with self._lock:
            self.total = total
            self._write_sidecar(force=True)
            if not self.quiet:
                if self.terminal:
                    self._start_bar()
                else:
                    self._emit()
            # the ticker: log lines off a terminal, and the note rewritten every SIDECAR_EVERY (its in-flight count
            # is exact when written; written only as a game ends, it would always miss that game's successor)
            if self._ticker is None and (self.sidecar is not None or not (self.quiet or self.terminal)):
                self._ticker = threading.Thread(target=self._tick, name="arena-progress", daemon=True)
                self._ticker.start()

    def advance(self, done: int | None = None) -> None:
        """One more game finished (or ``done`` games in all)."""
        with self._lock:
            self.done = self.done + 1 if done is None else done  # (the ticker notes it: see start)
            if self.quiet:
                return
            if self._bar is not None:
                self._bar.update(self._job, completed=self.done, total=self.total)
                self._refresh_rate()
            elif not self.terminal and self.clock() - self._last_line >= self.interval:
                self._emit()

    def note(self, message: str) -> None:
        """A message above the bar (or as a line); ``message`` is Rich markup with untrusted parts escaped."""
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.console.print(message)
        else:
            # start-up: rich only when printing
            from rich.text import Text
            print(Text.from_markup(message).plain, file=self.stream, flush=True)

    def stop(self) -> None:
        """Ends the display; off a terminal a last line says where the run ended (a log's reader sees it)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1)  # before the note is cleared: the ticker must not write it back
        if self._ticker is not None and not (self.quiet or self.terminal):
            with self._lock:
                self._emit()
        if self.sidecar is not None and self._last_write > float("-inf"):  # ours, and the run is over
            # start-up: only for a run that wrote its note
            from leaderboards import lock
            lock.clear_note(self.sidecar)
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None

    def __enter__(self) -> Reporter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals -------------------------------------------------------------------------------
    def _write_sidecar(self, *, force: bool = False) -> None:
        """Notes done/total/rate/ETA in the store's lock file for the dashboard (leaderboards.lock.write_note)."""
        if self.sidecar is None or (not force and self.clock() - self._last_write < SIDECAR_EVERY):
            return
        from leaderboards import lock  # start-up: the store only when a sidecar or lock is read
        self._last_write = self.clock()
        lock.write_note(self.sidecar, json.dumps({
            "label": self.label, "done": self.done, "total": self.total, "rate": self.rate(), "eta": self.eta(),
            "concurrency": self.concurrency, "in_flight": None if self.playing is None else self.playing(),
            "pid": os.getpid(), "updated": time.time(), **self.note_extra}))

    def _emit(self) -> None:
        self._last_line = self.clock()
        print(self.line(), file=self.stream, flush=True)

    def _tick(self) -> None:
        # a line at least every interval, also while no game finishes (Event.wait: stop() ends it at once)
        while not self._stop.wait(min(self.interval, SIDECAR_EVERY)):
            with self._lock:
                if not (self.quiet or self.terminal) and self.clock() - self._last_line >= self.interval:
                    self._emit()
                self._write_sidecar(force=True)

    def _start_bar(self) -> None:
        if self._bar is not None:
            self._bar.update(self._job, total=self.total)
            return
        from rich.console import Console  # start-up: rich only when printing
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        console = Console(file=self.stream, force_terminal=True)
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"),
                             TimeRemainingColumn(), console=console, transient=self.transient,
                             refresh_per_second=REFRESH_PER_SECOND)
        self._bar.start()
        # the description is parsed as markup: the label is escaped
        self._job = self._bar.add_task(markup(self.label), total=self.total, completed=self.done, rate="")
        self._refresh_rate()

    def _refresh_rate(self) -> None:
        if self._bar is not None:
            rate = self.rate()
            self._bar.update(self._job, rate="" if rate is None else f"{rate:.2f} games/s")
