"""The league runner at scale: memory, store growth, leaderboard time and resume latency over a long league.

:func:`league_growth` runs ``arena league run`` (the real CLI, in its own process) on a league of fast
bots and watches it from outside: the writer's RSS and its workers' RSS (psutil), the store's size (the
database plus its WAL) and the number of stored games, sampled about twice a second. At a chosen
fraction of the schedule it SIGKILLs the writer and starts the same command again, timing how long the
restarted run takes to store its first new game. The samples are what the docs' plot draws.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from arena.errors import ArenaError
from leaderboards.store import Store

FAST_BOTS = ("random", "greedy", "mc(n=1)")
"""Specs the league's bots cycle through: all fast, all different strengths."""


def league_file(directory: Path, games: int, bots: int = 50, seed: int = 1) -> tuple[Path, int]:
    """Writes a Nim league of ``bots`` fast bots with about ``games`` games; returns (path, scheduled games)."""
    pairs = bots * (bots - 1) // 2
    per_pairing = max(2, 2 * math.ceil(games / pairs / 2))
    lines = ['name = "scale"', 'games = ["nim"]', f"games_per_pairing = {per_pairing}", f"seed = {seed}",
             'database = "scale.sqlite"', "bots = ["]
    lines += [f'  {{name = "bot{i:03d}", spec = "{FAST_BOTS[i % len(FAST_BOTS)]}"}},' for i in range(bots)]
    lines.append("]")
    path = directory / "scale.toml"
    path.write_text("\n".join(lines) + "\n")
    return path, pairs * per_pairing


def _count(db: Path) -> int:
    """Games stored so far (0 while the store is still being created)."""
    if not db.exists():
        return 0
    try:
        with Store.open(db, readonly=True) as store:
            return sum(store.count_games(league.id) for league in store.leagues())
    except (ArenaError, sqlite3.Error):  # the schema is still being created
        return 0


def store_bytes(db: Path) -> int:
    """The store's size on disk: the database and its write-ahead log."""
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


def _rss(pid: int) -> tuple[int, int]:
    """(the writer's RSS, the sum of its direct children's RSS: the league workers), in bytes."""
    try:
        proc = psutil.Process(pid)
        own = proc.memory_info().rss
        workers = 0
        for child in proc.children():
            try:
                workers += child.memory_info().rss
            except psutil.Error:
                pass
        return own, workers
    except psutil.Error:
        return 0, 0


def _start(config: Path, db: Path, concurrency: int | None, log: Any) -> subprocess.Popen:
    cmd = [sys.executable, "-c", "from arena.cli import main; main()", "league", "run", str(config), "--db", str(db),
           "--quiet"]
    if concurrency:
        cmd += ["--concurrency", str(concurrency)]
    return subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)


def league_growth(directory: Path, games: int, *, bots: int = 50, concurrency: int | None = None,
                  kill_at: float | None = 0.9, interval: float = 0.5,
                  echo: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Runs a whole league of about ``games`` games in ``directory`` and returns what was measured.

    Returns a dict with ``scheduled``, ``samples`` (dicts: games, elapsed, writer_rss, workers_rss, store_bytes,
    run), ``killed_at`` and ``restart_seconds`` (None without a kill), ``elapsed``.
    """
    directory.mkdir(parents=True, exist_ok=True)
    config, scheduled = league_file(directory, games, bots)
    db = directory / "scale.sqlite"
    log = open(directory / "league.log", "ab")
    samples: list[dict[str, Any]] = []
    result: dict[str, Any] = {"scheduled": scheduled, "bots": bots, "samples": samples, "killed_at": None,
                              "restart_seconds": None}
    started = time.perf_counter()
    proc = _start(config, db, concurrency, log)
    run = 1
    try:
        while True:
            done = _count(db)
            writer, workers = _rss(proc.pid)
            if proc.poll() is not None:
                if proc.returncode != 0:
                    raise RuntimeError(
                        f"arena league run exited with {proc.returncode}; see {directory / 'league.log'}")
                break
            samples.append({"games": done, "elapsed": time.perf_counter() - started, "writer_rss": writer,
                            "workers_rss": workers, "store_bytes": store_bytes(db), "run": run})
            if echo and len(samples) % 120 == 0:
                echo(f"scale league: {done}/{scheduled} games, writer {writer / 2**20:.1f} MiB")
            if kill_at is not None and run == 1 and done >= kill_at * scheduled:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                stored = _count(db)
                result["killed_at"] = stored
                t0 = time.perf_counter()
                proc = _start(config, db, concurrency, log)
                run = 2
                while _count(db) <= stored:
                    if proc.poll() is not None:
                        raise RuntimeError(f"the resumed league exited with {proc.returncode}")
                    time.sleep(0.02)
                result["restart_seconds"] = time.perf_counter() - t0
                continue
            time.sleep(interval)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    result["elapsed"] = time.perf_counter() - started
    result["final_games"] = _count(db)
    result["final_store_bytes"] = store_bytes(db)
    result["db"] = str(db)
    return result


def rss_at(samples: list[dict[str, Any]], games: int, run: int | None = None) -> dict[str, Any]:
    """The sample taken nearest after ``games`` stored games (in ``run`` when given)."""
    eligible = [s for s in samples if s["games"] >= games and (run is None or s["run"] == run) and s["writer_rss"]]
    return eligible[0] if eligible else samples[-1]


def main() -> None:  # pragma: no cover - a manual entry point for long runs
    parser = argparse.ArgumentParser(description="Run the scale league and write its samples as JSON.")
    parser.add_argument("directory", type=Path)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--kill-at", type=float, default=0.9)
    args = parser.parse_args()
    out = league_growth(args.directory, args.games, bots=args.bots, kill_at=args.kill_at,
                        echo=lambda m: print(m, file=sys.stderr, flush=True))
    # start-up: a heavier benchmark module only when its suite runs
    from arena.bench.scale_dashboard import leaderboard_times
    out["leaderboard"] = leaderboard_times(out["db"])
    (args.directory / "growth.json").write_text(json.dumps(out))
    print(json.dumps({k: v for k, v in out.items() if k != "samples"}))


if __name__ == "__main__":  # pragma: no cover
    main()
