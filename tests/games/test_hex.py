"""Hex: hand-built positions, the swap rule, bad specs, compiled playouts, and a differential test
against OpenSpiel's ``hex`` (rules: shared/specs/games.md; conventions: docs/hex.md)."""
from __future__ import annotations

import math
import random
from typing import Any

import pytest

import games
from games.errors import GameSpecError, InvalidActionError
from games.hex import HexState, playouts_fill, playouts_move_by_move, reference
from games.hex._hex import _py_fill_winner, _py_playout_moves

# Random play from the empty board, measured independently (shared/notes/performance-anchors.md).
ANCHOR_P0_WINS = {7: 0.544, 11: 0.522}
ANCHOR_MEAN_LENGTH_7 = 42.3


def play(spec: str, actions: list[int]) -> HexState:
    state = games.load(spec).new_initial_state()
    for a in actions:
        state.apply_action(a)
    return state


def binomial_sd(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


# ---- conventions ------------------------------------------------------------------------------
def test_defaults_and_action_ids() -> None:
    game = games.load("hex")
    assert game.size == 7 and game.param("pie") is False
    assert game.num_distinct_actions() == 50
    state = game.new_initial_state()
    assert state.current_player() == 0
    assert state.legal_actions() == list(range(49)), "the swap id 49 exists but is not legal without pie"
    assert state.observation() == {"board": [-1] * 49, "size": 7, "current_player": 0}


@pytest.mark.parametrize("size", [2, 3, 5])
def test_neighbours_decide_connections(size: int) -> None:
    # Two stones of one colour on adjacent rows: for each pair, the engine's win on a 2-row board is
    # exactly adjacency; on larger boards, check the reference's neighbour table against the spec.
    nbrs = reference.neighbours(size)
    for cell in range(size * size):
        r, c = divmod(cell, size)
        expected = {(r - 1, c), (r - 1, c + 1), (r, c - 1), (r, c + 1), (r + 1, c - 1), (r + 1, c)}
        assert set(nbrs[cell]) == {rr * size + cc for rr, cc in expected if 0 <= rr < size and 0 <= cc < size}
    if size == 2:
        # x: a in the top row, b in the bottom row; o answers on a cell that cannot matter.
        for a in (0, 1):
            for b in (2, 3):
                o_cell = ({0, 1, 2, 3} - {a, b}).pop()
                s = play("hex(size=2)", [a, o_cell, b])
                assert s.is_terminal() == (b in nbrs[a]), (a, b)
        # o: a in the left column, b in the right column; x's two stones are the other two cells.
        for a in (0, 2):
            for b in (1, 3):
                x1, x2 = sorted({0, 1, 2, 3} - {a, b})
                s = play("hex(size=2)", [x1, a, x2])
                if s.is_terminal():
                    assert x2 in nbrs[x1]   # x joined top and bottom first
                    continue
                s.apply_action(b)
                assert s.is_terminal() == (b in nbrs[a]), (a, b)
                assert not s.is_terminal() or s.returns() == [-1.0, 1.0]


def test_corner_cells_on_3x3() -> None:
    nbrs = reference.neighbours(3)
    assert set(nbrs[0]) == {1, 3}            # obtuse corner: two neighbours
    assert set(nbrs[2]) == {1, 4, 5}         # acute corner: three
    assert set(nbrs[6]) == {3, 4, 7}
    assert set(nbrs[8]) == {5, 7}
    assert set(nbrs[4]) == {1, 2, 3, 5, 6, 7}


def test_x_wins_top_to_bottom() -> None:
    s = play("hex(size=3)", [1, 0, 4, 3])
    assert not s.is_terminal()
    s.apply_action(7)   # x on column 1: (0,1) (1,1) (2,1)
    assert s.is_terminal() and s.returns() == [1.0, -1.0]
    assert s.legal_actions() == []


def test_o_wins_left_to_right() -> None:
    s = play("hex(size=3)", [0, 3, 1, 4, 8, 5])   # o on row 1: (1,0) (1,1) (1,2)
    assert s.is_terminal() and s.returns() == [-1.0, 1.0]
    assert s.current_player() == games.TERMINAL


def test_anti_diagonal_connects_but_main_diagonal_does_not() -> None:
    s = play("hex(size=3)", [2, 0, 4, 1])
    s.apply_action(6)   # (0,2) (1,1) (2,0): each a (r+1, c-1) neighbour of the last
    assert s.is_terminal() and s.returns() == [1.0, -1.0]
    s = play("hex(size=3)", [0, 2, 4, 6, 8])   # (0,0) (1,1) (2,2) are not neighbours
    assert not s.is_terminal() and s.current_player() == 1


def test_no_win_without_connection() -> None:
    s = play("hex(size=3)", [0, 6, 1, 7, 2])   # x owns the whole top row; o two of the bottom row
    assert not s.is_terminal() and s.returns() == [0.0, 0.0]
    s = play("hex(size=4)", [0, 4, 1, 5, 2, 6, 12, 13, 8])
    assert not s.is_terminal()


def test_board_string_is_openspiels_rhombus() -> None:
    s = play("hex(size=3)", [0, 4, 8])
    assert str(s) == "x . . \n . o . \n  . . x "


def test_action_strings_round_trip() -> None:
    s = games.load("hex(size=5)").new_initial_state()
    assert s.action_to_string(0) == "a1"
    assert s.action_to_string(13) == "d3"       # row 2, column 3
    assert s.action_to_string(25) == "swap"
    for a in range(26):
        assert s.string_to_action(s.action_to_string(a)) == a
    assert s.string_to_action("D3") == 13
    for bad in ("f1", "a6", "a0", "", "x", "swapp", "a"):
        with pytest.raises(InvalidActionError):
            s.string_to_action(bad)


# ---- the pie rule -------------------------------------------------------------------------------
def test_swap_replaces_the_stone_by_its_mirror() -> None:
    s = play("hex(size=5,pie=true)", [8])       # x on (1, 3)
    assert s.current_player() == 1 and 25 in s.legal_actions()
    assert s.string_to_action("swap") == 25
    s.apply_action(25)
    board = s.observation()["board"]
    assert board[16] == 1 and board.count(-1) == 24, "o on (3, 1), no x left"
    assert s.current_player() == 0
    assert 25 not in s.legal_actions() and 16 not in s.legal_actions() and 8 in s.legal_actions()
    s.apply_action(0)
    assert 25 not in s.legal_actions(), "the swap is only player 1's first decision"
    with pytest.raises(ValueError):
        s.apply_action(25)


def test_swap_only_with_pie() -> None:
    s = play("hex(size=5)", [8])
    assert 25 not in s.legal_actions()
    with pytest.raises(ValueError):
        s.apply_action(25)
    assert s.history() == [8]
    assert 25 not in games.load("hex(size=5,pie=true)").new_initial_state().legal_actions()


def test_swapped_edge_stone_joins_its_new_side() -> None:
    # x on (0, 2) touches the top; swapped, o on (2, 0) touches the left side and wins along row 2.
    s = play("hex(size=3,pie=true)", [2, 9, 0, 7, 4])
    assert not s.is_terminal()
    s.apply_action(8)
    assert s.is_terminal() and s.returns() == [-1.0, 1.0]


# ---- bad specs ------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["hex(size=0)", "hex(size=40)", "hex(size=1)", "hex(size=26)",
                                  "hex(size=x)"])
def test_bad_size_lists_valid_values(spec: str) -> None:
    with pytest.raises(GameSpecError, match=r"'size'.*from 2 to 25"):
        games.load(spec)


def test_bad_pie_and_unknown_parameter() -> None:
    with pytest.raises(GameSpecError, match="pie.*true or false"):
        games.load("hex(pie=maybe)")
    with pytest.raises(GameSpecError, match="board_size.*valid parameters: size, pie"):
        games.load("hex(board_size=7)")
    with pytest.raises(ValueError):
        HexState(games.load("hex"), 40, False)


# ---- compiled playouts --------------------------------------------------------------------------
def test_fill_playout_leaves_a_consistent_terminal_state() -> None:
    rng = random.Random(3)
    for size in (2, 3, 5, 8):
        for i in range(50):
            s = games.load(f"hex(size={size})").new_initial_state()
            for a in rng.sample(range(size * size), rng.randrange(size)):
                if s.is_terminal():
                    break
                s.apply_action(a)
            if s.is_terminal():
                continue
            s.random_playout(i)
            board = s.observation()["board"]
            winner = reference.full_board_winner(board, size)
            assert s.is_terminal() and s.legal_actions() == []
            assert -1 not in board
            assert s.returns() == ([1.0, -1.0] if winner == 0 else [-1.0, 1.0])


def test_full_board_winner_check_matches_the_reference() -> None:
    # Every colouring of the 4x4 board (Hex: a full board has exactly one winner), then random
    # full boards of larger sizes, where winding paths that step back up occur.
    for bits in range(1 << 16):
        board = [(bits >> i) & 1 for i in range(16)]
        assert _py_fill_winner(board, 4) == reference.full_board_winner(board, 4), board
    rng = random.Random(8)
    for size in (7, 9, 11, 25):
        for _ in range(3000 if size < 25 else 300):
            board = [rng.randrange(2) for _ in range(size * size)]
            assert _py_fill_winner(board, size) == reference.full_board_winner(board, size), board


def _connected(board: list[int], size: int, player: int) -> bool:
    """Whether ``player``'s stones join its two sides (a plain search over the reference's table)."""
    nbrs = reference.neighbours(size)
    starts = [c for c in (range(size) if player == 0 else range(0, size * size, size)) if board[c] == player]
    seen, stack = set(starts), list(starts)
    while stack:
        cell = stack.pop()
        if (cell >= size * size - size) if player == 0 else (cell % size == size - 1):
            return True
        for nb in nbrs[cell]:
            if board[nb] == player and nb not in seen:
                seen.add(nb)
                stack.append(nb)
    return False


def test_move_by_move_playout_ends_in_a_real_game_end() -> None:
    # The final position must be one a game can end in: the players alternated, only the winner is
    # connected, and some winner stone is a last move before which nobody was connected. Replaying
    # the stones in alternation with that stone last must end the game exactly there.
    for size in (2, 4, 7):
        for seed in range(60):
            s = games.load(f"hex(size={size})").new_initial_state()
            moves = _py_playout_moves(s, seed)
            board = s.observation()["board"]
            winner = 0 if s.returns()[0] > 0 else 1
            assert s.is_terminal() and moves == size * size - board.count(-1)
            assert board.count(0) - board.count(1) == (1 if winner == 0 else 0), "players alternated"
            assert _connected(board, size, winner) and not _connected(board, size, 1 - winner)
            last = next(c for c in range(size * size) if board[c] == winner and
                        not _connected([-1 if i == c else v for i, v in enumerate(board)], size, winner))
            xs = [c for c in range(size * size) if board[c] == 0 and c != last]
            os_ = [c for c in range(size * size) if board[c] == 1 and c != last]
            order = [a for pair in zip(xs, os_ + [-1]) for a in pair if a >= 0][:moves - 1] + [last]
            replay = games.load(f"hex(size={size})").new_initial_state()
            for i, a in enumerate(order):
                assert not replay.is_terminal(), f"the game ended before move {i}"
                replay.apply_action(a)
            assert replay == s and replay.returns() == s.returns()


def test_playout_from_a_pending_swap_takes_the_swap_at_its_rate() -> None:
    # 5x5, pie, x on the centre: player 1 has 24 cells + swap. A filled board shows whether the swap
    # was taken: after a swap o ends with 13 stones and x with 12, otherwise the reverse.
    root = play("hex(size=5,pie=true)", [12])
    n, swaps = 5000, 0
    for seed in range(n):
        s = root.clone()
        s.random_playout(seed)
        board = s.observation()["board"]
        swaps += board.count(1) > board.count(0)
    p = 1 / 25
    assert abs(swaps / n - p) < 4 * binomial_sd(p, n)
    s = root.clone()
    _py_playout_moves(s, 1)
    assert s.is_terminal()


def test_playouts_leave_the_root_unchanged() -> None:
    root = play("hex(size=7,pie=true)", [24])
    key = root._state_key()
    playouts_fill(root, 200, 1)
    playouts_move_by_move(root, 200, 1)
    assert root._state_key() == key and root.history() == [24]


def test_random_playouts_match_the_measured_anchors() -> None:
    n = 20_000
    for size, n_games in ((7, n), (11, n // 2)):
        root = games.load(f"hex(size={size})").new_initial_state()
        tol = 4 * binomial_sd(ANCHOR_P0_WINS[size], n_games) + 0.0005   # the anchor is rounded to 0.1%
        wins, filled = playouts_fill(root, n_games, 11)
        assert abs(wins[0] / n_games - ANCHOR_P0_WINS[size]) < tol
        assert filled == n_games * size * size
        wins, _ = playouts_move_by_move(root, n_games, 12)
        assert abs(wins[0] / n_games - ANCHOR_P0_WINS[size]) < tol


def test_move_by_move_mean_length_on_7x7() -> None:
    # 200 batches of 100 games: the spread of the batch means gives the standard error.
    root = games.load("hex(size=7)").new_initial_state()
    means = [playouts_move_by_move(root, 100, seed)[1] / 100 for seed in range(200)]
    mean = sum(means) / len(means)
    se = math.sqrt(sum((m - mean) ** 2 for m in means) / (len(means) - 1) / len(means))
    assert abs(mean - ANCHOR_MEAN_LENGTH_7) < 4 * se + 0.05   # the anchor is rounded to 0.1


@pytest.mark.parametrize("size", [5, 7])
def test_compiled_playouts_agree_with_the_python_reference(size: int) -> None:
    root = games.load(f"hex(size={size})").new_initial_state()
    n_c, n_py = 40_000, 8_000
    c_fill = playouts_fill(root, n_c, 21)[0][0] / n_c
    c_moves = playouts_move_by_move(root, n_c, 22)[0][0] / n_c
    py_fill = reference.playouts_fill(n_py, size, seed=23)[0] / n_py
    py_moves_wins, py_moves_len = reference.playouts_move_by_move(n_py // 4, size, seed=24)
    py_moves = py_moves_wins[0] / (n_py // 4)
    p = c_fill
    assert abs(c_fill - c_moves) < 4 * binomial_sd(p, n_c) * math.sqrt(2)
    assert abs(c_fill - py_fill) < 4 * math.sqrt(p * (1 - p) * (1 / n_c + 1 / n_py))
    assert abs(c_moves - py_moves) < 4 * math.sqrt(p * (1 - p) * (1 / n_c + 4 / n_py))


def test_engine_agrees_with_the_reference_move_by_move() -> None:
    # The same random cell orders through both: same ending move, same winner.
    rng = random.Random(5)
    for size in (2, 3, 4, 6, 9):
        for _ in range(150):
            order = rng.sample(range(size * size), size * size)
            moves, winner = reference.play(order, size)
            s = games.load(f"hex(size={size})").new_initial_state()
            for a in order[:moves]:
                assert not s.is_terminal()
                s.apply_action(a)
            assert s.is_terminal() and s.returns()[winner] == 1.0


# ---- differential test against OpenSpiel --------------------------------------------------------
# Only these tests need OpenSpiel: a module-level importorskip would skip every Hex test above as well.
@pytest.fixture(scope="module")
def pyspiel() -> Any:
    return pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install open-spiel): "
                                                 "the differential tests against OpenSpiel's hex are skipped")


def _differential(pyspiel: Any, size: int, n_games: int, seed: int, pie: bool) -> int:
    """Plays the same random actions in both engines; returns how many games took the swap."""
    spiel_game = pyspiel.load_game(f"hex(board_size={size},swap={'true' if pie else 'false'})")
    game = games.load(f"hex(size={size},pie={'true' if pie else 'false'})")
    rng = random.Random(seed)
    swaps = 0
    for g in range(n_games):
        ours, theirs = game.new_initial_state(), spiel_game.new_initial_state()
        check_every = 1 if g % 10 == 0 else 0   # full legal-action comparison on every 10th game
        while not theirs.is_terminal():
            assert not ours.is_terminal()
            legal = theirs.legal_actions()
            if check_every:
                assert ours.legal_actions() == legal
            if pie and size * size in legal and rng.random() < 0.5:
                action = size * size
                swaps += 1
            else:
                action = legal[rng.randrange(len(legal))]
            theirs.apply_action(action)
            ours.apply_action(action)
        assert ours.is_terminal(), f"OpenSpiel ended at move {len(theirs.history())}, ours did not"
        assert ours.returns() == list(theirs.returns())
        assert ours.history() == list(theirs.history())
        assert str(ours) == str(theirs)
    return swaps


@pytest.mark.parametrize("size,n_games", [(5, 2000), (7, 2000), (11, 500)])
def test_same_games_as_openspiel(pyspiel: Any, size: int, n_games: int) -> None:
    _differential(pyspiel, size, n_games, seed=size, pie=False)


def test_same_swap_as_openspiel(pyspiel: Any) -> None:
    if "swap" not in pyspiel.load_game("hex").get_parameters():
        pytest.skip("this OpenSpiel's hex has no swap parameter (added in open_spiel 2.x)")
    assert pyspiel.load_game("hex(board_size=5,swap=true)").num_distinct_actions() == 26
    swaps = _differential(pyspiel, 5, 600, seed=99, pie=True)
    assert swaps > 200, "the swap branch was exercised"


def test_action_strings_match_openspiel(pyspiel: Any) -> None:
    spiel_state = pyspiel.load_game("hex(board_size=11)").new_initial_state()
    ours = games.load("hex(size=11)").new_initial_state()
    theirs = [spiel_state.action_to_string(0, a) for a in range(121)]
    assert [ours.action_to_string(a) for a in range(121)] == theirs
