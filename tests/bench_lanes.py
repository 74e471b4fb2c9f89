"""How long the test lanes take here: ``python -m tests.bench_lanes`` runs the fast lane (``-m "not slow"``), with
``--full`` the whole suite too, each as README.md states it, and prints the wall time, the tests' count and outcome
and the slowest tests. A benchmark, not a test: lane times depend on the machine and its load, so nothing asserts
them (README.md quotes what this printed)."""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from dataclasses import dataclass

LANES = {"fast": ["-m", "not slow"], "full": []}
COMMAND = [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "--durations", "10", "-p",
           "no:cacheprovider"]


@dataclass(frozen=True)
class Lane:
    name: str
    wall_s: float
    exit: int
    summary: str
    """pytest's last line: the counts and pytest's own time."""
    slowest: list[str]


def run_lane(name: str) -> Lane:
    """Runs one lane; returns its wall seconds, pytest's summary line and its slowest tests."""
    t0 = time.perf_counter()
    p = subprocess.run(COMMAND + LANES[name], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    lines = p.stdout.splitlines()
    summary = next((line for line in reversed(lines) if re.search(r"\d+ (passed|failed)", line)), "(no summary)")
    slowest = [line for line in lines if re.match(r"\d+\.\d+s (call|setup|teardown) ", line)][:10]
    return Lane(name, round(wall, 1), p.returncode, summary.strip("= "), slowest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="also run the whole suite (as .ci/run does)")
    args = parser.parse_args(argv)
    worst = 0
    for name in ["fast"] + (["full"] if args.full else []):
        lane = run_lane(name)
        print(f"{name} lane: {lane.wall_s} s wall, {lane.summary} (exit {lane.exit})")
        for line in lane.slowest:
            print(f"  {line}")
        worst = max(worst, lane.exit)
    return worst


if __name__ == "__main__":
    sys.exit(main())
