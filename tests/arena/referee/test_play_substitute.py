"""on_failure=random_move uses the game's own substitute rule where it has one (COMP424's random walk)."""
from __future__ import annotations

import random

import arena
import bots
import games
from arena.referee.loop import substitute_move


class Crasher:
    name = "crasher"

    def step(self, state, limit):  # noqa: ANN001
        raise RuntimeError("boom")


def test_colosseum_substitute_is_the_course_random_walk() -> None:
    state = games.load("colosseum(size=7,seed=4)").new_initial_state()
    rng_a, rng_b = random.Random(9), random.Random(9)
    expected = state.random_walk_action(rng_b.getrandbits(63))
    assert substitute_move(state, state.legal_actions(), rng_a) == expected
    assert expected in state.legal_actions()


def test_games_without_a_rule_get_a_uniform_legal_move() -> None:
    state = games.load("nim(n=30)").new_initial_state()
    seen = {substitute_move(state, state.legal_actions(), random.Random(s)) for s in range(200)}
    assert seen == {1, 2, 3}


def test_a_crashing_bot_keeps_playing_random_walks_in_colosseum() -> None:
    game = games.load("colosseum(size=6,seed=1)")
    record = arena.play(game, [Crasher(), bots.make("random", game, 1, 3)], seed=5, on_failure="random_move")
    assert record.terminations == ["normal", "normal"]
    crashes = [f for f in record.failures if f.seat == 0]
    assert crashes and all(f.reason == "crash" and f.substituted is not None for f in crashes)
    replay = game.new_initial_state()
    for action in record.history:
        replay.apply_action(action)
    assert replay.is_terminal() and replay.returns() == record.returns
