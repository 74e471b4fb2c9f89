"""``arena bench scale``: how arena's costs grow with games, bots and board sizes (docs/scale.md).

Every measurement at scale stands beside the same measurement on a small league taken in the same run,
so the ratio shows the growth; the notes say whether the issue's absolute target (< 1 s, <= 250 MB, ...)
holds. Sizes:

==========  =====================  ===============  ==================  ==================
size        league (50 fast bots)  small baseline   bot memory          time losses
==========  =====================  ===============  ==================  ==================
``quick``   2,000 games            400 games        0.2 s/move, 2 bots  20 games, 0.3 s
default     20,000 games           2,000 games      0.5 s/move, all     100 games, 0.5 s
``full``    100,000 games          2,000 games      2 s/move, all       1,000 games, 1 s
==========  =====================  ===============  ==================  ==================

``--full`` is the issue's size: about an hour and a half on two cores. ``ARENA_SCALE_OUT=DIR`` keeps
the raw samples (``scale.json``) and draws the plot (``scale.png``, needs matplotlib) there.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bench import Record, cost, rate
from arena.bench.scale_memory import SEARCH_BOTS, bot_memory
from arena.league.schedule import league_schedule

SUITE = "scale"
MB = 2**20


@dataclass(frozen=True)
class Size:
    league_games: int
    small_games: int
    memory_move_time: float
    memory_bots: tuple[str, ...]
    memory_games: tuple[str, ...]
    timing_games: int
    timing_move_time: float
    dashboard_games: int


QUICK = Size(2_000, 400, 0.2, ("uct(expand=one,c=0.3)", "mcts_reuse(expand=one,c=0.3)"),
             ("colosseum(size=12)", "hex(size=11)"), 20, 0.3, 10_000)
DEFAULT = Size(20_000, 2_000, 0.5, SEARCH_BOTS,
               ("colosseum(size=12)", "hex(size=11)", "sorry(players=4)"), 100, 0.5, 20_000)
FULL = Size(100_000, 2_000, 2.0, DEFAULT.memory_bots, DEFAULT.memory_games, 1_000, 1.0, 100_000)

RSS_LIMIT_MB = 250
SCHEDULE_BOTS = (25, 50, 100, 200)


def run(quick: bool = False, full: bool = False) -> Iterator[Record]:
    size = QUICK if quick else FULL if full else DEFAULT
    out = Path(os.environ["ARENA_SCALE_OUT"]) if os.environ.get("ARENA_SCALE_OUT") else None
    raw: dict[str, Any] = {"size": size.__dict__}
    yield from schedule_records(raw)
    with tempfile.TemporaryDirectory(prefix="arena-bench-scale-") as tmp:
        yield from league_records(Path(tmp), size, raw)
    yield from memory_records(size, raw)
    yield from timing_records(size, raw)
    yield from dashboard_records(size, raw)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "scale.json").write_text(json.dumps(raw, indent=1, default=str))
        plot(raw, out / "scale.png")


# -- scheduling ------------------------------------------------------------------------------------
def schedule_seconds(bots: int, games_per_pairing: int = 10, repeats: int = 3) -> tuple[float, int]:
    """(best wall time, fixtures) of a Nim round robin of ``bots`` bots."""
    best, n = float("inf"), 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        fixtures = league_schedule([("nim", 2)], {"nim": list(range(1, bots + 1))}, games_per_pairing, 7)
        best = min(best, time.perf_counter() - t0)
        n = len(fixtures)
    return best, n


def entrant_fixtures(bots: int, game: str = "nim", seats: int = 2, games_per_pairing: int = 10) -> tuple[int, int]:
    """(fixtures new when bot ``bots + 1`` enters a league of ``bots``, how many of them include it)."""
    before = {f.key for f in league_schedule([(game, seats)], {game: list(range(1, bots + 1))}, games_per_pairing, 7,
                                             mode="balanced")}
    after = league_schedule([(game, seats)], {game: list(range(1, bots + 2))}, games_per_pairing, 7, mode="balanced")
    new = [f for f in after if f.key not in before]
    return len(new), sum(bots + 1 in f.seats for f in new)


def schedule_records(raw: dict[str, Any]) -> Iterator[Record]:
    times = {n: schedule_seconds(n) for n in SCHEDULE_BOTS}
    raw["schedule"] = {n: {"seconds": t, "fixtures": f} for n, (t, f) in times.items()}
    (big, n_big), (small, n_small) = times[200], times[25]
    yield cost(SUITE, f"schedule 200 bots ({n_big:,} games)", big, "s", f"25 bots ({n_small:,} games)", small,
               note=f"target < 1 s: {'met' if big < 1 else 'MISSED'}; time per fixture grows "
                    f"{(big / n_big) / (small / n_small):.2f}x")
    for game, seats in (("nim", 2), ("sorry(players=4)", 4)):
        new, theirs = entrant_fixtures(200, game, seats, games_per_pairing=seats * 2)
        raw.setdefault("entrant", {})[game] = {"new": new, "with_entrant": theirs}
        yield rate(SUITE, f"{game}: new fixtures that seat the 201st bot", theirs, "games", "new fixtures", new,
                   target=1.0, note="1.0x: entering a bot schedules only its own games")


# -- the league runner ----------------------------------------------------------------------------
def league_records(tmp: Path, size: Size, raw: dict[str, Any]) -> Iterator[Record]:
    # start-up: a heavier benchmark module only when its suite runs
    from arena.bench.scale_dashboard import leaderboard_times
    from arena.bench.scale_league import league_growth, rss_at
    # the baseline league has fewer bots when 50 bots' round robin (2,450 games at least) would not be small
    small_bots = min(50, max(4, int((1 + math.sqrt(1 + 4 * size.small_games)) / 2)))
    small = league_growth(tmp / "small", size.small_games, bots=small_bots, kill_at=0.9)
    small["leaderboard"] = leaderboard_times(small["db"])
    big = league_growth(tmp / "big", size.league_games, kill_at=0.9)
    big["leaderboard"] = leaderboard_times(big["db"])
    raw["league"] = {"small": small, "big": big}
    n = big["final_games"]
    at_tenth = rss_at(big["samples"], n // 10, run=1)
    before_kill = rss_at(big["samples"], int(0.89 * n), run=1)
    end = rss_at(big["samples"], int(0.99 * n), run=2)
    growth = before_kill["writer_rss"] / at_tenth["writer_rss"]
    yield cost(SUITE, f"runner RSS at {before_kill['games']:,} games", before_kill["writer_rss"] / MB, "MiB",
               f"at {at_tenth['games']:,} games", at_tenth["writer_rss"] / MB, target=1 / 1.1,
               note=f"flat within 10%: {'yes' if growth <= 1.1 else 'NO'}; resumed runner at {end['games']:,} games: "
                    f"{end['writer_rss'] / MB:.1f} MiB; workers {before_kill['workers_rss'] / MB:.0f} MiB in all")
    per_big = big["final_store_bytes"] / n
    per_small = small["final_store_bytes"] / small["final_games"]
    yield cost(SUITE, f"store bytes per game at {n:,} games", per_big, "B", f"{small['final_games']:,} games",
               per_small, note=f"{big['final_store_bytes'] / MB:.0f} MiB in all (database + WAL)")
    query, command = big["leaderboard"]["standings_seconds"], big["leaderboard"]["command_seconds"]
    yield cost(SUITE, f"leaderboard query at {n:,} games", query, "s", f"{small['final_games']:,} games",
               small["leaderboard"]["standings_seconds"], note=f"target < 1 s: {'met' if query < 1 else 'MISSED'}")
    yield cost(SUITE, f"`arena leaderboard` at {n:,} games", command, "s", f"{small['final_games']:,} games",
               small["leaderboard"]["command_seconds"],
               note=f"target < 1 s: {'met' if command < 1 else 'MISSED'} (process start included)")
    yield cost(SUITE, f"first new game after SIGKILL at {big['killed_at']:,}", big["restart_seconds"], "s",
               f"after SIGKILL at {small['killed_at']:,}", small["restart_seconds"],
               note="a fresh `arena league run`: schedule, stored keys, workers' fork servers, first game")
    yield rate(SUITE, f"league games/s, {n:,} games", n / big["elapsed"], "games/s",
               f"{small['final_games']:,} games", small["final_games"] / small["elapsed"],
               note="end to end, both runs killed once and resumed")


# -- bot memory ----------------------------------------------------------------------------------
def memory_records(size: Size, raw: dict[str, Any]) -> Iterator[Record]:
    rows = bot_memory(size.memory_move_time, size.memory_bots, size.memory_games)
    raw["memory"] = rows
    baseline = {r["game"]: r for r in rows if r["bot"] == "random"}
    for r in rows:
        if r["bot"] == "random" or "skipped" in r:
            continue
        base = baseline[r["game"]]["peak_rss"]
        per_node = (r["peak_rss"] - base) / r["nodes"] if r.get("nodes") else None
        within = r["peak_rss"] <= RSS_LIMIT_MB * MB
        yield cost(SUITE, f"{r['bot']} peak RSS, {r['game']}, {size.memory_move_time:g} s/move", r["peak_rss"] / MB,
                   "MiB", "random bot (interpreter + game)", base / MB,
                   note=f"<= {RSS_LIMIT_MB} MB: {'yes' if within else 'NO'}; {r['moves']} moves"
                        + (f"; largest tree {r['nodes']:,} nodes, {per_node:.1f} B/node over the baseline "
                           f"({r['node_bytes']} B/node in the pool)" if per_node is not None else ""))


# -- time losses under load ----------------------------------------------------------------------
def timing_records(size: Size, raw: dict[str, Any]) -> Iterator[Record]:
    try:
        # start-up: a heavier benchmark module only when its suite runs
        from arena.bench.scale_timing import time_losses
    except ModuleNotFoundError as exc:  # built in the same issue by another part; say so instead of skipping silently
        raw["timing"] = {"missing": str(exc)}
        return
    result = time_losses(games=size.timing_games, move_time=size.timing_move_time)
    raw["timing"] = result
    moves = result.get("moves", 0)
    losses = result.get("time_losses", 0)
    yield rate(SUITE, f"moves in time at {size.timing_move_time:g} s/move, {result.get('games', 0)} games",
               moves - losses, "moves", "moves played", moves, target=1.0,
               note=f"time losses {losses}, overload aborts {result.get('overload_aborts', 0)}; "
                    f"wall/limit p99 {result.get('wall_p99', float('nan')):.2f}, "
                    f"max {result.get('wall_max', float('nan')):.2f}")


# -- the dashboard ------------------------------------------------------------------------------
def dashboard_records(size: Size, raw: dict[str, Any]) -> Iterator[Record]:
    try:
        # start-up: a heavier benchmark module only when its suite runs
        from arena.bench import scale_dashboard as dash
    except ModuleNotFoundError as exc:
        raw["dashboard"] = {"missing": str(exc)}
        return
    with tempfile.TemporaryDirectory(prefix="arena-bench-dash-") as tmp:
        measured = {}
        for label, games in (("small", max(1_000, size.dashboard_games // 50)), ("big", size.dashboard_games)):
            db = Path(tmp) / f"{label}.sqlite"
            dash.synthetic_store(db, bots=200, games=games)
            measured[label] = {"games": games, **dash.dashboard_times(db), **dash.leaderboard_times(db)}
    raw["dashboard"] = measured
    big, small = measured["big"], measured["small"]
    yield cost(SUITE, f"dashboard first leaderboard, 200 bots, {big['games']:,} games", big["open_seconds"], "s",
               f"{small['games']:,} games", small["open_seconds"],
               note=f"target < 2 s: {'met' if big['open_seconds'] < 2 else 'MISSED'}")
    yield cost(SUITE, f"dashboard slowest table update while writing, {big['games']:,} games",
               big["max_update_seconds"] * 1000, "ms", f"{small['games']:,} games", small["max_update_seconds"] * 1000,
               note=f"target < 100 ms: {'met' if big['max_update_seconds'] < 0.1 else 'MISSED'}")
    if "max_loop_lag_seconds" in big:
        yield cost(SUITE, f"dashboard longest UI stall (update + redraw), {big['games']:,} games",
                   big["max_loop_lag_seconds"] * 1000, "ms", f"{small['games']:,} games",
                   small["max_loop_lag_seconds"] * 1000,
                   note=f"no frame over 100 ms: {'met' if big['max_loop_lag_seconds'] < 0.1 else 'MISSED'} "
                        "(the UI thread's longest wait: our update, Textual's repaint, GC passes; docs/tui.md)")


# -- the plot ------------------------------------------------------------------------------------
def plot(raw: dict[str, Any], path: Path) -> Path | None:
    """Memory and store size against games, schedule time against bots (None without matplotlib)."""
    try:
        import matplotlib  # optional: matplotlib, for PNG plots only
        matplotlib.use("Agg")
        # optional: matplotlib (the plots extra)
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    league = raw.get("league", {}).get("big")
    if league:
        for run, style in ((1, "-"), (2, "--")):
            end = league.get("final_games")  # samples after the last game show the process exiting
            pts = [s for s in league["samples"] if s["run"] == run and s["writer_rss"] and s["games"] != end]
            axes[0].plot([s["games"] for s in pts], [s["writer_rss"] / MB for s in pts], style, color="C0",
                         label="runner (writer)" if run == 1 else "runner after SIGKILL + resume")
        axes[0].set(xlabel="games stored", ylabel="RSS (MiB)", title="league runner memory", ylim=(0, None))
        axes[0].legend(fontsize=8)
        pts = league["samples"]
        axes[1].plot([s["games"] for s in pts], [s["store_bytes"] / MB for s in pts], color="C1")
        axes[1].set(xlabel="games stored", ylabel="store size (MiB)", title="store growth")
    sched = raw.get("schedule", {})
    if sched:
        rows = sorted((int(k), v) for k, v in sched.items())
        xs = [v.get("fixtures", 0) / 1000 for _, v in rows]
        axes[2].plot(xs, [v["seconds"] for _, v in rows], "o-", color="C2")
        for (bots, v), x in zip(rows, xs):
            axes[2].annotate(f"{bots} bots", (x, v["seconds"]), textcoords="offset points", xytext=(-10, 6), fontsize=8)
        axes[2].set(xlabel="scheduled games (thousands; Nim, 10 per pairing)", ylabel="seconds",
                    title="computing the schedule")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
