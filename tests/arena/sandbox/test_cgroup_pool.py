"""Bot cgroups are pooled (issue 33): a referee process makes a bot's groups once and gives them, emptied, cleaned
and checked, to its next bots, instead of a machine-wide ``mkdir``/``rmdir`` per bot per game. What a reused group
shows its next bot must be what a new one shows: no process, no OOM of the last bot counted against it, exactly
its own memory limit to charge, its own CPUs; and a referee's pooled groups go when it exits."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arena.limits import Limits
from arena.referee.sandboxed import play_game
from arena.sandbox import cgroups, check
from tests.arena.sandbox_helpers import HOSTILE

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(not check.active("cgroup_memory"),
                                 reason="needs a memory cgroup per bot (root, or a delegated cgroup)")]
LIMITS = Limits(move_time=2.0, first_move_time=20.0, memory_mb=200)


@pytest.fixture
def creations(monkeypatch):
    """The names of the groups made (not reused) while the test runs."""
    made: list[str] = []
    real = cgroups.BotCgroup.create.__func__  # type: ignore[attr-defined]

    def create(cls, name, *args, **kwargs):
        made.append(name)
        return real(cls, name, *args, **kwargs)
    monkeypatch.setattr(cgroups.BotCgroup, "create", classmethod(create))
    cgroups._pool.drain()  # (groups pooled by earlier tests in this process: start from none)
    return made


def test_games_in_a_row_reuse_the_first_games_groups(creations):
    for seed in range(6):
        record = play_game("nim", ["random", "random"], seed, LIMITS)
        assert record.terminations == ["normal", "normal"], record.failures
    assert len(creations) == 2, f"groups made for 12 bots in 6 games: {creations}"
    pooled = cgroups.pooled()
    assert pooled and set(cgroups.groups_of(os.getpid())) == set(pooled)
    for d in pooled:
        with open(os.path.join(d, "cgroup.procs")) as f:
            assert f.read().strip() == "", f"a pooled group holds processes: {d}"


def test_an_oom_kill_counts_against_its_own_bot_only(creations):
    bomb = str(HOSTILE / "memory_bomb.py")
    limits = LIMITS.with_(move_time=10.0, first_move_time=10.0, memory_mb=100)
    first = play_game("nim", [bomb, "random"], 1, limits)
    assert first.terminations == ["memory", "normal"], first.failures
    after = play_game("nim", ["random", "random"], 2, limits)  # in the bomb's group, now emptied
    assert after.terminations == ["normal", "normal"], after.failures
    again = play_game("nim", [bomb, "random"], 3, limits)  # a second OOM in a reused group is seen
    assert again.terminations == ["memory", "normal"], again.failures
    assert len(creations) == 2, creations


def test_a_reused_group_has_the_next_bots_limits_and_counts_only_its_cpu(creations):
    groups: list[cgroups.BotCgroup] = []
    cpu: list[float | None] = []
    real = cgroups.BotCgroup._reuse

    def spy(self, memory_bytes, max_pids, cpus):
        ok = real(self, memory_bytes, max_pids, cpus)
        groups.append(self)
        cpu.append(self.cpu_seconds())  # the last bot's CPU is not the next one's
        return ok
    cgroups.BotCgroup._reuse = spy  # type: ignore[method-assign]
    try:
        play_game("nim", ["random", "random"], 1, LIMITS)
        play_game("nim", ["random", "random"], 2, LIMITS.with_(memory_mb=64, max_processes=9))
    finally:
        cgroups.BotCgroup._reuse = real  # type: ignore[method-assign]
    assert len(groups) == 2 and len(creations) == 2
    assert all(c in (None, 0.0) for c in cpu), cpu
    for group in groups:
        if group.memory == "v1":
            d = group.dirs["memory"]
            limit = int(open(os.path.join(d, "memory.limit_in_bytes")).read())
        else:
            d = group.dirs["v2"]
            limit = int(open(os.path.join(d, "memory.max")).read())
        assert 64 << 20 <= limit <= (64 << 20) + cgroups.POOL_KEPT, limit  # (page-rounded by the kernel)
        pids_dir = group.dirs["v2" if group.pids == "v2" else "pids"]
        assert open(os.path.join(pids_dir, "pids.max")).read().strip() == "9"


def test_a_referee_that_exits_leaves_no_group_behind():
    code = ("from arena.referee.sandboxed import play_game; from arena.limits import Limits; import os; "
            "from arena.sandbox import cgroups; "
            "r = play_game('nim', ['random', 'random'], 1, Limits(move_time=2.0, first_move_time=20.0)); "
            "assert r.terminations == ['normal', 'normal'] and cgroups.pooled(); print(os.getpid())")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert cgroups.groups_of(int(p.stdout)) == []
