"""Time under load (docs/sandbox.md, "Time under load"): a bot is not charged for time it spent waiting for
a CPU, a starved bot aborts the game as machine overload, and a bot busy past its limit still loses on time.

Real processes on a real kernel: CPU hogs pinned to the CPU the game's bots run on (the hungry bot pins itself there
too). The tests share one xdist group (CI runs ``--dist loadgroup``) so that one test's hogs never starve another's
bot."""
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
from arena.referee.sandboxed import timing_info
from arena.sandbox.proxy import MAX_CREDIT, deadline_for
from tests.arena.sandbox_helpers import place, play

pytestmark = pytest.mark.xdist_group("time_fairness")

LIMITS = Limits(move_time=0.5, first_move_time=0.5, memory_mb=200)
GAME = "nim(n=6)"
CPU = max(os.sched_getaffinity(0))


@contextlib.contextmanager
def hogs(n: int, cpu: int = CPU) -> Iterator[None]:
    """``n`` busy loops pinned to ``cpu``, running (each has had CPU time) before the body starts."""
    # Each in its own session: with autogroup scheduling a session shares one CPU slot, and the bot has its own.
    procs = [subprocess.Popen([sys.executable, "-c",
                               f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"],
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


@pytest.fixture(autouse=True)
def game_on_the_hogs_cpu(monkeypatch):
    """Every game's bots run on one CPU (arena.sandbox.launcher.game_cpu): here the one the hogs load."""
    from arena.sandbox import launcher
    monkeypatch.setattr(launcher, "game_cpu", lambda: CPU)


def on_cpu() -> None:
    """A referee process pinned to the hogs' CPU: its games' bots run there (launcher.game_cpu)."""
    os.sched_setaffinity(0, {CPU})


@pytest.fixture(params=["cgroup", "schedstat"])
def accounting(request, monkeypatch):
    """CPU time from the bot's cgroup, or (a host without cgroups) from its main thread's schedstat."""
    if request.param == "schedstat":
        from arena.sandbox import cgroups, launcher
        monkeypatch.setattr(launcher.cgroups, "probe", lambda: cgroups.Capabilities())
    return request.param


def hungry(tmp_path: Path, need: float) -> str:
    """The cpu_hungry bot, pinned to CPU, needing ``need`` move times (LIMITS', 0.5 s) of CPU on its first move."""
    return place("cpu_hungry", tmp_path, files={"cpu.txt": str(CPU), "need.txt": str(need * LIMITS.move_time)})


def test_waiting_for_a_cpu_is_not_a_time_loss(tmp_path, accounting):
    # Two hogs share the bot's CPU: its 0.3 s of work takes about 0.9 s of wall time, past the 0.56 s
    # deadline, with about 0.6 s spent waiting for the CPU. It must not lose on time.
    bot = hungry(tmp_path, 0.6)
    with hogs(2):
        try:
            record = play(bot, LIMITS, game=GAME)
        except MachineOverloadedError as exc:  # other load on this CPU starved it past the credit: still no loss
            assert "machine overloaded" in str(exc) and "bot_cpu_hungry" in str(exc)
            return
    assert record.terminations == ["normal", "normal"], record.failures
    assert record.move_seats[0] == 0
    wall, delay = record.wall_times[0], record.info["run_delays"][0]
    assert wall > deadline_for(LIMITS.move_time), "the hogs did not slow the move down: the test proves nothing"
    assert delay >= wall - deadline_for(LIMITS.move_time) - 0.02  # the wait accounts for the overrun ...
    extension = dict(record.info["deadline_extensions"])[0]  # ... and was credited, never more than measured
    assert 0 < extension <= delay + 0.001
    assert record.cpu_times[0] >= 0.6 * LIMITS.move_time * 0.95  # the bot did its work; the CPU times show it


@pytest.mark.slow
def test_a_starved_bot_aborts_the_game_as_machine_overload(tmp_path):
    # Four hogs: the bot gets at most 1/5 of its CPU, 0.45 s of work needs >= 2.25 s, more than the deadline
    # plus MAX_CREDIT move times (1.56 s): the referee says the machine is overloaded instead of judging.
    bot = hungry(tmp_path, 0.9)
    with hogs(4), pytest.raises(MachineOverloadedError, match=r"machine overloaded: bot bot_cpu_hungry waited .* "
                                                              r"during a 0\.5 s move .*lower --concurrency"):
        play(bot, LIMITS, game=GAME)
    from arena.sandbox import cgroups
    assert not [g for g in cgroups.groups_of(os.getpid()) if g not in cgroups.pooled()]  # (pooled ones are empty)


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


def test_a_bot_waiting_behind_its_own_threads_is_not_credited_that_wait(tmp_path):
    # It answers at 1.5 move times. Its main thread waits for the CPU most of the move, enough to cover
    # that overrun, but mostly behind its own three threads: the credit is bounded by wall - CPU of the
    # whole bot, i.e. only what other load on the machine took from it. On an idle CPU: a timeout.
    # Its second move (a 20-stone pile: the game lasts that long): a first move's CPU figure includes the load's.
    record = play(place("thread_waiter", tmp_path), LIMITS, game="nim(n=20)")
    i = [n for n, seat in enumerate(record.move_seats) if seat == 0][1]
    wall, cpu, delay = record.wall_times[i], record.cpu_times[i], record.info["run_delays"][i]
    assert delay > 1.5 * LIMITS.move_time - deadline_for(LIMITS.move_time), \
        "the main thread did not wait enough for this test to mean anything"
    extension = dict(record.info.get("deadline_extensions", [])).get(i, 0.0)
    assert extension <= wall - cpu + 0.02  # the bot (pinned to one CPU) cannot gain CPU faster than wall time
    assert record.terminations[0] in ("normal", "timeout"), record.failures
    if record.terminations[0] == "normal":  # only other load's share of the wait can have let it answer
        assert extension > 0


def test_without_a_cgroup_the_credit_counts_every_threads_cpu():
    # The schedstat fallback reads the main thread per move; the slow path adds the other threads' CPU
    # from /proc/PID/stat so that they bound the credit too.
    from arena.sandbox.clock import Clock
    code = ("import hashlib, threading, time\n"
            "def burn():\n    end = time.thread_time() + 0.15\n"
            "    while time.thread_time() < end: hashlib.sha256(b'x' * (1 << 20)).digest()\n"
            "ts = [threading.Thread(target=burn) for _ in range(2)]\n[t.start() for t in ts]\n[t.join() for t in ts]\n"
            "print('done', flush=True)\ntime.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    clock = Clock(LIMITS, "threads")  # the bot's time account, on a process without a cgroup
    clock.proc, clock._cpu_mark = proc, 0.0
    try:
        assert proc.stdout.readline() == "done\n"
        main = clock._schedstat()
        assert clock.process_cpu() > main + 0.25  # two threads burnt 0.3 s of CPU between them, not the main thread
        assert clock.cpu_so_far() == pytest.approx(clock.process_cpu(), abs=0.02)
    finally:
        proc.kill()
        proc.wait()
        clock.close()


@pytest.mark.slow
def test_arena_match_reports_overload_in_one_line(tmp_path):
    bot = hungry(tmp_path, 0.9)
    with hogs(4):
        proc = subprocess.run([sys.executable, "-c", "from arena.cli import main; main()", "match", GAME, bot, "random",
                               "--games", "1", "--move-time", "0.5", "--first-move-time", "0.5"],
                              capture_output=True, text=True, timeout=120, check=False, preexec_fn=on_cpu)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("arena: machine overloaded: bot bot_cpu_hungry waited "), proc.stderr


def test_timing_info_follows_each_seats_moves():
    seats = [0, 1, 0, 1, 0]
    timings = [[(0.5, 0.0), (None, 0.0), (0.9, 0.3)], [(None, 0.0), (0.01, 0.0)]]
    info = timing_info(seats, timings)
    assert info == {"run_delays": [0.5, None, None, 0.01, 0.9], "deadline_extensions": [[4, 0.3]]}
    assert timing_info([0, 1], [[(None, 0.0)], [(None, 0.0)]]) == {}
    assert MAX_CREDIT >= 1


@pytest.mark.slow
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
