"""arena's games inside OpenSpiel (arena.adapters.openspiel.register): OpenSpiel's own consistency checks, its
algorithms
(get_all_states, evaluate_bots, the Python MCTSBot), the GameType facts, the observation tensors, and arena_hex
against OpenSpiel's hex move for move."""
from __future__ import annotations

import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install 'arena[openspiel]')")

from open_spiel.python.algorithms import evaluate_bots, get_all_states, mcts  # noqa: E402

from arena.adapters.openspiel import observation_vector, register  # noqa: E402

SMALL = ["arena_nim(n=12)", "arena_nim(n=12,coin=true)", "arena_hex(size=3)", "arena_hex(size=3,pie=true)",
         "arena_colosseum(size=4)", "arena_doublestep(length=5)", "arena_sorry(players=2)", "arena_sorry(players=3)"]


@pytest.fixture(scope="module", autouse=True)
def registered():
    assert register() == ["arena_doublestep", "arena_nim", "arena_hex", "arena_colosseum", "arena_sorry"]
    assert register() == ["arena_doublestep", "arena_nim", "arena_hex", "arena_colosseum", "arena_sorry"]


@pytest.mark.parametrize("spec", SMALL)
def test_openspiels_random_simulation_checks_pass(spec):
    sims = 3 if "sorry" in spec else 10  # a game of Sorry! is hundreds of moves through Python
    pyspiel.random_sim_test(pyspiel.load_game(spec), num_sims=sims, serialize=False, verbose=False)


def test_game_type_facts():
    T = pyspiel.GameType
    hex_ = pyspiel.load_game("arena_hex(size=5)").get_type()
    assert hex_.chance_mode == T.ChanceMode.DETERMINISTIC and hex_.utility == T.Utility.ZERO_SUM
    assert hex_.information == T.Information.PERFECT_INFORMATION and hex_.dynamics == T.Dynamics.SEQUENTIAL
    sorry = pyspiel.load_game("arena_sorry(players=3)")
    assert sorry.get_type().chance_mode == T.ChanceMode.EXPLICIT_STOCHASTIC and sorry.num_players() == 3
    assert (sorry.get_type().min_num_players, sorry.get_type().max_num_players) == (2, 4)
    nim = pyspiel.load_game("arena_nim(n=10,k=4)")
    assert nim.num_distinct_actions() == 5 and nim.max_game_length() == 10 and nim.min_utility() == -1


def test_get_all_states_on_small_games_agrees_with_openspiels_hex():
    theirs = get_all_states.get_all_states(pyspiel.load_game("hex(board_size=2)"), to_string=lambda s: s.history_str())
    ours_by_history = get_all_states.get_all_states(pyspiel.load_game("arena_hex(size=2)"),
                                                    to_string=lambda s: s.history_str())
    assert set(ours_by_history) == set(theirs)
    nim = get_all_states.get_all_states(pyspiel.load_game("arena_nim(n=6,k=2)"), to_string=str)
    # pile 6: player 0 to move; 5: player 1 (6-1); 4..1: either; 0: won by player 0 or by player 1
    assert len(nim) == 1 + 1 + 4 * 2 + 2


def test_arena_hex_is_openspiels_hex_move_for_move():
    for trial in range(60):
        rng = random.Random(trial)
        n, pie = rng.randint(2, 6), rng.random() < 0.5
        ours = pyspiel.load_game(f"arena_hex(size={n},pie={str(pie).lower()})").new_initial_state()
        theirs = pyspiel.load_game(f"hex(board_size={n},swap={str(pie).lower()})").new_initial_state()
        while not theirs.is_terminal():
            assert ours.legal_actions() == theirs.legal_actions() and ours.current_player() == theirs.current_player()
            action = rng.choice(theirs.legal_actions())
            ours.apply_action(action)
            theirs.apply_action(action)
        assert ours.is_terminal() and ours.returns() == theirs.returns()


@pytest.mark.parametrize("spec", ["arena_hex(size=3)", "arena_colosseum(size=4)",
                                  "arena_sorry(players=2,pawnsPerPlayer=1)"])
def test_evaluate_bots_with_openspiels_python_mcts(spec):
    game = pyspiel.load_game(spec)
    rng = np.random.RandomState(0)
    bot = mcts.MCTSBot(game, 1.4, 60, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    random_bot = pyspiel.make_uniform_random_bot(1, 3)
    results = [evaluate_bots.evaluate_bots(game.new_initial_state(), [bot, random_bot], rng)
               for _ in range(1 if "sorry" in spec else 4)]
    assert all(len(r) == 2 and abs(sum(r)) < 1e-9 for r in results)
    if "hex" in spec:
        assert all(r[0] > 0 for r in results), "60 simulations win 3x3 hex as first player"


@pytest.mark.parametrize("spec", SMALL)
def test_observation_tensors_are_numpy_and_keep_their_shape(spec):
    game = pyspiel.load_game(spec)
    size = game.observation_tensor_size()
    rng = random.Random(1)
    for _ in range(3):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
                continue
            tensor = np.asarray(state.observation_tensor())
            assert tensor.shape == (size,)
            assert tensor.tolist() == observation_vector(state.arena_state.observation())
            state.apply_action(rng.choice(state.legal_actions()))
