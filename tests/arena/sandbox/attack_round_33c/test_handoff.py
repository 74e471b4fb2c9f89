"""Attack round 33c: the hand-off of a bot's plan from the referee to a waiting init (``Zygote.spawn``). A waiting init
that dies between the server's answer and the referee's send: the referee tries the next one (up to 3 times); the
game must still be played, nothing left running, no zombie kept by the server, the next game fine, and the referee
must keep no init socket open."""
from __future__ import annotations

import os
import signal
import time

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import check, zygote
from tests.arena.sandbox_helpers import FAST, assert_nothing_left, child_states, place

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(bool(check.missing_mandatory()), reason="mandatory sandbox layers missing"),
              pytest.mark.skipif(not zygote.enabled(), reason="the fork server is off")]
LIMITS = FAST.with_(first_move_time=5.0)


def _dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while not _dead(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _dead(pid)


class Killer:
    """Kills the waiting init named in the server's next ``kills`` answers (``when``: "before" the referee sends it
    the plan, "after" it sent it)."""

    def __init__(self, monkeypatch, kills: int, when: str = "before") -> None:
        self.kills, self.killed = kills, []
        real_recv, real_send = zygote._recv, zygote._send
        self.last: int | None = None

        def recv(sock, maxfds=0):
            reply, fds = real_recv(sock, maxfds)
            if when == "before" and maxfds == 1 and reply and "pid" in reply and self.kills > 0:
                self.kills -= 1
                _kill(reply["pid"])
                self.killed.append(reply["pid"])
            elif maxfds == 1 and reply and "pid" in reply:
                self.last = reply["pid"]
            return reply, fds

        def send(sock, message, fds=None):
            out = real_send(sock, message, fds) if fds is not None else real_send(sock, message)
            if when == "after" and "plan" in message and self.kills > 0 and self.last is not None:
                self.kills -= 1
                _kill(self.last)
                self.killed.append(self.last)
            return out
        monkeypatch.setattr(zygote, "_recv", recv)
        monkeypatch.setattr(zygote, "_send", send)


def _zombies_below(pid: int) -> list[int]:
    return [child for child, state in child_states(pid).items() if state == "Z"]


def _sockets_of_self() -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return n


def _server_settles() -> None:
    server = zygote.running_pid()
    deadline = time.monotonic() + 3
    while _zombies_below(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    # a status request makes the server reap
    assert not _zombies_below(server), f"the fork server keeps zombies: {_zombies_below(server)}"


@pytest.mark.parametrize("kills", [1, 2])
def test_an_init_that_dies_before_its_plan_comes_is_replaced(tmp_path, fresh_server, monkeypatch, kills):
    shill = place("shill", tmp_path)
    play_game("nim", [shill, "random"], 1, LIMITS)  # warm: the server and its control socket exist
    sockets = _sockets_of_self()
    killer = Killer(monkeypatch, kills)
    record = play_game("nim", [shill, "random"], 2, LIMITS)
    assert len(killer.killed) == kills
    assert not record.failures, record.failures
    assert_nothing_left(record, fresh_server)
    record = play_game("nim", ["random", shill], 3, LIMITS)
    assert not record.failures, record.failures
    assert_nothing_left(record, fresh_server)
    assert _sockets_of_self() == sockets, "the referee kept an init's socket"


def test_three_dead_inits_in_a_row_fail_that_start_and_the_next_game_is_fine(tmp_path, fresh_server, monkeypatch):
    shill = place("shill", tmp_path)
    play_game("nim", [shill, "random"], 1, LIMITS)
    sockets = _sockets_of_self()
    killer = Killer(monkeypatch, 3)
    try:
        record = play_game("nim", [shill, "random"], 2, LIMITS)
        print("game with 3 dead inits:", record.failures, record.termination if hasattr(record, "termination") else "")
        assert_nothing_left(record, fresh_server)
    except Exception as exc:  # noqa: BLE001
        print("game with 3 dead inits raised:", type(exc).__name__, exc)
    assert len(killer.killed) == 3
    record = play_game("nim", ["random", shill], 3, LIMITS)
    assert not record.failures, record.failures
    assert_nothing_left(record, fresh_server)
    assert _sockets_of_self() == sockets, "the referee kept an init's socket"


def test_an_init_that_dies_after_its_plan_came(tmp_path, fresh_server, monkeypatch):
    """Not the bot's fault: the infrastructure's. What does the record say, and is the next game fine?"""
    shill = place("shill", tmp_path)
    play_game("nim", [shill, "random"], 1, LIMITS)
    killer = Killer(monkeypatch, 1, when="after")
    record = play_game("nim", [shill, "random"], 2, LIMITS)
    print("game with an init killed after its plan:", record.failures, record.returns)
    assert len(killer.killed) == 1
    # (as found: the referee cannot tell this from a bot that died at its start; the bot is charged a crash)
    assert [(f.seat, f.reason.value) for f in record.failures] == [(0, "crash")], record.failures
    assert "failed to start" in record.failures[0].detail
    assert_nothing_left(record, fresh_server)
    record = play_game("nim", ["random", shill], 3, LIMITS)
    assert not record.failures, record.failures
    assert_nothing_left(record, fresh_server)
