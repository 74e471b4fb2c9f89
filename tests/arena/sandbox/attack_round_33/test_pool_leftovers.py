"""Issue 33 attack round: what a bot can leave in its pooled cgroup for the referee's next bot (pids, memory,
OOM and failure counters, CPUs), and whether the next bot is judged by it.

Each sender plays both seats of a game, so every pooled group was last a sender's; the probe
(tests/arena/hostile/pool_probe.py) then plays in one of them and reports what it measured."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import cgroups, check
from tests.arena.sandbox.attack_round_33._probe import GAME, LIMITS, probe, role_bot, sender

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(not check.active("cgroup_memory"),
                                 reason="needs a memory cgroup per bot (root, or a delegated cgroup)")]
SENDERS = ["threads", "statter", "hog", "madv", "vmas20000"]


@pytest.fixture
def fresh(tmp_path: Path) -> dict[str, Any]:
    """The probe's facts in a new group (the pool emptied first)."""
    cgroups._pool.drain()
    return probe(tmp_path)


def test_held_a_thread_bomb_leaves_no_pids_fds_or_cpus_behind(tmp_path: Path, fresh: dict[str, Any]) -> None:
    for role in SENDERS:
        sender(tmp_path, role)
        seen = probe(tmp_path)
        assert seen["threads"] == fresh["threads"], (role, seen["threads"], fresh["threads"])
        assert seen["fds"] == fresh["fds"], (role, seen["fds"])
        assert len(seen["cpus"]) == 1, (role, seen["cpus"])


@pytest.mark.parametrize("role", SENDERS)
def test_held_the_next_bot_is_judged_on_its_own_memory(tmp_path: Path, role: str) -> None:
    """A bot that charges 90% of its limit in a group the sender just left plays a normal game (no OOM, no
    timeout), in both seats."""
    cgroups._pool.drain()
    sender(tmp_path, role)
    hog = role_bot(tmp_path, "hog")
    record = play_game(GAME, [hog, hog], 2, LIMITS)
    assert record.terminations == ["normal", "normal"], record.failures
    assert not record.failures


def _limit(group: cgroups.BotCgroup) -> int:
    if group.memory == "v2":
        with open(os.path.join(group.dirs["v2"], "memory.max")) as f:
            return int(f.read())
    with open(os.path.join(group.dirs["memory"], "memory.limit_in_bytes")) as f:
        return int(f.read())


def _usage(group: cgroups.BotCgroup) -> int:
    name = os.path.join(group.dirs["v2"], "memory.current") if group.memory == "v2" else \
        os.path.join(group.dirs["memory"], "memory.usage_in_bytes")
    with open(name) as f:
        return int(f.read())


def test_found_a_reused_group_grants_exactly_what_stays_charged(tmp_path: Path) -> None:
    """Found by the attack round: a group reused at once counted a dead bot's memory the kernel frees a grace period
    later (after a bot that held 14 threads, limit + ~0.44 MB of which ~0.27 MB was gone within 3 s), so the last
    bot chose how much more than its limit the next one could charge. A reused group now gets a new memory group for
    each bot."""
    cgroups._pool.drain()
    sender(tmp_path, "threads")
    limit = LIMITS.memory_mb << 20
    pooled = [g.name for g in cgroups._pool.groups]
    group = cgroups.BotCgroup.acquire(limit, LIMITS.max_processes)  # as the referee does for its next bot
    try:
        assert group.memory is not None and group.name in pooled, "the group was not a reused one"
        granted = _limit(group) - limit
        stays = _usage(group)
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            stays = min(stays, _usage(group))
            time.sleep(0.05)
        print(f"granted above the limit {granted} B, still charged 3 s later {stays} B")
        assert granted - stays <= 64 << 10, f"the next bot may charge {granted - stays} B more than its limit"
    finally:
        group.release()
