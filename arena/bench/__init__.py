"""``arena bench``: benchmarks measured side by side with a baseline in the same run.

Each suite is a module ``arena.bench.<suite>`` with ``run(quick: bool) -> Iterable[Record]``.
A record's ``ratio`` > 1 always means better than the baseline (value/baseline for rates,
baseline/value for times and sizes), as docs/contracts.md promises for ``--json``.
"""
from __future__ import annotations

import importlib
import inspect
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

SUITES: dict[str, str] = {
    "games": "arena.bench.games",
    "bots": "arena.bench.bots",
    "sandbox": "arena.bench.sandbox",
    "league": "arena.bench.league",
    "scale": "arena.bench.scale",
    "ratings": "arena.bench.ratings",
    "tournament": "arena.bench.tournament",
    "server": "arena.bench.server",
}


@dataclass
class Record:
    """One measurement beside its baseline."""

    suite: str
    """The suite that measured it (``games``, ``bots``, ...)."""
    name: str
    """What was measured, e.g. ``hex(size=7) playouts``."""
    value: float
    """Our measurement."""
    unit: str
    """Unit of value and baseline_value, e.g. ``playouts/s`` or ``s``."""
    baseline: str
    """What we compare against, e.g. ``OpenSpiel C++``."""
    baseline_value: float
    """The baseline's measurement, taken in the same run."""
    ratio: float
    """> 1 means better than the baseline."""
    target: float | None = None
    """The ratio the issue asks for, if any."""
    note: str = ""
    """Anything a reader needs to interpret the number."""
    details: dict[str, float] | None = None
    """Further figures of the same measurement, by name (e.g. the league runner's CPU per game and the serial
    fraction it gives); None when there are none."""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def rate(suite: str, name: str, value: float, unit: str, baseline: str, baseline_value: float,
         target: float | None = None, note: str = "", details: dict[str, float] | None = None) -> Record:
    """A record where more is better (playouts/s, games/s)."""
    return Record(suite, name, value, unit, baseline, baseline_value,
                  value / baseline_value if baseline_value else float("inf"), target, note, details)


def cost(suite: str, name: str, value: float, unit: str, baseline: str, baseline_value: float,
         target: float | None = None, note: str = "", details: dict[str, float] | None = None) -> Record:
    """A record where less is better (seconds, bytes)."""
    return Record(suite, name, value, unit, baseline, baseline_value,
                  baseline_value / value if value else float("inf"), target, note, details)


def median_time(fn: Callable[[], object], repeats: int = 5) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved(fns: dict[str, Callable[[], object]], repeats: int = 5) -> dict[str, float]:
    """Median wall times of several functions measured in alternation (fair on a noisy machine)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for key, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def run_suites(names: Iterable[str], quick: bool = False, full: bool = False) -> list[Record]:
    """Runs the named suites in order and returns all their records. ``full`` reaches the suites that have an
    issue-size run (``scale``); the others ignore it."""
    records: list[Record] = []
    for name in names:
        module = importlib.import_module(SUITES[name])
        wants_full = "full" in inspect.signature(module.run).parameters
        records.extend(module.run(quick=quick, full=full) if wants_full else module.run(quick=quick))
    return records
