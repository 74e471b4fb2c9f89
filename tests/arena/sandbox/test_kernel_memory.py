"""Kernel memory a bot makes does not outlive its game (issue 31 §4): a bot that looks up 100,000 missing names in
its read-only runtime fills the dentry cache with negative entries charged to its memory group; when the group went,
they were reparented to the referee's group and stayed (150,000 names: +29 MB of slab after the match). The group's
kernel memory is now reclaimed before it is removed when it holds more than KERNEL_KEPT."""
from __future__ import annotations

import pytest

from arena.limits import Limits
from arena.referee.sandboxed import play_game
from arena.sandbox import cgroups, check
from tests.leaderboards.support import write

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(not check.active("cgroup_memory"),
                                 reason="needs a memory cgroup per bot (root): without one the kernel memory is the "
                                        "referee's own")]
NAMES = 100_000
STATTER = f'''import os


class Bot:
    def __init__(self, game, seat, seed):
        folder = os.path.dirname(os.__file__)  # the read-only runtime, a folder of the host's
        for i in range({NAMES}):
            try:
                os.stat(os.path.join(folder, f"missing-{{seed}}-{{i}}"))
            except OSError:
                pass

    def step(self, state, limit):
        return state.legal_actions()[0]
'''


def negative_dentries() -> int:
    with open("/proc/sys/fs/dentry-state") as f:
        return int(f.read().split()[4])


def test_the_dentries_a_bot_makes_go_with_its_game(tmp_path):
    bot = write(tmp_path / "statter.py", STATTER)
    before = negative_dentries()
    record = play_game("nim", [str(bot), "random"], seed=7, limits=Limits(move_time=2, first_move_time=60))
    grown = negative_dentries() - before
    assert record.terminations == ["normal", "normal"], record.failures
    assert grown < NAMES // 4, f"{grown} negative dentries outlived a game that made {NAMES}"


def test_an_ordinary_bot_leaves_less_than_the_reclaim_threshold():
    """The threshold is worth having: reclaiming costs ~50 ms a bot, and an ordinary bot leaves ~0.3 MB (seen as its
    memory group goes: pooled groups drop theirs, others are removed whole; both reclaim first)."""
    left: list[int] = []
    real = cgroups.BotCgroup.reclaim

    def reclaim(self: cgroups.BotCgroup) -> None:
        left.append(self.kernel_bytes())
        real(self)
    cgroups.BotCgroup.reclaim = reclaim  # type: ignore[method-assign]
    try:
        record = play_game("nim", ["random", "random"], seed=1, limits=Limits(move_time=2, first_move_time=20))
    finally:
        cgroups.BotCgroup.reclaim = real  # type: ignore[method-assign]
    assert record.terminations == ["normal", "normal"]
    assert len(left) == 2 and all(0 <= k < cgroups.KERNEL_KEPT for k in left), left
