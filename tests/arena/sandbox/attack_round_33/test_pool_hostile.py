"""Issue 33 attack round: the hostile suite's bots as the previous occupants of a pooled group. Each plays seat 1,
whose group the next game's seat 0 takes; that next bot must play a normal game, be charged only its own CPU,
and the referee must end with no group but its pooled ones, each empty, thawed and with its counters reset."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from arena.limits import Limits
from arena.referee.sandboxed import play_game
from arena.sandbox import cgroups, check
from tests.arena.sandbox.attack_round_33._probe import role_bot
from tests.arena.sandbox_helpers import HOSTILE, place

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(not check.active("cgroup_memory"),
                                 reason="needs a memory cgroup per bot (root, or a delegated cgroup)")]
LIMITS = Limits(move_time=0.5, first_move_time=5.0, memory_mb=100)
HOSTILES = ["memory_bomb", "fork_bomb", "setsid_orphan", "frozen_reader", "kill_parent", "cpu_spinner",
            "idle_burner", "stdout_flood", "thread_waiter", "busy_wait"]


def _read(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def test_held_hostile_occupants_leave_nothing_for_the_next_bot(tmp_path: Path) -> None:
    cgroups._pool.drain()
    made: list[str] = []
    real = cgroups.BotCgroup.create.__func__  # type: ignore[attr-defined]

    def create(cls: type[cgroups.BotCgroup], name: str, *args: Any, **kwargs: Any) -> cgroups.BotCgroup:
        made.append(name)
        return real(cls, name, *args, **kwargs)
    cgroups.BotCgroup.create = classmethod(create)  # type: ignore[method-assign,assignment]
    hog = role_bot(tmp_path, "hog")
    try:
        for name in HOSTILES:
            assert (HOSTILE / f"{name}.py").exists(), name
            (tmp_path / name).mkdir()
            bad = place(name, tmp_path / name)
            play_game("nim", ["random", bad], 1, LIMITS)  # (whatever the hostile bot's fate)
            after = play_game("nim(n=40,k=1)", [hog, "random"], 2, LIMITS)
            assert after.terminations == ["normal", "normal"], (name, after.failures)
            later = [t for t, s in zip(after.cpu_times, after.move_seats) if s == 0][1:]
            assert later and max(t for t in later if t is not None) < 0.05, (name, later)
        # a bot whose main thread exits while a thread lives on (cgroup.kill misses such a process), in seat 1
        (tmp_path / "detach").mkdir()
        detached = place("detach", tmp_path / "detach", files={"mode.txt": "thread"})
        play_game("nim", ["random", detached], 1, LIMITS)
        after = play_game("nim(n=40,k=1)", [hog, "random"], 2, LIMITS)
        assert after.terminations == ["normal", "normal"], ("detach", after.failures)
    finally:
        cgroups.BotCgroup.create = classmethod(real)  # type: ignore[method-assign,assignment]
    pooled = cgroups.pooled()
    assert set(cgroups.groups_of(os.getpid())) == set(pooled), "a group outside the pool is left"
    assert len(cgroups._pool.groups) <= cgroups.POOL_SIZE
    for group in cgroups._pool.groups:
        for key, d in group.dirs.items():
            assert _read(os.path.join(d, "cgroup.procs")) == "", (key, d)
            threads = os.path.join(d, "tasks" if key != "v2" else "cgroup.threads")
            assert _read(threads) == "", ("a thread is left", key, d)
            if key == "v2" and os.path.exists(os.path.join(d, "cgroup.freeze")):
                assert _read(os.path.join(d, "cgroup.freeze")) == "0", d
            if key == "freezer":
                assert _read(os.path.join(d, "freezer.state")) == "THAWED", d
            if key == "memory":
                assert _read(os.path.join(d, "memory.failcnt")) == "0", d
    print(f"groups made for {4 * len(HOSTILES) + 4} bots: {len(made)}")
