"""Time under load (docs/sandbox.md, "Time under load"): a bot is not charged for time it spent waiting for
a CPU, a starved bot aborts the game as machine overload, and a bot busy past its limit still loses on time.

Real processes on a real kernel: CPU hogs pinned to the CPU the hungry bot pins itself to."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.errors import MachineOverloadedError
from arena.limits import Limits
from arena.referee import timing_info
from arena.sandbox.proxy import MAX_CREDIT, deadline_for

from .sandbox_helpers import assert_nothing_left, place, play

LIMITS = Limits(move_time=0.5, first_move_time=0.5, memory_mb=200)
GAME = "nim(n=6)"
CPU = max(os.sched_getaffinity(0))


@contextlib.contextmanager
def hogs(n: int, cpu: int = CPU) -> Iterator[None]:
    """``n`` busy loops pinned to ``cpu``, running (each has had CPU time) before the body starts."""
    # Each in its own session: with autogroup scheduling a session shares one CPU slot, and the bot has its own.
    procs = [subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"],
                              start_new_session=True) for _ in range(n)]
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if all(int(Path(f"/proc/{p.pid}/schedstat").read_text().split()[0]) > 2_000_000 for p in procs):
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.01)
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


@pytest.fixture(params=["cgroup", "schedstat"])
def accounting(request, monkeypatch):
    """CPU time from the bot's cgroup, or (a host without cgroups) from its main thread's schedstat."""
    if request.param == "schedstat":
        from arena.sandbox import cgroups, runner
        monkeypatch.setattr(runner.cgroups, "probe", lambda: cgroups.Capabilities())
    return request.param


def hungry(tmp_path: Path) -> str:
    return place("cpu_hungry", tmp_path, files={"cpu.txt": str(CPU)})


def test_waiting_for_a_cpu_is_not_a_time_loss(tmp_path, accounting):
    # Two hogs share the bot's CPU: its 0.3 s of work takes about 0.9 s of wall time, past the 0.56 s
    # deadline, with about 0.6 s spent waiting for the CPU. It must not lose on time.
    bot = hungry(tmp_path)
    with hogs(2):
        try:
            record = play(bot, LIMITS, game=GAME)
        except MachineOverloadedError as exc:  # other load on this CPU starved it past the credit: still no loss
            assert "machine overloaded" in str(exc) and "cpu_hungry.py" in str(exc)
            return
    assert record.terminations == ["normal", "normal"], record.failures
    assert record.move_seats[0] == 0
    wall, delay = record.wall_times[0], record.info["run_delays"][0]
    assert wall > deadline_for(LIMITS.move_time), "the hogs did not slow the move down: the test proves nothing"
    assert delay >= wall - deadline_for(LIMITS.move_time)  # the wait accounts for the overrun ...
    extension = dict(record.info["deadline_extensions"])[0]  # ... and was credited, never more than measured
    assert 0 < extension <= delay + 0.001
    assert record.cpu_times[0] >= 0.6 * LIMITS.move_time * 0.95  # the bot did its work; the CPU times show it


def test_a_starved_bot_aborts_the_game_as_machine_overload(tmp_path):
    # Six hogs: the bot gets at most 1/7 of its CPU, 0.3 s of work needs >= 2.1 s, more than the deadline
    # plus MAX_CREDIT move times (1.56 s): the referee says the machine is overloaded instead of judging.
    bot = hungry(tmp_path)
    started = time.monotonic()
    with hogs(6):
        with pytest.raises(MachineOverloadedError, match=r"machine overloaded: bot cpu_hungry\.py waited .* "
                                                         r"during a 0\.5 s move .*lower --concurrency"):
            play(bot, LIMITS, game=GAME)
    # the referee gave up at the capped deadline, not when the bot finished
    assert time.monotonic() - started < 2.1 + 10  # hogs start-up included; the bound only catches a hang
    from arena.sandbox import cgroups
    assert not cgroups.groups_of(os.getpid())


def test_a_bot_busy_past_its_limit_still_loses_on_time(tmp_path, accounting):
    # Three move times of CPU on a CPU of its own (no hogs): its wait does not account for the overrun.
    record = play(place("cpu_spinner", tmp_path), LIMITS, game=GAME)
    assert ("cpu_accounting" in record.info["sandbox"]) == (accounting == "cgroup")
    assert record.terminations[0] == "timeout"
    failure = record.failures[0]
    assert failure.reason == "timeout" and failure.seat == 0
    for needle in ("no answer within the move time (0.5 s)", "wall ", "CPU ", "waited for a CPU "):
        assert needle in failure.detail, failure.detail
    assert record.info["run_delays"][0] is not None  # a timed-out move is always read
    assert record.cpu_times[0] >= deadline_for(LIMITS.move_time) * 0.5  # it was on the CPU, not waiting


def test_arena_match_reports_overload_in_one_line(tmp_path):
    bot = hungry(tmp_path)
    with hogs(6):
        proc = subprocess.run([sys.executable, "-c", "from arena.cli import main; main()", "match", GAME, bot, "random",
                               "--games", "1", "--move-time", "0.5", "--first-move-time", "0.5"],
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("arena: machine overloaded: bot cpu_hungry.py waited "), proc.stderr


def test_timing_info_follows_each_seats_moves():
    seats = [0, 1, 0, 1, 0]
    timings = [[(0.5, 0.0), (None, 0.0), (0.9, 0.3)], [(None, 0.0), (0.01, 0.0)]]
    info = timing_info(seats, timings)
    assert info == {"run_delays": [0.5, None, None, 0.01, 0.9], "deadline_extensions": [[4, 0.3]]}
    assert timing_info([0, 1], [[(None, 0.0)], [(None, 0.0)]]) == {}
    assert MAX_CREDIT >= 1


def test_time_losses_bench_plays_through_the_league_runner():
    from arena.bench.scale_timing import time_losses

    result = time_losses(games=2, move_time=0.1, concurrency=2)
    assert result["games"] + result["overload_aborts"] == 2 and result["errors"] == 0, result["error_samples"]
    assert result["time_losses"] == 0
    assert result["moves"] == 3 * result["games"]  # Nim 9 taking 3 each time
    if result["games"]:
        assert result["wall_p50"] >= 0.8  # the bots answer at 80% of the limit by their own clocks
        assert result["cpu_max"] <= result["wall_max"] + 0.05  # one thread cannot use more CPU than wall time
        assert result["margin_min"] == pytest.approx(0.1 * (1 - result["wall_max"]))
