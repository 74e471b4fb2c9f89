"""A move's time starts when its bot is let run: the referee writes the move, then thaws the bot, and the thaw (a
write to the bot's cgroup freezer) can wait on the kernel's cgroup lock, which another game's bot holds while it
joins its cgroups (an RCU grace period: a v2 freeze write waited up to 19 ms for one, measured in docs/sandbox.md).
The bot is still frozen meanwhile, so that wait is the referee's, not the bot's."""
from __future__ import annotations

import time

import pytest

from arena.limits import Limits
from arena.sandbox import check, handle
from tests.arena.sandbox_helpers import play

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(not check.active("freeze"), reason="no cgroup per bot here to freeze it (needs root, "
                                                                    "or a delegated cgroup)")]
STEADY = """import time


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        time.sleep(0.25)
        return state.legal_actions()[0]
"""
HELD = 0.4  # with the bot's 0.25 s, past a 0.5 s move's deadline (0.56 s) unless the wait is left out


def test_a_thaw_held_up_in_the_kernel_is_not_charged_to_the_bot(tmp_path, monkeypatch):
    bot = tmp_path / "steady.py"
    bot.write_text(STEADY)
    held: list[float] = []
    real = handle.ProcessHandle.thaw

    def thaw(self: handle.ProcessHandle) -> None:
        if self.frozen:  # still frozen while the (slow) write waits: nothing of the bot runs
            time.sleep(HELD)
            held.append(HELD)
        real(self)
    monkeypatch.setattr(handle.ProcessHandle, "thaw", thaw)
    record = play(str(bot), Limits(move_time=0.5, first_move_time=5.0, memory_mb=200), game="nim(n=9)")
    assert record.terminations[0] == "normal", record.failures
    moves = record.move_seats.count(0)
    assert moves >= 2 and len(held) >= moves, (moves, held)  # every move of the bot waited for its thaw
    walls = [w for seat, w in zip(record.move_seats, record.wall_times) if seat == 0][1:]  # (the first: its load)
    assert walls and all(0.25 <= w < 0.25 + HELD for w in walls), walls  # the record's times leave the wait out too
