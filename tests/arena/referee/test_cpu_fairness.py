"""Fair CPU (docs/sandbox.md, "Start-up sequence"): a bot computes only on its own move. It is frozen from its
start while the others start up and move, and it cannot widen the CPUs it was given. Real processes."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from arena.limits import Limits
from arena.referee.sandboxed import play_game
from arena.sandbox import check
from tests.arena.sandbox_helpers import assert_nothing_left, place

pytestmark = pytest.mark.xdist_group("sandbox")

if check.missing_mandatory():
    pytest.skip(f"mandatory sandbox layers missing on this machine: {check.missing_mandatory()}",
                allow_module_level=True)
if not check.active("freeze"):
    pytest.skip("no cgroup freezer on this machine: bots cannot be frozen", allow_module_level=True)

LIMITS = Limits(move_time=5.0, first_move_time=5.0, memory_mb=200)
BUSY = 1.5
"""Seconds the opponent computes (its start-up or its first move) while the burner should be frozen."""


def reported_cpu(record, seat: int) -> float:
    failure = [f for f in record.failures if f.seat == seat]
    assert failure and "process_time=" in failure[0].detail, record.failures
    return float(failure[0].detail.split("process_time=")[1].split()[0])


@pytest.mark.parametrize("busy", ["first_move", "start_up"])
def test_a_bot_burning_cpu_in_a_thread_gets_none_on_the_opponents_time(tmp_path, busy):
    """The burner spins in a thread from ``__init__``; the opponent computes for BUSY s, in its first move (the
    burner is in seat 1 and waits for it) or in its start-up (the burner is in seat 0 and started first)."""
    burner = place("idle_burner", tmp_path)
    slow = place("slow_starter", tmp_path, {"start.txt": str(BUSY if busy == "start_up" else 0.0),
                                            "first.txt": str(BUSY if busy == "first_move" else 0.0)})
    seats = [slow, burner] if busy == "first_move" else [burner, slow]
    record = play_game("nim", seats, 1, LIMITS)
    assert_nothing_left(record)
    seat = seats.index(burner)
    cpu = reported_cpu(record, seat)
    # Its own start-up (interpreter, imports) costs well under 0.5 s of CPU; the opponent's BUSY s must not count.
    assert cpu < 0.5, f"the idle bot used {cpu:.3f} s of CPU while its opponent computed for {BUSY} s"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin the referee to one")
def test_a_bot_cannot_widen_its_cpus(tmp_path):
    bot = place("widen_affinity", tmp_path)
    cpu = min(os.sched_getaffinity(0))
    # A fresh referee pinned to one CPU, as a league worker is (and its fork server with it).
    code = (f"import os, json; os.sched_setaffinity(0, {{{cpu}}}); from arena.referee.sandboxed import play_game; "
            f"from arena.limits import Limits; r = play_game('nim', [{bot!r}, 'random'], 1, "
            "Limits(move_time=5.0, first_move_time=5.0, memory_mb=200)); "
            "print(json.dumps([f.detail for f in r.failures]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    detail = json.loads(out.stdout.strip().splitlines()[-1])[0]
    assert f"before=[{cpu}]" in detail, detail
    assert f"after=[{cpu}]" in detail, f"the bot widened its CPUs: {detail}"
