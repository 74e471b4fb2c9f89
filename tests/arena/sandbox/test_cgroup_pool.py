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


def test_each_bot_gets_a_new_memory_group_in_a_reused_group(creations):
    """The kernel frees part of a dead bot's memory at times of its own: a reused memory group granted the next bot
    up to 0.26 MB more than its limit, an amount the last bot chose (attack_round_33). A pooled group gets a new
    memory group for each bot, charged nothing when the bot starts."""
    seen: list[tuple[str, int]] = []
    real = cgroups.BotCgroup._reuse

    def spy(self, memory_bytes, max_pids, cpus):
        ok = real(self, memory_bytes, max_pids, cpus)
        memory = self.groups["memory"]
        seen.append((memory.path, memory.memory_used()))
        return ok
    cgroups.BotCgroup._reuse = spy  # type: ignore[method-assign]
    try:
        for seed in range(3):
            play_game("nim", ["random", "random"], seed, LIMITS)
    finally:
        cgroups.BotCgroup._reuse = real  # type: ignore[method-assign]
    assert len(creations) == 2 and len(seen) == 4, (creations, seen)
    assert len({path for path, _ in seen}) == 4 and all(used == 0 for _, used in seen), seen
    assert not any(os.path.exists(path) for path, _ in seen[:2])  # an earlier bot's memory group is gone


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
    seen: list[tuple[int, str, float | None]] = []
    real = cgroups.BotCgroup._reuse

    def spy(self, memory_bytes, max_pids, cpus):
        ok = real(self, memory_bytes, max_pids, cpus)
        memory = self.groups["memory"] if self.memory == "v1" else self.groups["v2"]
        limit = memory.file("memory.limit_in_bytes" if self.memory == "v1" else "memory.max")
        pids = self.groups["v2" if self.pids == "v2" else "pids"].file("pids.max")
        # (the last bot's CPU is not the next one's)
        seen.append((int(open(limit).read()), open(pids).read().strip(), self.cpu_seconds()))
        return ok
    cgroups.BotCgroup._reuse = spy  # type: ignore[method-assign]
    try:
        play_game("nim", ["random", "random"], 1, LIMITS)
        play_game("nim", ["random", "random"], 2, LIMITS.with_(memory_mb=64, max_processes=9))
    finally:
        cgroups.BotCgroup._reuse = real  # type: ignore[method-assign]
    assert len(seen) == 2 and len(creations) == 2, (seen, creations)
    for limit, pids, cpu in seen:
        assert limit == 64 << 20 and pids == "9", seen  # its own limits, exactly
        assert cpu in (None, 0.0), seen


def test_a_referee_that_exits_leaves_no_group_behind():
    code = ("from arena.referee.sandboxed import play_game; from arena.limits import Limits; import os; "
            "from arena.sandbox import cgroups; "
            "r = play_game('nim', ['random', 'random'], 1, Limits(move_time=2.0, first_move_time=20.0)); "
            "assert r.terminations == ['normal', 'normal'] and cgroups.pooled(); print(os.getpid())")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert cgroups.groups_of(int(p.stdout)) == []
