"""Issue 33b attack round: bots forked ahead (a waiting init's pre-forked bot, arena/sandbox/stock.py,
zygote._fork_bot_ahead) and games closed later (play_game(close_later=True), proxy.finish_closing).

Each test asserts the safe behaviour: it passes while the sandbox holds."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import check, proxy, stock
from arena.submissions.take import take
from tests.arena.sandbox.attack_round_33._probe import facts
from tests.arena.sandbox_helpers import FAST, assert_nothing_left, descendants_of, place, processes_of

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(os.geteuid() != 0 or not check.active("cgroup_memory"),
                                 reason="the stock of waiting inits is kept only as root (with a runtime template)")]
SLOW_START = FAST.with_(first_move_time=20.0)


def _probe_bot(tmp_path: Path, mode: str = "") -> str:
    d = tmp_path / f"probe_{mode or 'plain'}"
    d.mkdir(exist_ok=True)
    return place("stock_probe", d, files={"mode.txt": mode})


def _facts(record: Any) -> dict[str, Any]:
    return facts(record, 0)


def _summary(f: dict[str, Any]) -> dict[str, Any]:
    """What must not depend on how the bot was started or what ran before it."""
    return {k: f[k] for k in ("policy", "pid", "ppid", "open_fds")}


def test_held_a_bot_forked_ahead_starts_as_any_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pre-forked bot, whether its init waited 0 s or 2 s at SCHED_IDLE, or waited through a CPU spinner's and
    a fork bomb's game: SCHED_OTHER, pid 2 under pid 1, the same five descriptors as a bot whose init is forked on
    demand (ARENA_SANDBOX_STOCK=0; that init forks its bot before its plan too, at once), a uid slot (not root), and
    its CPU clock at ``__init__`` holds only its own start (not the idle time its init waited: 6-9 ms either way).
    (No /proc inside: a bot cannot read its own or its init's start time, so it cannot time its wait in the stock.)"""
    probe = _probe_bot(tmp_path)
    monkeypatch.setenv("ARENA_SANDBOX_STOCK", "0")
    on_demand = _facts(play_game("nim", [probe, "random"], 1, SLOW_START))
    monkeypatch.setenv("ARENA_SANDBOX_STOCK", str(stock.STOCK))
    seen = []
    for before in ("none", "pause", "cpu_spinner", "fork_bomb"):
        if before == "pause":
            time.sleep(2.0)
        elif before != "none":
            d = tmp_path / before
            d.mkdir()
            play_game("nim", ["random", place(before, d)], 1, FAST)
        record = play_game("nim", [probe, "random"], 2, SLOW_START)
        f = _facts(record)
        seen.append((before, f))
        assert _summary(f) == _summary(on_demand), (before, f, on_demand)
        assert f["policy"] == os.SCHED_OTHER, (before, f["policy"])
        assert f["uid"] not in (0, None) and record.info["bot_uids"][0] == f["uid"], (before, f["uid"])
        assert f["proc_cpu"] < 0.2, (before, f["proc_cpu"])
        assert len(f["open_fds"]) == 5, (before, f["open_fds"])
    print(json.dumps({"on_demand": on_demand, "stock": seen})[:3000])


def test_held_a_late_seat_finds_no_earlier_seats_digest(tmp_path: Path) -> None:
    """A four-player game with a stock of two: seats 2 and 3 get inits forked while the game starts, after the
    fork server decoded the plans of seats 0-2 (each a snapshot folder named by its digest). The scan of seat 3
    (tests/arena/hostile/heap_scan_init.py, from ``__init__``) finds its own digest and none of the others'."""
    bots = []
    for i in range(4):
        d = tmp_path / f"seat{i}"
        d.mkdir()
        files = {"salt.txt": str(i)} | ({"report.txt": "1"} if i == 3 else {})
        bots.append(place("heap_scan_init", d, files=files))
    digests = [take(b).digest for b in bots]
    assert len(set(digests)) == 4
    for seed in (1, 2, 3):
        record = play_game("sorry", bots, seed, SLOW_START, max_moves=40)
        failure = next((f for f in record.failures if f.seat == 3), None)
        assert failure is not None, record.terminations
        match = re.search(r"HEAP (\[.*?\])", failure.detail)
        assert match, failure.detail
        found = json.loads(match[1])
        assert digests[3] in found, f"the scan missed its own plan (it would miss any): {found}"
        assert not set(digests[:3]) & set(found), f"seed {seed}: seat 3 found {set(digests[:3]) & set(found)}"


@pytest.mark.parametrize("hostile", ["fork_bomb", "setsid_orphan", "thread_waiter", "detach"])
def test_held_a_game_closed_later_leaves_no_process_running(tmp_path: Path, hostile: str) -> None:
    """close_later: the kill is sent when play_game returns; without finish_closing, within 2 s no process of the
    game's uid slots is left (no bot code runs on into the next game), and finish_closing then leaves nothing."""
    before = set(descendants_of(os.getpid()))
    files = {"mode.txt": "thread"} if hostile == "detach" else None
    bad = place(hostile, tmp_path, files=files)
    record = play_game("nim", ["random", bad], 1, FAST, close_later=True)
    uids = {u for u in record.info["bot_uids"] if u}
    assert proxy._CLOSING, "close_later closed at once (nothing to attack)"
    deadline = time.monotonic() + 2.0
    left = processes_of(uids)
    while left and time.monotonic() < deadline:
        time.sleep(0.01)
        left = processes_of(uids)
    running = []
    for pid in left:  # a zombie is no process that runs
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            running.append((pid, state))
    try:
        assert not running, f"processes of the closed game's uids still alive 2 s after the kill: {running}"
    finally:
        proxy.finish_closing()
    assert not proxy._CLOSING
    assert_nothing_left(record, before)


def _v1_memory_groups() -> list[str]:
    """The referee's bot memory groups (cgroup v1) that hold a process now."""
    with open("/proc/self/cgroup") as f:
        line = next((x for x in f if x.split(":")[1] == "memory"), None)
    if line is None:
        return []
    base = os.path.join("/sys/fs/cgroup/memory", line.strip().split(":", 2)[2].lstrip("/"), "arena-sandbox")
    found = []
    for root, _dirs, files in os.walk(base):
        if "cgroup.procs" in files and root != base:
            with open(os.path.join(root, "cgroup.procs")) as f:
                if f.read().split():
                    found.append(root)
    return found


@pytest.mark.xfail(strict=True, reason=(
    "attack found (low severity, accounting): a bot forked ahead is forked, and runs arena's code until its plan "
    "comes, in the fork server's cgroups, so what it charges before bot_setup joins its groups (its page tables, "
    "kernel stack, the pages its pre-plan code copies on write) stays charged to the referee's memory group for its "
    "whole life. At its first move a bot's own memory group held 3.41-3.93 MB (0.25 MB kernel) at b5b8f6f2 (bot "
    "forked by its init after the init joined) and 2.09-2.52 MB (0.02 MB kernel) now: ~1.3 MB a bot, a fixed "
    "amount the bot cannot grow (no bot code runs before the join)"))
def test_found_a_bot_forked_ahead_is_charged_its_own_kernel_memory(tmp_path: Path) -> None:
    if not os.path.isdir("/sys/fs/cgroup/memory"):
        pytest.skip("measured on cgroup v1 (memory.kmem.usage_in_bytes)")
    d = tmp_path / "player"
    d.mkdir()
    bot = place("heap_scan_init", d, files={"salt.txt": "player"})
    kernel: list[int] = []

    def observe(state: Any, seat: int, action: Any) -> None:
        if not kernel:
            for group in _v1_memory_groups():
                with open(os.path.join(group, "memory.kmem.usage_in_bytes")) as f:
                    kernel.append(int(f.read()))
    play_game("nim", [bot, bot], 1, SLOW_START, observer=observe)
    assert len(kernel) == 2, kernel
    # its page tables for the ~22 MB it inherits mapped, its kernel stack and task: ~0.25 MB when charged to it
    assert min(kernel) >= 128 << 10, f"kernel memory charged to each bot's own group: {kernel}"


def test_found_busy_neighbours_do_not_stall_a_start(tmp_path: Path) -> None:
    """Found by the attack round, fixed: the stock was forked, and did its first part, at ``SCHED_IDLE``. Busy loops
    at the normal policy starved it inside ``fork``, where it holds the kernel's cgroup fork lock, and the started
    bot's cgroup join waited for it. The slowest spawn of 10 games with 4 busy loops on 2 CPUs was 2.9-3.9 s, and an
    honest bot lost a start-up on time. Kernel stack of the stall: ``cgroup_procs_write_start <-
    __cgroup1_procs_write``. Now the server forks at its normal policy and a waiting init runs at nice 10 until a
    spawn request sets every waiting init back to 0."""
    import subprocess
    import sys
    d = tmp_path / "player"
    d.mkdir()
    bot = place("heap_scan_init", d, files={"salt.txt": "player"})
    spawns: list[float] = []
    real = proxy.BotProcess.__init__

    def timed(self: Any, *args: Any, **kwargs: Any) -> None:
        start = time.monotonic()
        try:
            real(self, *args, **kwargs)
        finally:
            spawns.append(time.monotonic() - start)
    play_game("nim", [bot, "random"], 0, FAST)  # a server with its stock made
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 2))]
    proxy.BotProcess.__init__ = timed  # type: ignore[method-assign]
    results = []
    try:
        for seed in range(1, 11):
            record = play_game("nim", [bot, "random"], seed, FAST)
            results.append([str(t) for t in record.terminations])
    finally:
        proxy.BotProcess.__init__ = real  # type: ignore[method-assign]
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert all(r == ["normal", "normal"] for r in results), results
    assert max(spawns) < 0.25, f"bot spawns under busy neighbours took up to {max(spawns):.3f} s: {spawns}"
