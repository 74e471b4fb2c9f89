"""docs/contracts.md promises a bot only ``limit.time`` and ``limit.memory_mb``: built-in bots must accept any object
with
those two attributes (a caller's own limit type), not only :class:`bots.base.Limit`."""
from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

import bots
import games


@pytest.mark.parametrize("spec", ["mc", "hmc", "uct", "mcts_reuse", "determinized"])
def test_builtin_bots_take_a_plain_limit_object(spec):
    game = games.load("nim(n=9,k=3,coin=true)")
    bot = bots.make(spec, game, 0, 1)
    state = game.new_initial_state()
    while state.current_player() < 0:
        state.apply_action(state.chance_outcomes()[0][0])
    started = time.monotonic()
    action = bot.step(state.clone(), SimpleNamespace(time=0.2, memory_mb=None))
    assert action in state.legal_actions()
    assert time.monotonic() - started < 5.0  # it searched for about `time`, not forever
