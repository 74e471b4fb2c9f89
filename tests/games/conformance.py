"""OpenSpiel-style conformance checks run on every game (cf. OpenSpiel's tests/basic_tests.h).

``random_sim_check(game, n_games, seed)`` plays seeded random games through the Python API and checks,
along the way, every invariant the State API promises.
"""
from __future__ import annotations

import json
import pickle
import random

import games
from games import CHANCE, TERMINAL


def sample_chance(state, rng: random.Random) -> int:
    outcomes = state.chance_outcomes()
    assert outcomes, "a chance node must have outcomes"
    assert abs(sum(p for _, p in outcomes) - 1.0) < 1e-9, f"chance probabilities sum to {sum(p for _, p in outcomes)}"
    assert all(p > 0 for _, p in outcomes), "chance outcomes must have positive probability"
    actions = [a for a, _ in outcomes]
    assert actions == sorted(set(actions)), "chance outcome actions must be sorted and unique"
    assert state.legal_actions() == actions, "legal_actions() at a chance node lists the chance outcomes"
    r, acc = rng.random(), 0.0
    for a, p in outcomes:
        acc += p
        if r < acc:
            return a
    return outcomes[-1][0]


def check_illegal_action_leaves_state(state, rng: random.Random) -> None:
    legal = set(state.legal_actions())
    n = state.n_actions
    candidates = [a for a in range(n) if a not in legal]
    probes = rng.sample(candidates, min(3, len(candidates))) + [-1, n, 10**12]
    before_hist, before_key, before_player = state.history(), state._state_key(), state.current_player()
    for a in probes:
        try:
            state.apply_action(a)
        except ValueError:
            pass
        else:
            raise AssertionError(f"illegal action {a} was accepted in {state.game}")
        assert state.history() == before_hist and state._state_key() == before_key, "a refused action changed the state"
        assert state.current_player() == before_player


def check_terminal(state, game) -> None:
    assert state.is_terminal() and state.current_player() == TERMINAL
    assert state.legal_actions() == [], "no legal actions at a terminal state"
    assert state.chance_outcomes() == []
    returns = state.returns()
    assert len(returns) == game.num_players()
    assert all(game.min_utility() - 1e-9 <= r <= game.max_utility() + 1e-9 for r in returns), returns
    assert abs(sum(returns)) < 1e-9, f"returns must sum to zero, got {returns}"


def random_sim_check(game, n_games: int, seed: int, *, deep_every: int = 7) -> dict[str, float]:
    """Plays ``n_games`` random games of ``game`` checking every invariant; returns simple statistics.

    ``deep_every``: the costlier checks (clone independence, illegal actions, string round trips,
    JSON observation) run on every ``deep_every``-th step.
    """
    rng = random.Random(seed)
    total_moves = 0
    wins = [0] * game.num_players()
    spec = str(game)
    assert str(games.load(spec)) == spec, "str(game) must load back to the same spec"
    for g in range(n_games):
        state = game.new_initial_state()
        assert state.history() == []
        steps = 0
        while not state.is_terminal():
            player = state.current_player()
            assert player == CHANCE or 0 <= player < game.num_players(), player
            if player == CHANCE:
                action = sample_chance(state, rng)
            else:
                legal = state.legal_actions()
                assert legal, "at least one legal action at every decision node"
                assert legal == sorted(set(legal)), "legal actions must be sorted and unique"
                assert all(0 <= a < state.n_actions for a in legal)
                action = rng.choice(legal)
            if steps % deep_every == 0:
                for a in state.legal_actions():
                    text = state.action_to_string(a)
                    assert isinstance(text, str) and text
                    assert state.string_to_action(text) == a, f"string round trip failed for {a} -> {text!r}"
                json.dumps(state.observation())
                assert str(state)
                check_illegal_action_leaves_state(state, rng)
                twin = state.clone()
                assert twin == state and twin.history() == state.history()
                key = state._state_key()
                twin.apply_action(action)
                if not twin.is_terminal():
                    twin.random_playout(rng.getrandbits(32))
                assert state._state_key() == key, "a clone shares state with its original"
            state.apply_action(action)
            steps += 1
            assert steps < 100_000, "game did not end"
        check_terminal(state, game)
        replay = games.load(spec).new_initial_state()
        for a in state.history():
            replay.apply_action(a)
        assert replay == state and replay.returns() == state.returns(), "replay from (spec, history) differs"
        if g % 10 == 0:
            assert pickle.loads(pickle.dumps(state)) == state
        total_moves += len(state.history())
        returns = state.returns()
        wins[returns.index(max(returns))] += 1
    return {"mean_length": total_moves / n_games, **{f"wins_{i}": w / n_games for i, w in enumerate(wins)}}
