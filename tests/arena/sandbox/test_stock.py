"""Bot inits forked ahead (issue 33, :mod:`arena.sandbox.stock`): after a game the fork server keeps ``STOCK``
waiting inits, niced (never idle-class: a starved fork holds up every cgroup join); the next game's bots start from
them, at the normal policy; they die with the fork server; one made for another shape of plan (another template) is
never used."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import time

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import check, spawn, stock, zygote
from tests.arena.sandbox_helpers import FAST, alive, assert_nothing_left, child_states, place

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(os.geteuid() != 0 or not check.active("mount_namespace")
                                 or not check.active("pid_namespace"),
                                 reason="inits are forked ahead on the root path with a runtime template only"),
              pytest.mark.skipif(not zygote.enabled(), reason="the fork server is off (ARENA_SANDBOX_ZYGOTE=0)")]


def policy_of(pid: int) -> int:
    """The scheduling policy of ``pid`` (field 41 of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[38])


def nice_of(pid: int) -> int:
    """The nice value of ``pid`` (field 19 of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[16])


def children_of(pid: int) -> list[int]:
    return sorted(child for child, state in child_states(pid).items() if state != "Z")


def waiting_inits(server: int, want: int) -> list[int]:
    """The fork server's children once there are ``want`` of them (the stock is filled once the referee is quiet)."""
    deadline = time.monotonic() + 5.0
    while True:
        found = children_of(server)
        if len(found) == want or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


def sched(record) -> dict:
    failure = next(f for f in record.failures if f.seat == 0)
    match = re.search(r"SCHED (\{.*\})", failure.detail)
    assert match, failure.detail
    return json.loads(match[1])


def test_the_next_games_bots_start_from_niced_inits_and_run_at_the_normal_policy(tmp_path):
    probe = place("sched_probe", tmp_path)
    first = play_game("nim", [probe, "random"], 1, FAST.with_(first_move_time=5.0))
    assert_nothing_left(first)
    server = zygote.running_pid()
    assert server is not None
    ahead = waiting_inits(server, stock.STOCK)
    assert len(ahead) == stock.STOCK, ahead
    assert all(policy_of(pid) == os.SCHED_OTHER for pid in ahead), [policy_of(p) for p in ahead]
    # the one forked after the game's last spawn is in the background; an older one was set back to 0 by that spawn
    nices = [nice_of(p) for p in ahead]
    assert stock.BACKGROUND_NICE in nices and set(nices) <= {0, stock.BACKGROUND_NICE}, nices
    assert policy_of(server) == os.SCHED_OTHER and nice_of(server) == 0  # the server serves the referee as before
    later = play_game("nim", [probe, "random"], 2, FAST.with_(first_move_time=5.0))
    assert_nothing_left(later)
    gone = time.monotonic() + 2.0
    while any(alive(pid) for pid in ahead) and time.monotonic() < gone:
        time.sleep(0.01)
    assert not any(alive(pid) for pid in ahead), "the later game's bots did not use them"
    for record in (first, later):
        assert sched(record) == {"policy": os.SCHED_OTHER, "nice": 0}, sched(record)


def test_waiting_inits_die_with_the_fork_server(monkeypatch, tmp_path):
    monkeypatch.setattr(zygote, "_ZYGOTE", None)  # a server of this test's own, killed below
    play_game("nim", ["random", "random"], 1, FAST)
    server = zygote._ZYGOTE
    assert server is not None and server.proc is not None
    ahead = waiting_inits(server.proc.pid, stock.STOCK)
    assert len(ahead) == stock.STOCK, ahead
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait()
    deadline = time.monotonic() + 1.0
    while [p for p in ahead if alive(p)] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not [p for p in ahead if alive(p)], "waiting inits outlived their fork server"


def test_an_init_of_another_shape_is_dropped_not_used():
    made = stock.Stock()
    old = stock.Shape(spawn.Plan(mode="root", mount_ns=True, net_ns=True, pid_ns=True, new_root="/r"), 5, 1)
    new = stock.Shape(old.plan, 5, 2)  # the template built again (the host's mounts changed)
    assert old.fits(spawn.Plan(mode="root", mount_ns=True, net_ns=True, pid_ns=True, new_root="/r", uid=1234))
    assert not old.fits(spawn.Plan(mode="userns", mount_ns=True, net_ns=True, pid_ns=True, new_root="/r"))
    pid = os.fork()
    if pid == 0:  # a stand-in init: waits to be killed
        time.sleep(30)
        os._exit(0)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    theirs.close()
    made.waiting.append(stock.Waiting(pid, ours, old.key))
    assert made.take(new) is None
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert made.dropped == {pid} and not made.waiting


def test_a_referee_can_ask_for_no_inits_ahead(monkeypatch):
    """``ARENA_SANDBOX_STOCK=0``: every init is forked when its bot is asked for; nothing waits between games."""
    monkeypatch.setattr(zygote, "_ZYGOTE", None)
    monkeypatch.setenv("ARENA_SANDBOX_STOCK", "0")
    try:
        record = play_game("nim", ["random", "random"], 1, FAST)
        assert not record.failures
        server = zygote._ZYGOTE
        assert server is not None and server.proc is not None
        time.sleep(0.2)  # (longer than the quiet time before inits are forked ahead)
        assert [p for p in children_of(server.proc.pid) if alive(p)] == []
    finally:
        if zygote._ZYGOTE is not None and zygote._ZYGOTE.proc is not None:
            zygote._ZYGOTE.proc.kill()
            zygote._ZYGOTE.proc.wait()


def test_nothing_is_forked_ahead_while_a_games_bots_start():
    """From a game's first spawn request to its referee's "fill" (every bot started and loaded) the server forks no
    init ahead: a fork started between two spawns held up the second bot's start (8.6 ms against 3.7 ms for the
    first), and one during the bots' load competes with them for the kernel's locks. Then the stock is filled."""
    import games
    from arena.sandbox.launcher import Sandbox
    from arena.sandbox.proxy import BotProcess, close_all
    play_game("nim", ["random", "random"], 1, FAST)
    server = zygote.running_pid()
    assert server is not None
    assert len(waiting_inits(server, stock.size())) == stock.size()
    game = games.load("nim")
    sandbox = Sandbox(FAST, game)
    bots = []
    try:
        for seat in (0, 1):
            bots.append(BotProcess({"kind": "builtin", "spec": "random"}, game, seat, 1, FAST, sandbox=sandbox))
            time.sleep(0.1)  # far longer than the quiet time after which the server forks ahead
            # the started bots' inits and what is left of the stock: nothing new
            assert len(children_of(server)) == stock.size(), f"an init was forked ahead after seat {seat}'s spawn"
        for bot in bots:
            bot.start_up()
        sandbox.started_all()
        assert len(waiting_inits(server, stock.size() + 2)) == stock.size() + 2, "the stock was not filled again"
    finally:
        close_all(bots)
