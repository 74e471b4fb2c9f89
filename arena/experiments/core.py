"""The machinery every experiment shares: parameters, seeded parallel tasks, Wilson intervals, tables.

An experiment is a named :class:`Experiment` whose ``run(cfg, runner)`` returns :class:`Table` objects.
Work is cut into tasks of a fixed size, each with a seed derived from the experiment's seed and the task's
own key (never from the worker that runs it), so the same seed gives the same tables with 1 or 16 workers.
"""
from __future__ import annotations

import hashlib
import math
import multiprocessing
import os
import random
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from arena.errors import ConfigError
from games.errors import GameSpecError
from games.spec import Param

Z95 = 1.959963984540054  # two-sided 95% normal quantile
Z90 = 1.6448536269514722  # two-sided 90% normal quantile: the interval of a TOST at the 5% level

MARGIN = 0.05
"""Default equivalence margin (5 percentage points): a published number "agrees" only when our 90%
interval lies within it on both sides (two one-sided tests at the 5% level, TOST)."""

VERDICTS = ("equivalent", "different", "cannot tell")


def wilson(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``wins / n`` (``(0, 1)`` when ``n == 0``).

    Draws may be counted as half wins; the interval is then that of the point estimate with ``n`` trials.
    """
    if n <= 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # At p = 0 or 1 the bound equals p exactly; rounding must not push it off (a 0/n cell contains 0).
    lo = 0.0 if wins <= 0 else max(0.0, centre - half)
    hi = 1.0 if wins >= n else min(1.0, centre + half)
    return lo, hi


def derive_seed(base: int, *parts: Any) -> int:
    """A 63-bit seed from ``base`` and a task key: stable across runs, processes and worker counts."""
    digest = hashlib.blake2b(repr((base,) + parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def chunks(total: int, size: int) -> list[int]:
    """``total`` split into pieces of ``size`` (the last one smaller): the task sizes of one cell."""
    size = max(1, size)
    return [min(size, total - start) for start in range(0, total, size)]


# ----- parallel runner --------------------------------------------------------------------------------------
class Runner:
    """Runs picklable ``fn(*args)`` tasks on ``workers`` processes (1: in this process), results in order."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self._pool: ProcessPoolExecutor | None = None

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list[Any]:
        if self.workers == 1 or len(tasks) <= 1:
            return [fn(*task) for task in tasks]
        if self._pool is None:

            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("fork"))
        futures = [self._pool.submit(fn, *task) for task in tasks]
        return [f.result() for f in futures]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Runner:  # noqa: PYI034 (final in practice)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_cell_tasks(runner: Runner, fn: Callable[..., list], cells: Sequence[tuple[Any, tuple]],
                   games: int | dict[Any, int], chunk: int, seed: int) -> dict[Any, list[list]]:
    """Plays ``games`` games (or ``games[key]``) for each cell ``(key, args)`` as tasks
    ``fn(*args, n_games, task_seed)`` returning count vectors; each cell's vectors, one per task, in order.
    Task seeds depend on (seed, key, chunk index). The per-task vectors are the clusters of a clustered
    design (a task that plays one deal from every seat)."""
    tasks, owners = [], []
    for key, args in cells:
        n_games = games[key] if isinstance(games, dict) else games
        for i, n in enumerate(chunks(n_games, chunk)):
            tasks.append(tuple(args) + (n, derive_seed(seed, key, i)))
            owners.append(key)
    out: dict[Any, list[list]] = {}
    for key, counts in zip(owners, runner.map(fn, tasks)):
        out.setdefault(key, []).append(list(counts))
    return out


def run_cells(runner: Runner, fn: Callable[..., list], cells: Sequence[tuple[Any, tuple]], games: int,
              chunk: int, seed: int) -> dict[Any, list]:
    """As :func:`run_cell_tasks`, each cell's task vectors summed."""
    return {key: [sum(col) for col in zip(*vectors)]
            for key, vectors in run_cell_tasks(runner, fn, cells, games, chunk, seed).items()}


def cluster_interval(clusters: Sequence[tuple[float, int]], level: float = 0.95, resamples: int = 4000,
                     seed: int = 0) -> tuple[float, float]:
    """Percentile cluster-bootstrap interval of ``sum(score) / sum(games)`` over ``clusters`` of
    ``(score, games)``: whole clusters are resampled, so games that share a deal (the same board and
    chance seed, played from every seat) are not counted as independent. Seeded: the same clusters give
    the same interval. Fewer than two clusters: ``(0, 1)``."""
    if len(clusters) < 2:
        return 0.0, 1.0
    rng = random.Random(seed)
    k = len(clusters)
    rates = []
    for _ in range(resamples):
        score = games = 0.0
        for _ in range(k):
            s, n = clusters[rng.randrange(k)]
            score += s
            games += n
        rates.append(score / games if games else 0.0)
    rates.sort()
    tail = (1 - level) / 2
    return rates[int(tail * (resamples - 1))], rates[int(math.ceil((1 - tail) * (resamples - 1)))]


# ----- tables -------------------------------------------------------------------------------------------------
@dataclass
class Table:
    """One result table: ``rows`` are dicts over ``columns``. A row with ``wins`` and ``games`` gets its
    ``rate``, 95% ``lo``/``hi`` and 90% ``lo90``/``hi90`` from :meth:`add` (Wilson, or a cluster bootstrap
    when the games came in clusters); ``published`` holds the study's value, if any, and ``verdict`` the
    comparison with it at ``margin`` (:func:`verdict`).

    ``plot`` says how to draw it: ``{"x": column, "y": column, "series": column or None, "kind": "line"|"bar"}``.
    """

    name: str
    title: str
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    plot: dict[str, Any] | None = None
    percent: bool = True
    """``rate``, ``lo``, ``hi``, ``published`` are proportions shown as percentages."""
    margin: float = MARGIN
    """The equivalence margin of the comparison with the study (a proportion: 0.05 = 5 points)."""

    def add(self, wins: float | None = None, games: int | None = None, published: float | None = None,
            clusters: Sequence[tuple[float, int]] | None = None, **cells: Any) -> dict[str, Any]:
        """A row. ``clusters`` (``(score, games)`` per deal) gives cluster-bootstrap intervals instead of
        Wilson's, which would treat the games of one deal as independent."""
        row = dict(cells)
        if wins is not None and games is not None:
            if clusters is not None and len(clusters) >= 2:
                boot_seed = derive_seed(0, self.name, repr(sorted(cells.items(), key=str)))
                lo, hi = cluster_interval(clusters, 0.95, seed=boot_seed)
                lo90, hi90 = cluster_interval(clusters, 0.90, seed=boot_seed)
                row["interval"] = f"cluster bootstrap ({len(clusters)} deals)"
            else:
                lo, hi = wilson(wins, games)
                lo90, hi90 = wilson(wins, games, Z90)
                row["interval"] = "Wilson"
            row.update(games=games, wins=wins, rate=wins / games if games else float("nan"), lo=lo, hi=hi,
                       lo90=lo90, hi90=hi90)
        if "published" in self.columns:
            row["published"] = published
            if published is not None and "lo" in row:
                row["verdict"] = verdict(row, published, self.margin)
        self.rows.append(row)
        return row

    def agreement(self) -> tuple[int, int]:
        """(rows whose published value lies in our 95% interval, rows with a published value). A wide
        interval contains anything: :meth:`verdicts` is the test that can fail."""
        inside = total = 0
        for row in self.rows:
            if row.get("published") is not None and "lo" in row:
                total += 1
                inside += row["lo"] <= row["published"] <= row["hi"]
        return inside, total

    def verdicts(self) -> dict[str, int]:
        """How many rows with a published value are ``equivalent``, ``different`` or ``cannot tell``."""
        counts = dict.fromkeys(VERDICTS, 0)
        for row in self.rows:
            if row.get("verdict") in counts:
                counts[row["verdict"]] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "columns": self.columns, "note": self.note,
                "rows": self.rows}


def verdict(row: dict[str, Any], published: float, margin: float) -> str:
    """The comparison of our rate with the study's ``published`` number, treated as fixed (its own
    sampling error is not included, so "different" is the generous side):

    * ``equivalent``: our 90% interval lies inside ``published +- margin`` (TOST: both one-sided 5% tests
      reject a difference of ``margin`` or more);
    * ``different``: our 95% interval excludes ``published``, and it is not equivalent;
    * ``cannot tell``: neither, the interval is too wide for the margin (a small sample lands here, never
      in "agrees").
    """
    if published - margin <= row["lo90"] and row["hi90"] <= published + margin:
        return "equivalent"
    if not row["lo"] <= published <= row["hi"]:
        return "different"
    return "cannot tell"


# ----- experiments ----------------------------------------------------------------------------------------------
@dataclass
class Experiment:
    """A named, parameterised reproduction of a study's tables."""

    name: str
    title: str
    study: str
    params: dict[str, Param]
    run: Callable[[dict[str, Any], Runner], list[Table]]
    note: str = ""
    """Printed above the tables: what is feasible here and how to reach the study's sizes."""

    def configure(self, settings: dict[str, str] | None = None, games: int | None = None,
                  seed: int | None = None) -> dict[str, Any]:
        """The parameter values: defaults overridden by ``settings`` (raw strings), ``games`` and ``seed``."""
        cfg = {name: p.default for name, p in self.params.items()}
        given = dict(settings or {})
        if games is not None:
            given["games"] = str(games)
        if seed is not None:
            given["seed"] = str(seed)
        for key, raw in given.items():
            if key not in self.params:
                raise ConfigError(f"unknown parameter {key!r} for experiment {self.name!r}; valid parameters: "
                                  + ", ".join(self.params))
            try:
                cfg[key] = self.params[key].convert(key, raw)
            except GameSpecError as exc:
                raise ConfigError(f"experiment {self.name!r}: {exc}") from None
        return cfg


def common_params(games: int, seed: int = 0) -> dict[str, Param]:
    """``games`` (per cell) and ``seed``, shared by every experiment."""
    return {
        "games": Param(int, games, "games per cell (the feasible default here; see the study for its size)",
                       min=1),
        "seed": Param(int, seed, "base seed: every task's seed is derived from it and the task's key", min=0),
    }


def int_list(text: str) -> list[int]:
    """Parses ``1/2/4`` or ``1-8`` or ``1`` into a list of integers (a ``--set`` value)."""
    text = str(text).strip().strip("[]")
    if not text:
        raise ValueError("empty list")
    out: list[int] = []
    for part in text.replace(",", "/").split("/"):
        if "-" in part[1:]:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        else:
            out.append(int(part))
    return out


def float_list(text: str) -> list[float]:
    """Parses ``0.2/1.4/2`` into a list of numbers (a ``--set`` value)."""
    return [float(x) for x in str(text).strip().strip("[]").replace(",", "/").split("/") if x]


def list_param(default: Iterable, doc: str, floats: bool = False) -> Param:
    """A parameter holding a list, written ``a/b/c`` (or ``lo-hi`` for integers) on the command line."""
    return Param(str, list(default), doc + " (a/b/c)", parser=float_list if floats else int_list)


TIE_CODES = {"random": 0, "first": 1, "last": 2}
TIE_PARAM_CHOICES = tuple(TIE_CODES)
