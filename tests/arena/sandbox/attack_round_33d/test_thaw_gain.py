"""Attack round 33d, part 1: a move's clock leaves out a slow thaw (the write can wait on the kernel's cgroup lock while
the bot is still frozen). A bot that makes its own thaw slow instead (as many threads as its process limit allows,
woken one by one by the write, the first ones taking the referee's CPU before the write returns; threads that start
and exit all the time) ran up to 23.5 ms of CPU in one 24.5 ms thaw, which the clock then did not count. Measured:
the wall time of each real thaw of the bot, the CPU its group used during it, and whether the move's start was moved
past it (``Clock.postpone``). Safe: a thaw is left out of a move only when the bot used next to no CPU during it."""
from __future__ import annotations

import os
import time

import pytest

from arena.limits import Limits
from arena.sandbox import check, handle
from arena.sandbox.clock import THAW_RAN, Clock
from tests.arena.sandbox.attack_round_33d.helpers import place_mode
from tests.arena.sandbox_helpers import play

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(not check.active("freeze"), reason="no cgroup per bot here to freeze it (needs root, "
                                                                    "or a delegated cgroup)")]
MOVE = 0.5
GAME = "nim(n=41)"


def _threads(pids: list[int]) -> int:
    n = 0
    for pid in pids:
        try:
            n += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            pass
    return n


def _measure(monkeypatch, tmp_path, mode: str, pids: int, nice: int, buf_mb: int):
    """Each thaw of a bot with threads: [wall s, CPU used during it s, threads, seconds the move was postponed]."""
    samples: list[list[float]] = []
    real_thaw, real_postpone = handle.ProcessHandle.thaw, Clock.postpone

    def thaw(self: handle.ProcessHandle) -> None:
        if not (self.frozen and self.cg is not None):
            return real_thaw(self)
        n = _threads(self.cg.pids_in_group())
        cpu0, t0 = self.cg.cpu_seconds(), time.monotonic()
        real_thaw(self)
        t1, cpu1 = time.monotonic(), self.cg.cpu_seconds()
        samples.append([t1 - t0, (cpu1 or 0.0) - (cpu0 or 0.0), n, 0.0])

    def postpone(self: Clock, seconds: float) -> tuple[float, float]:
        if samples:
            samples[-1][3] = seconds  # (it follows the thaw it leaves out)
        return real_postpone(self, seconds)
    monkeypatch.setattr(handle.ProcessHandle, "thaw", thaw)
    monkeypatch.setattr(Clock, "postpone", postpone)
    bot = place_mode(tmp_path, mode, nice, pids - 6, False, buf_mb)
    record = play(bot, Limits(move_time=MOVE, first_move_time=5.0, memory_mb=300, max_processes=pids), game=GAME)
    return record, samples


@pytest.mark.parametrize("mode,pids,nice,buf_mb", [("spin", 256, 0, 1), ("spin", 256, 19, 1), ("churn", 256, 0, 1),
                                                   ("spin", 16, 0, 16)])
def test_a_slow_own_thaw_gives_no_uncounted_cpu(monkeypatch, tmp_path, mode, pids, nice, buf_mb):
    record, samples = _measure(monkeypatch, tmp_path, mode, pids, nice, buf_mb)
    samples = [s for s in samples if s[2] > 2]  # the hostile bot's thaws (the random opponent runs 2 threads)
    assert samples, record.failures
    print(f"\n{mode} pids={pids} nice={nice} buf={buf_mb}MB: {record.terminations}, {len(samples)} thaws, wall/CPU/"
          "threads/postponed (ms): " + " ".join(f"{w * 1e3:.1f}/{c * 1e3:.1f}/{n:.0f}/{p * 1e3:.1f}"
                                                for w, c, n, p in samples))
    uncounted = [cpu for _, cpu, _, postponed in samples if postponed > 0]
    assert all(cpu <= THAW_RAN for cpu in uncounted), uncounted
