"""The machinery every experiment shares: parameters, seeded parallel tasks, Wilson intervals, tables.

An experiment is a named :class:`Experiment` whose ``run(cfg, runner)`` returns :class:`Table` objects.
Work is cut into tasks of a fixed size, each with a seed derived from the experiment's seed and the task's
own key (never from the worker that runs it), so the same seed gives the same tables with 1 or 16 workers.
"""
from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from arena.errors import ConfigError
from games.errors import GameSpecError
from games.spec import Param

Z95 = 1.959963984540054  # two-sided 95% normal quantile


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
            import multiprocessing

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


def run_cells(runner: Runner, fn: Callable[..., list], cells: Sequence[tuple[Any, tuple]], games: int,
              chunk: int, seed: int) -> dict[Any, list]:
    """Plays ``games`` games for each cell ``(key, args)`` as tasks ``fn(*args, n_games, task_seed)``
    returning count vectors, and sums each cell's vectors. Task seeds depend on (seed, key, chunk index)."""
    tasks, owners = [], []
    for key, args in cells:
        for i, n in enumerate(chunks(games, chunk)):
            tasks.append(tuple(args) + (n, derive_seed(seed, key, i)))
            owners.append(key)
    totals: dict[Any, list] = {}
    for key, counts in zip(owners, runner.map(fn, tasks)):
        if key in totals:
            totals[key] = [a + b for a, b in zip(totals[key], counts)]
        else:
            totals[key] = list(counts)
    return totals


# ----- tables -------------------------------------------------------------------------------------------------
@dataclass
class Table:
    """One result table: ``rows`` are dicts over ``columns``. A row with ``wins`` and ``games`` gets its
    ``rate`` and 95% Wilson ``lo``/``hi`` from :meth:`add`; ``published`` holds the study's value, if any.

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

    def add(self, wins: float | None = None, games: int | None = None, published: float | None = None,
            **cells: Any) -> dict[str, Any]:
        row = dict(cells)
        if wins is not None and games is not None:
            lo, hi = wilson(wins, games)
            row.update(games=games, wins=wins, rate=wins / games if games else float("nan"), lo=lo, hi=hi)
        if "published" in self.columns:
            row["published"] = published
        self.rows.append(row)
        return row

    def agreement(self) -> tuple[int, int]:
        """(rows whose published value lies in our 95% interval, rows with a published value)."""
        inside = total = 0
        for row in self.rows:
            if row.get("published") is not None and "lo" in row:
                total += 1
                inside += row["lo"] <= row["published"] <= row["hi"]
        return inside, total

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "columns": self.columns, "note": self.note,
                "rows": self.rows}


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
