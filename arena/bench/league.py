"""``arena bench league``: games per second of a league of fast bots.

Measured side by side in one run, end to end through the real runner (worker pool or Ray tasks, the
sandboxed referee, the store and the ratings):

- concurrency N (the number of cores) against concurrency 1: the ratio is the speed-up, the target is
  80% scaling efficiency (ratio >= 0.8 N);
- the Ray backend on a real two-node local cluster against the local backend at the same concurrency, and
  the milliseconds Ray adds to each game (target: at most 5 ms; skipped with a note when Ray is not
  installed).
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
from arena.ray_cluster import LocalCluster

SUITE = "league"


def league(games_per_pairing: int) -> LeagueConfig:
    """Nim among four fast bots: 6 pairings x games_per_pairing games."""
    return parse_config({
        "name": "bench", "games": ["nim"], "games_per_pairing": games_per_pairing, "seed": 1,
        "bots": [{"name": "random", "spec": "random"}, {"name": "greedy", "spec": "greedy"},
                 {"name": "random-b", "spec": "random"}, {"name": "mc", "spec": "mc(n=2)"}],
    }, where="bench league")


def timed_run(config: LeagueConfig, concurrency: int, backend: str = "local") -> tuple[int, float]:
    """Plays the whole league into a fresh store; (games played, wall seconds) end to end: store set-up,
    worker start-up (each worker starts its own fork server once), every game, the writer, the ratings."""
    # start-up: the runner (sandbox, workers) only when a league runs
    from arena.league_runner import run_league
    directory = tempfile.mkdtemp(prefix="arena-bench-league-")
    try:
        t0 = time.perf_counter()
        summary = run_league(config, db=Path(directory) / "bench.sqlite", concurrency=concurrency, backend=backend)
        elapsed = time.perf_counter() - t0
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if summary.errors:
        raise RuntimeError(f"bench league: {summary.errors[0]}")
    return summary.played, elapsed


def games_per_second(config: LeagueConfig, concurrency: int, backend: str = "local") -> float:
    """End-to-end games/s of one whole league (start-up included)."""
    played, elapsed = timed_run(config, concurrency, backend)
    return played / elapsed


def steady_state(small: LeagueConfig, big: LeagueConfig, concurrency: int, backend: str = "local"
                 ) -> tuple[float, float]:
    """(steady-state games/s, end-to-end games/s of ``big``). Steady state is the difference of two runs,
    (games_big - games_small) / (time_big - time_small): every one-time cost (store creation, worker and
    fork-server start-up, the last rating pass) cancels, the same way for every concurrency."""
    g_small, t_small = timed_run(small, concurrency, backend)
    g_big, t_big = timed_run(big, concurrency, backend)
    return (g_big - g_small) / max(t_big - t_small, 1e-9), g_big / t_big


def run(quick: bool = False) -> Iterable[Record]:
    small, big = league(2), league(6 if quick else 20)
    n = os.cpu_count() or 1
    games = len(big.bots) * (len(big.bots) - 1) // 2 * big.games_per_pairing
    one, one_e2e = steady_state(small, big, 1)
    many, many_e2e = steady_state(small, big, n)
    yield rate(SUITE, f"nim league, concurrency {n}, steady state (start-up excluded)", many, "games/s",
               "concurrency 1", one, target=0.8 * n,
               note=f"scaling efficiency {many / one / n:.0%} on {n} cores (target 80%); games/s of a {games}-game "
                    f"league minus a {len(small.bots) * (len(small.bots) - 1) // 2 * small.games_per_pairing}-game one "
                    "(one-time costs cancel for both sides)")
    yield rate(SUITE, f"nim league, {games} games, concurrency {n}, end to end (start-up included)", many_e2e,
               "games/s", "concurrency 1", one_e2e,
               note=f"scaling efficiency {many_e2e / one_e2e / n:.0%}: store set-up, worker and fork-server start-up "
                    "counted on both sides")
    yield from ray_vs_local(small, big, quick)


def ray_vs_local(small: LeagueConfig, big: LeagueConfig, quick: bool = False) -> Iterable[Record]:
    """The Ray backend on a real two-node cluster on this host (one CPU per node, started before the clock, its
    own temp dirs, token authentication: :mod:`arena.ray_cluster`) against the local backend at the same
    concurrency (2), measured alternately in one run: steady state (every one-time cost cancels) and the ms
    Ray adds to each game's slot, and end to end (a driver connecting to the running cluster)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        print("bench league: ray is not installed, skipping Ray vs local (pip install 'arena[ray]')", file=sys.stderr)
        return
    from arena.ray_backend import connect
    n = 2
    with LocalCluster(nodes=2, cpus=1) as cluster:
        previous = {k: os.environ.get(k) for k in cluster.env}
        os.environ.update(cluster.env)
        try:
            connect(cluster.address)  # one driver for every Ray run: the cluster's workers stay warm between them
            samples: dict[str, list[tuple[float, float]]] = {"local": [], "ray": []}
            for _ in range(1 if quick else 2):  # alternately: load from the rest of the machine hits both alike
                for backend in ("local", "ray"):
                    samples[backend].append(steady_state(small, big, n, backend))
        finally:
            import ray
            ray.shutdown()
            for k, v in previous.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    local = max(s for s, _ in samples["local"])
    on_ray = max(s for s, _ in samples["ray"])
    local_e2e = max(e for _, e in samples["local"])
    ray_e2e = max(e for _, e in samples["ray"])
    games = len(big.bots) * (len(big.bots) - 1) // 2 * big.games_per_pairing
    added = n * (1 / on_ray - 1 / local) * 1000  # ms of a concurrency slot each game costs more on Ray
    yield rate(SUITE, f"nim league, Ray on a local two-node cluster, concurrency {n}, steady state", on_ray,
               "games/s", "local backend", local, target=None,
               note=f"Ray adds {added:+.1f} ms per game (target: at most 5 ms); best of "
                    f"{len(samples['ray'])} alternating runs each")
    yield rate(SUITE, f"nim league, {games} games, Ray on a local two-node cluster, concurrency {n}, end to end",
               ray_e2e, "games/s", "local backend", local_e2e,
               note="the cluster is running (started before the clock), the driver connected; the local side "
                    "starts its worker processes")
