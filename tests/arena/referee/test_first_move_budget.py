"""The first move's longer allowance covers a bot's start-up, not thinking: built-in time-based bots think for
``move_time`` on every move, the first included (docs/bot-authors.md, "The first move")."""
from __future__ import annotations

import pytest

from arena.limits import Limits
from arena.referee.sandboxed import play_game
from bots.base import Limit

FIRST, MOVE = 10.0, 0.3


@pytest.mark.parametrize("bot", ["uct", "mc(n=0)"])
def test_a_built_in_bot_thinks_move_time_on_its_first_move_not_the_start_up_allowance(bot):
    record = play_game("hex(size=5)", [bot, "random"], 3, Limits(move_time=MOVE, first_move_time=FIRST))
    assert record.terminations == ["normal", "normal"], record.failures
    first = next(w for s, w in zip(record.move_seats, record.wall_times) if s == 0)
    # Before: the whole 10 s allowance (minus the margin). Now move_time plus the bot's start-up and load slack.
    assert first < 3.0, f"{bot} spent {first:.2f} s on its first move under move_time={MOVE}"


def test_the_limit_a_bot_gets_carries_the_deadline_and_the_thinking_budget():
    first = Limit(time=FIRST, think=MOVE, first_move=True)
    assert first.time == FIRST and first.think_time == MOVE  # may take 10 s, should think 0.3 s
    assert Limit(time=2.0).think_time == 2.0  # no separate budget: think for the whole limit (older callers)
    assert Limit().think_time is None
    assert Limit(time=1.0, think=5.0).think_time == 1.0  # never past the deadline
