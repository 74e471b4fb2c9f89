"""The end of a sandboxed game: every bot's whole tree is killed together, then each is waited for and cleaned up,
and no bot is left running because another bot's clean-up failed."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from arena.limits import Limits
from arena.referee.sandboxed import play_game
from arena.sandbox import cgroups, check
from arena.sandbox.proxy import BotProcess, finish_closing
from tests.arena.sandbox_helpers import alive, assert_nothing_left

pytestmark = pytest.mark.xdist_group("sandbox")
LIMITS = Limits(move_time=2.0, first_move_time=2.0, memory_mb=200)


def _recording_proxies(monkeypatch: pytest.MonkeyPatch) -> list[BotProcess]:
    """Every BotProcess the referee makes from now on, in order."""
    made: list[BotProcess] = []
    real_init = BotProcess.__init__

    def init(self: BotProcess, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)
        made.append(self)
    monkeypatch.setattr(BotProcess, "__init__", init)
    return made


def test_a_failing_close_leaves_no_other_bot_running(monkeypatch):
    """The first bot's clean-up raising (a bug, an interrupt) must not keep the game's other bot alive."""
    made = _recording_proxies(monkeypatch)
    real_close = BotProcess.close
    failed: list[int] = []

    def close(self: BotProcess) -> None:
        real_close(self)
        # only this game's proxies: an earlier test's proxy collected now (its __del__ closes it) must not count
        if self.seat == 0 and not failed and any(p is self for p in made):
            failed.append(self.seat)
            raise RuntimeError("clean-up failed")
    monkeypatch.setattr(BotProcess, "close", close)

    with pytest.raises(RuntimeError, match="clean-up failed"):
        play_game("nim", ["random", "random"], 3, LIMITS)
    assert [p.seat for p in made] == [0, 1]
    for proxy in made:
        assert proxy.proc is not None and proxy.proc.poll() is not None, f"seat {proxy.seat}'s process still runs"
        assert proxy.handle.slot is None or proxy.handle.slot._fd < 0, f"seat {proxy.seat}'s uid slot is still held"
    left = [g for g in cgroups.groups_of(os.getpid()) if g not in cgroups.pooled()]  # (pooled ones are empty)
    assert not left, f"cgroups left: {left}"


@pytest.mark.skipif(not (check.active("cgroup_kill") or check.active("cgroup_memory")),
                    reason="no cgroup per bot on this machine: bots are killed through their processes")
def test_every_bot_is_sent_its_kill_before_any_is_waited_for(monkeypatch):
    """A game's bots die together (their exits overlap) rather than one after the other."""
    events: list[tuple[str, int]] = []
    real_signal, real_kill = cgroups.BotCgroup.signal_kill, cgroups.BotCgroup.kill

    def signal_kill(self: cgroups.BotCgroup) -> None:
        events.append(("signal", id(self)))
        real_signal(self)

    def kill(self: cgroups.BotCgroup, *args: object, **kwargs: object) -> bool:
        events.append(("wait", id(self)))
        return real_kill(self, *args, **kwargs)
    monkeypatch.setattr(cgroups.BotCgroup, "signal_kill", signal_kill)
    monkeypatch.setattr(cgroups.BotCgroup, "kill", kill)

    record = play_game("nim", ["random", "random"], 4, LIMITS)
    assert record.terminations == ["normal", "normal"]
    first_wait = next(i for i, (what, _) in enumerate(events) if what == "wait")
    signalled = {group for what, group in events[:first_wait] if what == "signal"}
    assert len(signalled) == 2, f"only {len(signalled)} of 2 bots were sent their kill before the first wait: {events}"
    left = [g for g in cgroups.groups_of(os.getpid()) if g not in cgroups.pooled()]  # (pooled ones are empty)
    assert not left, f"cgroups left: {left}"


def test_a_game_closed_later_has_its_bots_killed_at_once_and_cleaned_up_before_the_next_game_loads(monkeypatch):
    """``close_later`` (a league worker's games): the game returns once its bots are sent their kill, and they end
    on their own; what they held is given back by ``finish_closing``, which the next game calls before any of its
    bots loads: every earlier bot that has exited by then is cleaned up."""
    from arena.sandbox import proxy
    made = _recording_proxies(monkeypatch)
    play_game("nim", ["random", "random"], 1, LIMITS, close_later=True)
    first = list(made)
    assert len(first) == 2 and all(p in proxy._CLOSING for p in first)
    pids = [p.proc.pid for p in first]
    deadline = time.monotonic() + 2.0
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(alive(pid) for pid in pids), "the bots of a game closed later were not killed"
    pending_at_load: list[int] = []
    real_start_up = BotProcess.start_up

    def start_up(self: BotProcess) -> None:
        pending_at_load.append(len(proxy._CLOSING))
        real_start_up(self)
    monkeypatch.setattr(BotProcess, "start_up", start_up)
    record = play_game("nim", ["random", "random"], 2, LIMITS)
    assert pending_at_load == [0, 0]
    assert not proxy._CLOSING and all(p.handle._closed for p in first)
    assert_nothing_left(record)


def test_the_next_game_leaves_bots_still_ending_but_never_more_than_closing_most(monkeypatch):
    """A game starts while the last game's bots still exit (the kernel's work only: they were sent their kill), but
    the bots left ending are bounded: the oldest beyond ``CLOSING_MOST`` are waited for and cleaned up before the next
    game's bots load; ``finish_closing()`` waits for all. (Bots made to look still running here, so that the bound is
    what decides.)"""
    from arena.sandbox import proxy
    made = _recording_proxies(monkeypatch)
    monkeypatch.setattr(BotProcess, "exited", lambda self: False)
    pending_at_load: list[int] = []
    real_start_up = BotProcess.start_up

    def start_up(self: BotProcess) -> None:
        pending_at_load.append(len(proxy._CLOSING))
        real_start_up(self)
    monkeypatch.setattr(BotProcess, "start_up", start_up)
    try:
        for seed in range(4):
            play_game("nim", ["random", "random"], seed, LIMITS, close_later=True)
        assert pending_at_load == [0, 0, 2, 2, 4, 4, 4, 4], pending_at_load
        games = [made[i:i + 2] for i in range(0, 8, 2)]
        assert all(p.handle._closed for p in games[0]) and not any(p.handle._closed for g in games[1:] for p in g), \
            "the oldest game's bots were not the ones cleaned up"
    finally:
        proxy.finish_closing()
    assert not proxy._CLOSING and all(p.handle._closed for p in made)
    for bot in made:
        assert not alive(bot.proc.pid)


def test_a_bot_that_has_exited_is_cleaned_up_by_the_next_games_start_and_one_still_ending_is_not(monkeypatch):
    from arena.sandbox import proxy
    made = _recording_proxies(monkeypatch)
    play_game("nim", ["random", "random"], 1, LIMITS, close_later=True)
    first = list(made)
    deadline = time.monotonic() + 2.0
    while not all(p.exited() for p in first) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert all(p.exited() for p in first), "the bots of a game closed later did not exit"
    play_game("nim", ["random", "random"], 2, LIMITS, close_later=True)
    second = made[2:]
    try:
        assert all(p.handle._closed for p in first) and all(p not in proxy._CLOSING for p in first)
        assert all(p in proxy._CLOSING for p in second) and not any(p.handle._closed for p in second)
    finally:
        proxy.finish_closing()
    assert not proxy._CLOSING


@pytest.mark.skipif(not check.active("cgroup_kill") and not check.active("freeze"),
                    reason="no cgroup per bot here that can kill a tree (needs root, or a delegated cgroup)")
@pytest.mark.parametrize("close_later", [False, True])
def test_a_bots_end_sends_its_kill_once(monkeypatch, close_later):
    """The kill (a cgroup.kill write, or v1's freeze, kill and thaw) takes the kernel's cgroup lock: it went out up to
    four times per bot (the game's end, the later close's own begin, its kill, the release's kill) where once does."""
    sent: list[str] = []
    real = cgroups.BotCgroup._send_kill

    def send_kill(self: cgroups.BotCgroup) -> None:
        sent.append(self.name)
        real(self)
    monkeypatch.setattr(cgroups.BotCgroup, "_send_kill", send_kill)
    made = _recording_proxies(monkeypatch)
    for seed in range(3):
        record = play_game("nim", ["random", "random"], seed, LIMITS, close_later=close_later)
        assert record.terminations == ["normal", "normal"], record.failures
    finish_closing()
    assert len(made) == 6 and all(bot.handle._closed for bot in made)
    assert len(sent) == 6, f"kills sent for 6 bots: {len(sent)}"
    assert_nothing_left(record)


@pytest.mark.skipif(not check.active("cgroup_kill") and not check.active("freeze"),
                    reason="no cgroup per bot here that can kill a tree (needs root, or a delegated cgroup)")
def test_a_process_that_joins_after_the_kill_went_is_killed_by_the_wait():
    """Sending the kill once must not let a process into the group after it (a bot's init joins its groups itself,
    and a game can end before it has) outlive the bot: the wait sends it again when the group is not empty."""
    group = cgroups.BotCgroup.acquire(200 << 20, 64)
    try:
        group.signal_kill()
        late = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        for path in group.join_paths():
            with open(path, "w") as f:
                f.write(str(late.pid))
        assert late.pid in group.pids_in_group()
        assert group.kill(timeout=5.0)
        assert late.wait(5) == -9
        assert not group.pids_in_group()
    finally:
        group.destroy()
