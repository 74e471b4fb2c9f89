"""``arena bench league``: games per second of a league of fast bots.

Measured side by side in one run, end to end through the real runner (worker pool or Ray tasks, the
sandboxed referee, the store and the ratings):

- concurrency N (the number of cores) against concurrency 1: the ratio is the speed-up, the target is
  80% scaling efficiency (ratio >= 0.8 N);
- the same for a league of 8 sandboxed bot files (random players), and the league runner's own CPU per game
  (its process, not its workers; target: at most 0.5 ms), the writer's part of it, a game's cost, the serial
  fraction they give and Amdahl's prediction of the efficiency at 16 concurrent games (docs/scale.md);
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
from dataclasses import dataclass
from pathlib import Path

from arena.bench import Record, cost, rate
from arena.league.config import LeagueConfig, parse_config
from arena.league.ray_cluster import LocalCluster

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
    from arena.league.runner import run_league
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


RANDOM_FILE = """import random


class Bot:
    def __init__(self, game, seat, seed):
        self.rng = random.Random(seed + {i})

    def step(self, state, limit):
        return self.rng.choice(state.legal_actions())
"""
FILE_BOTS = 8


def file_league(directory: Path, games_per_pairing: int) -> LeagueConfig:
    """Nim among 8 sandboxed file bots (random players, each its own file): 28 pairings x games_per_pairing."""
    bots = []
    for i in range(FILE_BOTS):  # (read when called: a test makes the league smaller)
        path = directory / f"bot{i}.py"
        path.write_text(RANDOM_FILE.format(i=i))
        bots.append({"name": f"file-{i}", "file": str(path)})
    return parse_config({"name": "bench-files", "games": ["nim"], "games_per_pairing": games_per_pairing,
                         "seed": 1, "bots": bots}, where="bench league")


@dataclass(frozen=True)
class RunnerCost:
    """One whole league run in this process, as ``arena league run --quiet`` plays it (the progress note included)."""

    games: int
    wall: float
    """Seconds end to end."""
    runner_cpu: float
    """CPU seconds of this process (the runner: dispatch, results, store, ratings, progress; not its workers)."""
    writer_cpu: float
    """Of which storing games and folding ratings."""


def runner_cost(config: LeagueConfig, concurrency: int) -> RunnerCost:
    """Plays ``config`` into a fresh store and measures the runner process's own CPU (``time.process_time``: this
    process, every thread, no child) beside the wall time."""
    from arena.league.progress import Reporter
    from arena.league.runner import run_league  # start-up: the runner only when a league runs
    directory = tempfile.mkdtemp(prefix="arena-bench-league-")
    try:
        db = Path(directory) / "bench.sqlite"
        reporter = Reporter("bench", quiet=True, sidecar=db, concurrency=concurrency)
        cpu, t0 = time.process_time(), time.perf_counter()
        try:
            summary = run_league(config, db=db, concurrency=concurrency,
                                 progress=lambda done, *_: reporter.advance(done),
                                 on_start=lambda so_far: reporter.start(so_far.scheduled - so_far.already))
        finally:
            reporter.stop()
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if summary.errors or summary.overloaded:
        raise RuntimeError(f"bench league: {(summary.errors or summary.overloaded)[0]}")
    return RunnerCost(summary.played, wall, cpu, summary.writer_cpu)


def amdahl_efficiency(serial: float, n: int) -> float:
    """Amdahl's law: the efficiency at ``n`` concurrent games of work whose fraction ``serial`` cannot overlap."""
    return 1 / (serial + (1 - serial) / n) / n


def serial_figures(small1: RunnerCost, big1: RunnerCost) -> dict[str, float]:
    """The serial fraction from two runs at concurrency 1 (differences: one-time costs cancel): per game the
    runner's CPU and the writer's part of it, the game's cost (a slot's wall time per game less the runner's
    work, which a slot waits for at concurrency 1), the fraction ``runner / (runner + game)`` and Amdahl's
    efficiency at 16 concurrent games from it, and the runner's own ceiling in games/s.

    On a loaded machine a difference can come out zero or negative (the noise of the small run exceeds what the
    extra games cost): that figure is then the big run's own per-game average (one-time costs included, so an
    upper bound), and ``fallback`` says so (1.0; 0.0 when both figures are differences)."""
    games = big1.games - small1.games
    runner = (big1.runner_cpu - small1.runner_cpu) / games
    writer = (big1.writer_cpu - small1.writer_cpu) / games
    game = (big1.wall - small1.wall) / games - runner
    fallback = runner <= 0 or writer < 0 or game <= 0
    if fallback:
        runner, writer = big1.runner_cpu / big1.games, big1.writer_cpu / big1.games
        game = big1.wall / big1.games - runner
    game = max(game, 1e-9)  # (the runner's CPU is part of the wall time it ran in: only a clock's rounding is left)
    serial = runner / (runner + game)
    return {"runner_cpu_ms_per_game": runner * 1e3, "writer_cpu_ms_per_game": writer * 1e3,
            "game_cost_ms": game * 1e3, "serial_fraction": serial,
            "amdahl_efficiency_16": amdahl_efficiency(serial, 16),
            "runner_ceiling_games_per_s": 1 / runner if runner > 0 else float("inf"),
            "fallback": 1.0 if fallback else 0.0}


def sandboxed(quick: bool = False) -> Iterable[Record]:
    """The sandboxed file-bot league: games/s at N (the cores) against 1, steady state, and the runner's own
    CPU per game with the serial fraction and Amdahl's prediction for 16 cores."""
    n = os.cpu_count() or 1
    directory = Path(tempfile.mkdtemp(prefix="arena-bench-files-"))
    try:
        small, big = file_league(directory, 2), file_league(directory, 4 if quick else 20)
        runs = {c: (runner_cost(small, c), runner_cost(big, c)) for c in (1, n)}
    finally:
        shutil.rmtree(directory, ignore_errors=True)

    def steady(c: int) -> float:
        (s, b) = runs[c]
        return (b.games - s.games) / max(b.wall - s.wall, 1e-9)
    figures = serial_figures(*runs[1])
    many = serial_figures(*runs[n])  # the runner's CPU per game when the cores are busy with games too
    games = runs[1][1].games
    yield rate(SUITE, f"sandboxed file-bot nim league ({FILE_BOTS} bot files), concurrency {n}, steady state",
               steady(n), "games/s", "concurrency 1", steady(1), target=0.8 * n,
               note=f"scaling efficiency {steady(n) / steady(1) / n:.0%} on {n} cores (target 80%); a {games}-game "
                    f"league minus a {runs[1][0].games}-game one")
    yield cost(SUITE, "sandboxed file-bot nim league: runner CPU per game, concurrency 1",
               figures["runner_cpu_ms_per_game"], "ms", "game cost", figures["game_cost_ms"],
               note=f"runner CPU {figures['runner_cpu_ms_per_game']:.3f} ms/game (target <= 0.5; at concurrency {n}: "
                    f"{many['runner_cpu_ms_per_game']:.3f}), of which the writer "
                    f"{figures['writer_cpu_ms_per_game']:.3f}; "
                    f"game {figures['game_cost_ms']:.1f} ms; serial fraction {figures['serial_fraction']:.2%}; Amdahl "
                    f"predicts {figures['amdahl_efficiency_16']:.0%} efficiency at 16 concurrent games; the runner "
                    f"alone caps a league at {figures['runner_ceiling_games_per_s']:,.0f} games/s"
                    + ("; from the big run alone (the machine's noise swallowed the difference)"
                       if figures["fallback"] else ""),
               details={**figures, "runner_cpu_ms_per_game_at_n": many["runner_cpu_ms_per_game"],
                        "writer_cpu_ms_per_game_at_n": many["writer_cpu_ms_per_game"], "concurrency_n": float(n)})


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
    yield from sandboxed(quick)
    yield from ray_vs_local(small, big, quick)


def ray_vs_local(small: LeagueConfig, big: LeagueConfig, quick: bool = False) -> Iterable[Record]:
    """The Ray backend on a real two-node cluster on this host (one CPU per node, started before the clock, its
    own temp dirs, token authentication: :mod:`arena.league.ray_cluster`) against the local backend at the same
    concurrency (2), measured alternately in one run: steady state (every one-time cost cancels) and the ms
    Ray adds to each game's slot, and end to end (a driver connecting to the running cluster)."""
    try:
        # optional: ray
        import ray  # noqa: F401
    except ImportError:
        print("bench league: ray is not installed, skipping Ray vs local (pip install 'arena[ray]')", file=sys.stderr)
        return
    # optional: ray (checked above)
    from arena.league.ray_backend import connect
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
            import ray  # optional: ray (checked above)
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
