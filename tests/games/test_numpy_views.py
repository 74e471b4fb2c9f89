"""Board and observation views as numpy arrays (issue 16 §6): Game.observation_arrays for every game, Colosseum's
course-shaped walls from the state's wall bytes, Hex's square board, OpenSpiel's observation tensor."""
from __future__ import annotations

import random

import numpy as np
import pytest

import games
from games.base import Game
from games.colosseum.arrays import chess_board, wall_bytes


def _played(spec: str, moves: int, seed: int = 0):
    state = games.load(spec).new_initial_state()
    rng = random.Random(seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("spec", ["nim", "doublestep", "hex(size=5)", "colosseum(size=6)", "sorry(players=3)"])
def test_every_game_gives_its_numbers_as_arrays(spec):
    game = games.load(spec)
    for seed in range(5):
        state = _played(spec, 6, seed)
        arrays = game.observation_arrays(state)
        obs = state.observation()
        assert int(arrays["current_player"]) == obs["current_player"]
        for key, array in arrays.items():
            assert isinstance(array, np.ndarray) and array.dtype.kind in "biuf"
            assert np.array_equal(np.ravel(array), np.ravel(np.asarray(obs[key]))), key


def test_colosseum_walls_come_from_the_wall_bytes_without_nested_lists():
    for seed in range(20):
        state = _played(f"colosseum(size={3 + seed % 10},seed={seed})", seed % 7, seed)
        board = chess_board(state)
        assert board.dtype == bool and board.tolist() == state.wall_array()
        bits = wall_bytes(state)
        assert bits.dtype == np.uint8 and not bits.flags.writeable  # a read-only view of one bytes copy
        generic = Game.observation_arrays(state.game, state)
        assert np.array_equal(generic["walls"], state.game.observation_arrays(state)["walls"])


def test_hex_board_is_square():
    state = _played("hex(size=4)", 5)
    board = state.game.observation_arrays(state)["board"]
    assert board.shape == (4, 4) and board.dtype == np.int8
    assert board.ravel().tolist() == state.observation()["board"]


def test_openspiel_observation_tensor():
    pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install 'arena[openspiel]')")
    game = games.load("openspiel:tic_tac_toe")
    state = game.new_initial_state()
    state.apply_actions([4, 0])
    tensor = game.observation_arrays(state)["observation"]
    assert tensor.shape == (3, 3, 3)  # OpenSpiel's planes: empty, o, x
    assert tensor[2, 1, 1] == 1 and tensor[1, 0, 0] == 1 and tensor[0].sum() == 7


def test_colosseum_wall_bytes_are_the_states_own_memory_read_only_and_keep_it_alive():
    import ctypes
    import gc
    state = _played("colosseum(size=9,seed=4)", 1)
    assert not state.is_terminal()
    bits = wall_bytes(state)
    # No copy: two views share memory, and the base chain ends at the state itself.
    assert np.shares_memory(bits, wall_bytes(state))
    assert bits.base.obj.state is state
    old_copy = np.frombuffer(state._state_key()[4], dtype=np.uint8).reshape(9, 9)  # the former copying path
    assert np.array_equal(bits, old_copy)
    # Read-only, whichever way a bot asks for write access.
    with pytest.raises(ValueError):
        bits[0, 0] = 0
    with pytest.raises(ValueError):
        bits.flags.writeable = True
    with pytest.raises((BufferError, TypeError)):
        (ctypes.c_ubyte * 81).from_buffer(state.wall_view())
    assert memoryview(state.wall_view()).readonly
    # Live: the view follows the state; a snapshot is a copy.
    snapshot = bits.copy()
    state.apply_action(state.legal_actions()[0])
    assert not np.array_equal(bits, snapshot)
    assert chess_board(state).tolist() == state.wall_array()
    # Lifetime: the array keeps the state alive (were it freed, new states of its size would reuse its memory).
    expected = bits.copy()
    del state
    gc.collect()
    others = [_played(f"colosseum(size=9,seed={seed})", 0) for seed in range(50)]
    assert others and np.array_equal(bits, expected)


def test_colosseum_chess_board_is_a_fresh_writable_copy():
    state = _played("colosseum(size=7,seed=2)", 3)
    board = chess_board(state)
    board[:] = False  # an agent may scribble on its board, as under the course's deepcopy
    assert board.flags.writeable and not np.shares_memory(board, wall_bytes(state))
    assert chess_board(state).tolist() == state.wall_array()
