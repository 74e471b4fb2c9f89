"""No bot outlives its referee (docs/sandbox.md, "Lifetimes"): a bot that detaches itself from its parent's
death signal is still gone within a second after ``arena match`` is killed by SIGKILL.

Real ``arena match`` processes, real kernel: the referee is killed while the bot waits in its first move."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from arena.sandbox import cgroups, check
from tests.arena.sandbox_helpers import place

pytestmark = pytest.mark.xdist_group("sandbox")

if check.missing_mandatory():
    pytest.skip(f"mandatory sandbox layers missing on this machine: {check.missing_mandatory()}",
                allow_module_level=True)


def _parents() -> dict[int, int]:
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    out[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return out


def descendants(pid: int) -> set[int]:
    parents = _parents()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """True while any thread of the process runs (a zombie waiting to be reaped is gone; a leader that exited
    while another thread goes on is not)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    return True
        except OSError:
            continue
    return False


def thread_names(pid: int) -> set[str]:
    names = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names.add(f.read().strip())
    except OSError:
        pass
    return names


def settled(pid: int, mode: str) -> bool:
    """Whether a detached bot has done everything its mode does: in ``thread`` mode its leader thread has exited
    (a zombie leader, the worker thread living on), in the others naming the thread was the last step."""
    if mode != "thread":
        return True
    try:
        with open(f"/proc/{pid}/task/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except OSError:
        return True


def _remove_groups(groups: list[str]) -> None:
    """Test cleanup only: whatever a failing run left behind must not linger on the machine."""
    for group in groups:
        try:
            with open(os.path.join(group, "cgroup.kill"), "w") as f:
                f.write("1")
        except OSError:
            pass
        for _ in range(100):
            try:
                os.rmdir(group)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)


@pytest.mark.parametrize("fork_server", ["1", "0"], ids=["fork-server", "exec"])
@pytest.mark.parametrize("mode", ["clear", "harmless", "thread"])
def test_a_detached_bot_dies_within_a_second_of_its_referee(tmp_path, mode, fork_server):
    bot = place("detach", tmp_path, {"mode.txt": mode})
    env = dict(os.environ, ARENA_SANDBOX_ZYGOTE=fork_server)
    referee = subprocess.Popen([sys.executable, "-m", "arena.cli", "match", "nim", bot, "random", "--games", "1",
                                "--first-move-time", "60", "--move-time", "60", "--json"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    groups: list[str] = []
    try:
        deadline = time.monotonic() + 60
        detached: list[int] = []
        while not detached:
            assert referee.poll() is None, f"arena match ended early: {referee.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "the bot never reached its detached state"
            time.sleep(0.05)
            detached = [p for p in descendants(referee.pid) if "arena-detached" in thread_names(p)]
        while not all(settled(p, mode) for p in detached):  # every detaching step done (the thread mode's leader)
            assert time.monotonic() < deadline, "the bot never finished detaching"
            time.sleep(0.01)
        tree = descendants(referee.pid)
        groups = cgroups.groups_of(referee.pid)
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait(10)
        gone = time.monotonic() + 1.0
        while True:  # polled: the check passes as soon as everything is gone, fails if anything outlives 1 s
            left = sorted(p for p in tree if alive(p))
            in_groups = sorted({int(p) for g in groups if os.path.exists(os.path.join(g, "cgroup.procs"))
                                for p in open(os.path.join(g, "cgroup.procs")).read().split()})
            if not (left or in_groups) or time.monotonic() >= gone:
                break
            time.sleep(0.02)
        assert not left and not in_groups, (
            f"1 s after the referee's SIGKILL, processes of its bots are alive: {left} (in its bots' cgroups: "
            f"{in_groups}; the detached bot: {detached})")
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait(10)
        for p in descendants(referee.pid) if referee.poll() is None else ():
            os.kill(p, signal.SIGKILL)
        _remove_groups(groups or cgroups.groups_of(referee.pid))
