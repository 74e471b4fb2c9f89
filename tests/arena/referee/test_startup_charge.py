"""Start-up is charged like a move (docs/sandbox.md, "The time account"): the load (``init`` to ``ready``) costs the
first move its wall time less only the wait for a CPU that wall - CPU leaves room for, with every thread's CPU
counted (the bot's cgroup; without one, every thread of the process). A loader that makes its main thread wait
behind its own threads is not credited that wait; an honest slow loader is still charged no more than its work."""
from __future__ import annotations

import pytest

from arena.limits import Limits
from tests.arena.sandbox_helpers import place, play

pytestmark = pytest.mark.xdist_group("time_fairness")

FIRST = 0.5
LIMITS = Limits(move_time=0.5, first_move_time=FIRST, memory_mb=300, max_processes=32)
GAME = "nim(n=6)"


@pytest.fixture(params=["cgroup", "schedstat"])
def accounting(request, monkeypatch):
    """CPU time from the bot's cgroup, or (a host without cgroups) from its process's threads."""
    if request.param == "schedstat":
        from arena.sandbox import cgroups, launcher
        monkeypatch.setattr(launcher.cgroups, "probe", lambda: cgroups.Capabilities())
    return request.param


def loader(tmp_path, threads: int, cpu: float) -> str:
    return place("threaded_loader", tmp_path, files={"threads.txt": str(threads), "cpu.txt": str(cpu)})


def test_a_threaded_loader_past_the_first_move_time_times_out(tmp_path, accounting):
    # Four first-move times of CPU across 12 threads and the main thread on two CPUs (>= 1 s of wall): the main
    # thread waits behind its own threads most of the load. Before, that wait was credited and the load cost the
    # first move a fraction of a second; now at least the smaller of its wall and CPU time less arena's 0.1 s: more
    # than the first move time.
    record = play(loader(tmp_path, 12, 4 * FIRST), LIMITS, game=GAME)
    assert record.terminations[0] == "timeout", (record.terminations, record.failures, record.wall_times[:2])
    failure = record.failures[0]
    assert failure.seat == 0 and failure.reason == "timeout", failure
    if "start-up allowance" not in failure.detail:  # on a very loaded machine the load alone may pass it
        assert record.cpu_times[0] >= 3.5 * FIRST, record.cpu_times  # the first move's figure counts the load's CPU
        charged = float(failure.detail.split("start-up charged ")[1].split(" s")[0])
        # at least the smaller of its wall time (>= 1 s on two CPUs) and its CPU time (2 s), less arena's 0.1 s
        assert charged >= 1.5 * FIRST, failure.detail


def test_an_honest_slow_single_threaded_loader_is_not_timed_out(tmp_path, accounting):
    # 60% of the first move time of CPU in one thread: its wait for a CPU on a loaded machine is still credited
    # (wall - CPU leaves room for it), so the charge stays near its CPU and the first move answers in time.
    record = play(loader(tmp_path, 0, 0.6 * FIRST), LIMITS, game=GAME)
    assert record.terminations == ["normal", "normal"], (record.failures, record.wall_times[:2])
    assert record.cpu_times[0] >= 0.55 * FIRST, record.cpu_times  # the load's CPU is in the first move's figure
