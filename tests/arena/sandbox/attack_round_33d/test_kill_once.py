"""Attack round 33d, part 2: the kill is sent once; ``kill()`` resends only when the kill went out before it was
called and the group is still non-empty after a look and a pause. A process that joins after the kill and forks
continuously (a fork chain: each generation forks the next and exits, so no pid lives long enough for a per-pid
SIGKILL) must still be gone when ``kill()`` returns True, and must never be left in a group that is pooled.
(A bot itself cannot fork: seccomp allows threads only; the late joiner stands for the bot's own init, which joins its
groups itself.)"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from arena.limits import Limits
from arena.sandbox import cgroups, check
from tests.arena.sandbox.attack_round_33d.helpers import place_mode
from tests.arena.sandbox_helpers import play, proc_stats

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(not check.active("cgroup_kill") and not check.active("freeze"),
                                 reason="no cgroup per bot here that can kill a tree")]
# The chain joins the group itself (its first generation writes 0 to each cgroup.procs) and stops on its own after
# 8 s, so a failed test leaves nothing running for long.
CHAIN = """import os, sys, time
for path in sys.argv[1:]:
    with open(path, "w") as f:
        f.write("0")
print("joined", flush=True)
end = time.time() + 8
while time.time() < end:
    if os.fork():
        os._exit(0)
os._exit(0)
"""


_PGIDS: list[int] = []
_POPENS: list[subprocess.Popen] = []


def _chain_procs() -> list[int]:
    """Process groups of the chains started that still have a member (each chain has its own session: a pid scan
    misses a chain whose members live microseconds, a process group does not)."""
    for p in _POPENS:
        p.poll()  # reap the chain's first generation (a zombie still counts as a member of its process group)
    return [pid for pid, fields in proc_stats() if fields[0] != "Z" and int(fields[2]) in _PGIDS]


def _start_chain(group: cgroups.BotCgroup) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", CHAIN + "# fork_chain_33d", *group.join_paths()],
                         stdout=subprocess.PIPE, text=True, start_new_session=True)
    _PGIDS.append(p.pid)
    _POPENS.append(p)
    assert p.stdout.readline().strip() == "joined"
    time.sleep(0.02)
    assert group.pids_in_group(), "the chain is not running in the group"
    return p


@pytest.mark.parametrize("sent_before", [True, False])
@pytest.mark.parametrize("no_cgroup_kill", [False, True])  # True: the v1 way (freeze, SIGKILL each, thaw)
def test_a_fork_chain_joining_after_the_kill_does_not_survive(sent_before, no_cgroup_kill, monkeypatch):
    if no_cgroup_kill:
        monkeypatch.setattr(cgroups.BotCgroup, "can_kill", property(lambda self: False))
    group = cgroups.BotCgroup.acquire(200 << 20, 4096)  # the chain's orphans may wait as zombies: room for ~1-2 s of it
    started = time.monotonic()
    try:
        if sent_before:  # the game's end sent it (begin_kill); the chain joins after it, kill() waits
            group.signal_kill()
            _start_chain(group)
            ok = group.kill(timeout=3.0)
        else:  # kill() sends it first (no kill went before: no resend on this path); the chain joins right after
            real = group._send_kill

            def send_then_join() -> None:
                real()
                group._send_kill = real
                _start_chain(group)
            group._send_kill = send_then_join
            ok = group.kill(timeout=3.0)
        took = time.monotonic() - started
        time.sleep(0.05)  # a member that escaped the kill would fork on meanwhile
        left = group.pids_in_group()
        print(f"\nsent_before={sent_before} no_cgroup_kill={no_cgroup_kill}: kill() -> {ok} in {took:.3f} s, "
              f"left in group {left}, "
              f"chain procs alive {_chain_procs()}")
        assert ok and not left
        assert not _chain_procs()
    finally:
        time.sleep(0.1)
        group.destroy()
        deadline = time.monotonic() + 10
        while _chain_procs() and time.monotonic() < deadline:
            for pgid in _PGIDS:
                try:
                    os.killpg(pgid, 9)
                except OSError:
                    pass
            time.sleep(0.2)
        _PGIDS.clear()
        _POPENS.clear()


def test_a_thread_churning_bot_killed_on_timeout_leaves_no_process_and_only_empty_pooled_groups(tmp_path):
    """A bot whose threads start new threads and exit all the time, killed for a timeout mid-game: nothing survives
    (``play`` checks), and every pooled group it may have gone to is empty and thawed."""
    d = tmp_path / "g"
    d.mkdir()
    record = play(place_mode(d, "churn", 0, 250), Limits(move_time=0.3, first_move_time=5.0, memory_mb=300,
                                                           max_processes=256), game="nim(n=15)")
    print(f"\nterminations {record.terminations}")
    for path in cgroups.pooled():
        with open(f"{path}/cgroup.procs") as f:
            assert not f.read().split(), path
