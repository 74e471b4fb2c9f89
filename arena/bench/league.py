"""``arena bench league``: games per second of a league of fast bots.

Measured side by side in one run, end to end through the real runner (worker pool or Ray tasks, the
sandboxed referee, the store and the ratings):

- concurrency N (the number of cores) against concurrency 1: the ratio is the speed-up, the target is
  80% scaling efficiency (ratio >= 0.8 N);
- the Ray backend against the local backend on the same league and concurrency (Ray started before
  the clock starts; skipped with a note when Ray is not installed).
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from arena.bench import Record, rate
from arena.league import LeagueConfig, parse_config

SUITE = "league"


def league(games_per_pairing: int) -> LeagueConfig:
    """Nim among four fast bots: 6 pairings x games_per_pairing games."""
    return parse_config({
        "name": "bench", "games": ["nim"], "games_per_pairing": games_per_pairing, "seed": 1,
        "bots": [{"name": "random", "spec": "random"}, {"name": "greedy", "spec": "greedy"},
                 {"name": "random-b", "spec": "random"}, {"name": "mc", "spec": "mc(n=2)"}],
    }, where="bench league")


def games_per_second(config: LeagueConfig, concurrency: int, backend: str = "local") -> float:
    """Plays the whole league into a fresh store; games / wall seconds."""
    from arena.runner import run_league
    directory = tempfile.mkdtemp(prefix="arena-bench-league-")
    try:
        t0 = time.perf_counter()
        summary = run_league(config, db=Path(directory) / "bench.sqlite", concurrency=concurrency, backend=backend)
        elapsed = time.perf_counter() - t0
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if summary.errors:
        raise RuntimeError(f"bench league: {summary.errors[0]}")
    return summary.played / elapsed


def run(quick: bool = False) -> Iterable[Record]:
    config = league(4 if quick else 10)
    n = os.cpu_count() or 1
    games = len(config.bots) * (len(config.bots) - 1) // 2 * config.games_per_pairing
    one = games_per_second(config, 1)
    many = games_per_second(config, n)
    yield rate(SUITE, f"nim league, {games} games, concurrency {n}", many, "games/s", "concurrency 1", one,
               target=0.8 * n, note=f"scaling efficiency {many / one / n:.0%} on {n} cores (target 80%)")
    try:
        import ray
    except ImportError:
        print("bench league: ray is not installed, skipping Ray vs local (pip install 'arena[ray]')", file=sys.stderr)
        return
    ray.init(num_cpus=n, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = games_per_second(config, n, backend="ray")
    finally:
        ray.shutdown()
    local = games_per_second(config, n)
    yield rate(SUITE, f"nim league, {games} games, Ray backend, concurrency {n}", on_ray, "games/s",
               "local backend", local, note="same league and seeds; the local time includes starting its worker processes, Ray's own start-up "
                    "(ray.init, ~10-20 s) is excluded")
