"""Time losses under load: bots that always answer at 80% of their move time, played through the real league
runner with one game per core, must lose no game on time (docs/sandbox.md, "Time under load").

:func:`time_losses` plays a two-bot league of :mod:`arena.bench.timing_bot` (its first move gets the same time
as the others) into a temporary store and returns the counts and the distributions of the recorded per-move
times: wall / limit, CPU / limit, the reply margin (limit - wall, seconds) and the run-queue delay.

The issue's size: ``time_losses(1000, 1.0)`` (Nim with a pile of 9 and takes of up to 3: three moves a game,
1000 x 3 x 0.8 s / 2 cores = 20 minutes). ``arena bench scale`` calls it (20 games at 0.3 s with ``--quick``).
"""
from __future__ import annotations

import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from arena.results.outcome import Termination

BOT = Path(__file__).with_name("timing_bot.py")
GAME = "nim(n=9,k=3)"
OVERLOAD = "MachineOverloadedError"


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank; NaN for no values)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _cpu_pressure() -> float | None:
    """The machine's PSI ``some`` total for the CPU (seconds some task waited for one), when available."""
    try:
        with open("/proc/pressure/cpu") as f:
            return int(f.readline().rsplit("total=", 1)[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return None


def time_losses(games: int = 1000, move_time: float = 1.0, concurrency: int | None = None,
                game: str = GAME) -> dict[str, Any]:
    """Plays ``games`` games (rounded up to even: each bot plays each seat equally often) between two 80% bots
    with ``move_time`` seconds per move (first move included) at ``concurrency`` games at once (default: the
    CPUs this process may use) through :func:`arena.league.runner.run_league`, and summarises the recorded times.

    Returns a dict: ``games`` (stored), ``moves``, ``time_losses`` (games with a timeout), ``overload_aborts``
    (games abandoned with MachineOverloadedError, retried by a league), ``errors`` (other referee errors),
    ``extended_moves`` (moves whose deadline was extended by the bot's wait for a CPU), per-move quantiles
    ``wall_p50/p99/max`` and ``cpu_p50/p99/max`` (as fractions of the limit), ``margin_p50/p01/min`` (limit -
    wall in seconds; p01 is the low tail), ``delay_p50/p99/max`` (run-queue delay, seconds, of the moves it was
    read for), ``machine_cpu_pressure`` (fraction of the run during which some task on the machine waited for a
    CPU, from /proc/pressure/cpu), ``elapsed`` seconds and the parameters.
    """
    # start-up: the league schema (pydantic) only when a league file is read
    from arena.league.config import parse_config
    from arena.league.runner import run_league
    from arena.league.task import TaskFailure

    concurrency = concurrency or len(os.sched_getaffinity(0))
    per_pairing = games + games % 2
    walls: list[float] = []
    cpus: list[float] = []
    margins: list[float] = []
    delays: list[float] = []
    counts = {"games": 0, "moves": 0, "time_losses": 0, "extended_moves": 0}

    def progress(_done: int, _total: int, _task: Any, record: Any) -> None:
        if isinstance(record, TaskFailure):
            return
        counts["games"] += 1
        counts["moves"] += len(record["wall_times"])
        counts["time_losses"] += Termination.TIMEOUT in record["terminations"]
        counts["extended_moves"] += len(record["info"].get("deadline_extensions", []))
        walls.extend(w / move_time for w in record["wall_times"])
        cpus.extend(c / move_time for c in record["cpu_times"])
        margins.extend(move_time - w for w in record["wall_times"])
        delays.extend(d for d in record["info"].get("run_delays", []) if d is not None)

    with tempfile.TemporaryDirectory(prefix="arena-bench-timing-") as tmp:
        config = parse_config({
            "name": "time-losses", "games": [game], "games_per_pairing": per_pairing, "seed": 8,
            "limits": {"move_time": move_time, "first_move_time": move_time}, "probation_after": 0,
            "probation_failures": 0,
            "bots": [{"name": "p80a", "file": str(BOT), "trusted": True},
                     {"name": "p80b", "file": str(BOT), "trusted": True}],
        }, base=Path(tmp), where="time-losses bench")
        pressure0, started = _cpu_pressure(), time.perf_counter()
        summary = run_league(config, db=Path(tmp) / "timing.sqlite", concurrency=concurrency, progress=progress)
        elapsed = time.perf_counter() - started
        pressure1 = _cpu_pressure()
    errors = [e for e in summary.errors if f": {OVERLOAD}:" not in e]
    overloads = [e for e in summary.errors if f": {OVERLOAD}:" in e]
    overloads += getattr(summary, "overloaded", [])  # the runner keeps abandoned games apart
    result: dict[str, Any] = {
        "game": game, "move_time": move_time, "concurrency": concurrency, "scheduled": per_pairing, **counts,
        "overload_aborts": len(overloads), "errors": len(errors),
        "error_samples": (errors + overloads)[:3], "elapsed": round(elapsed, 1),
        "machine_cpu_pressure": None if pressure0 is None or pressure1 is None
        else round((pressure1 - pressure0) / elapsed, 3),
    }
    for name, values, qs in (("wall", walls, (0.5, 0.99)), ("cpu", cpus, (0.5, 0.99)),
                             ("delay", delays, (0.5, 0.99))):
        for q in qs:
            result[f"{name}_p{round(q * 100):02d}"] = quantile(values, q)
        result[f"{name}_max"] = max(values, default=math.nan)
    result["margin_p50"] = quantile(margins, 0.5)
    result["margin_p01"] = quantile(margins, 0.01)
    result["margin_min"] = min(margins, default=math.nan)
    return result


if __name__ == "__main__":  # python -m arena.bench.scale_timing [GAMES [MOVE_TIME [CONCURRENCY]]]
    import json
    import sys

    args = sys.argv[1:]
    print(json.dumps(time_losses(int(args[0]) if args else 1000, float(args[1]) if len(args) > 1 else 1.0,
                                 int(args[2]) if len(args) > 2 else None), indent=1))
