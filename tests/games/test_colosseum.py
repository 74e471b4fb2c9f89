"""Rules of Colosseum Survival! (shared/specs/colosseum.md): the §11 test vectors, board generation,
scoring and ties, the random-walk substitute, and parity of the compiled engine with reference.py."""
from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.colosseum import ColosseumGame, ColosseumState
from games.colosseum import reference as ref
from games.errors import GameSpecError, InvalidActionError

U, R, D, L = range(4)
OPP = {U: D, R: L, D: U, L: R}

WORLD_1_WALLS = [(0, 0, R), (0, 1, R), (1, 2, R), (2, 1, D), (2, 2, D), (2, 3, R), (3, 0, R), (3, 1, D), (4, 0, R)]


def action(size: int, r: int, c: int, d: int) -> int:
    return (r * size + c) * 4 + d


def world_1() -> ColosseumState:
    return ColosseumState.from_position(5, WORLD_1_WALLS, (2, 3), (2, 1), player=0)


def ref_view(state: ColosseumState) -> tuple[list, tuple[int, int], tuple[int, int]]:
    """(board, mover, opponent) for reference.py."""
    p0, p1 = (tuple(p) for p in state.positions())
    me, opp = (p0, p1) if state.current_player() == 0 else (p1, p0)
    return state.wall_array(), me, opp


def interior_walls(board: list) -> int:
    m = len(board)
    sides = sum(board[r][c][d] and not ref.is_border(m, r, c, d) for r in range(m) for c in range(m) for d in range(4))
    return sides // 2


def assert_stored_twice(board: list) -> None:
    m = len(board)
    for r in range(m):
        for c in range(m):
            for d, (dr, dc) in enumerate(ref.MOVES):
                if ref.is_border(m, r, c, d):
                    assert board[r][c][d], f"border side {(r, c, d)} must be a wall"
                else:
                    assert board[r][c][d] == board[r + dr][c + dc][OPP[d]], f"wall {(r, c, d)} stored once"


# ---- §11 test vectors -----------------------------------------------------------------------------
@pytest.mark.parametrize("dest, d", [((1, 1), U), ((0, 2), D), ((0, 4), L), ((3, 1), R), ((4, 2), U)])
def test_world_1_legal_moves(dest: tuple[int, int], d: int) -> None:
    state = world_1()
    a = action(5, *dest, d)
    assert state.max_step == 3
    assert a in state.legal_actions()
    assert state.illegal_reason(a) is None
    board, me, opp = ref_view(state)
    assert ref.check_move(board, me, opp, dest, d, 3) is None


@pytest.mark.parametrize("dest, d, reason", [
    ((2, 0), U, "5 steps away"),
    ((2, 1), U, "opponent's cell"),
    ((3, 1), D, "a wall is already there"),
    ((0, 3), U, "border"),
    ((4, 1), R, "4 steps away"),
    ((0, 1), D, "4 steps away"),
])
def test_world_1_illegal_moves_and_why(dest: tuple[int, int], d: int, reason: str) -> None:
    state = world_1()
    a = action(5, *dest, d)
    assert a not in state.legal_actions()
    assert reason in state.illegal_reason(a)
    board, me, opp = ref_view(state)
    assert reason in ref.check_move(board, me, opp, dest, d, 3)
    with pytest.raises(ValueError):
        state.apply_action(a)


def test_world_1_is_not_over() -> None:
    state = world_1()
    assert state.check_endgame() == (False, 25, 25)
    assert not state.is_terminal() and state.scores() == [25, 25]
    board, p0, p1 = state.wall_array(), (2, 3), (2, 1)
    assert ref.end_check(board, p0, p1) == (False, 25, 25)


def test_world_2_is_over_15_to_10() -> None:
    walls = WORLD_1_WALLS + [(0, 2, D), (2, 2, R)]
    state = ColosseumState.from_position(5, walls, (0, 2), (2, 2))
    assert state.check_endgame() == (True, 15, 10)
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    assert ref.end_check(state.wall_array(), (0, 2), (2, 2)) == (True, 15, 10)
    assert "A wins 15:10" in str(state)


def test_world_1_walls_are_stored_on_both_sides() -> None:
    board = world_1().wall_array()
    assert_stored_twice(board)
    assert board[0][0][R] and board[0][1][L] and board[3][1][D] and board[4][1][U]
    assert interior_walls(board) == len(WORLD_1_WALLS)


# ---- end of game ----------------------------------------------------------------------------------
def test_a_draw_is_possible_and_scored_zero() -> None:
    # A cut between columns 1 and 2 with one gap; A closes it: two halves of 8 cells.
    state = ColosseumState.from_position(4, [(0, 1, R), (1, 1, R), (2, 1, R)], (3, 1), (3, 2))
    state.apply_action(state.string_to_action("(3,1) Right"))
    assert state.is_terminal()
    assert state.scores() == [8, 8] and state.returns() == [0.0, 0.0]
    assert "tie" in str(state)


def test_walling_yourself_in_ends_the_game_at_once() -> None:
    state = ColosseumState.from_position(4, [(0, 0, R)], (0, 0), (3, 3))
    state.apply_action(action(4, 0, 0, D))
    assert state.is_terminal() and state.scores() == [1, 15] and state.returns() == [-1.0, 1.0]
    assert state.legal_actions() == []


def test_cutting_off_an_empty_region_does_not_end_the_game() -> None:
    state = ColosseumState.from_position(4, [(3, 3, U)], (2, 2), (0, 0))
    state.apply_action(action(4, 3, 2, R))          # (3,3) is now a region holding nobody
    assert not state.is_terminal() and state.current_player() == 1
    assert state.check_endgame() == (False, 15, 15)


def test_the_second_player_can_win_on_its_move() -> None:
    # Column 0 is walled off except at row 3; B closes the gap and keeps the bigger part.
    state = ColosseumState.from_position(4, [(0, 0, R), (1, 0, R), (2, 0, R)], (0, 0), (3, 1), player=1)
    state.apply_action(action(4, 3, 1, L))
    assert state.is_terminal() and state.scores() == [4, 12] and state.returns() == [-1.0, 1.0]


def test_direct_construction_checks_the_size() -> None:
    game = games.load("colosseum(size=5)")
    for size in (2, 21):
        with pytest.raises(ValueError, match="from 3 to 20"):
            ColosseumState(game, size, 0)


def test_from_position_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="border"):
        ColosseumState.from_position(4, [(0, 0, U)], (0, 0), (3, 3))
    with pytest.raises(ValueError, match="share"):
        ColosseumState.from_position(4, [], (1, 1), (1, 1))
    with pytest.raises(ValueError, match="not on"):
        ColosseumState.from_position(4, [], (0, 4), (1, 1))
    with pytest.raises(GameSpecError, match="from 3 to 20"):
        ColosseumState.from_position(21, [], (0, 0), (1, 1))


# ---- board generation (spec §3) -------------------------------------------------------------------
@pytest.mark.parametrize("size, k", [(5, 3), (6, 3), (7, 4), (8, 4), (9, 5), (10, 5), (11, 6), (12, 6)])
def test_max_step_formula(size: int, k: int) -> None:
    state = games.load(f"colosseum(size={size},seed=1)").new_initial_state()
    assert state.max_step == k and state.observation()["max_step"] == k


@pytest.mark.parametrize("size", [3, 4, 5, 6, 7, 9, 12, 20])
def test_generated_boards_are_symmetric_with_2k_walls_and_mirrored_players(size: int) -> None:
    k = (size + 1) // 2
    for seed in range(60):
        state = games.load(f"colosseum(size={size},seed={seed})").new_initial_state()
        board = state.wall_array()
        assert interior_walls(board) == 2 * k
        assert_stored_twice(board)
        for r in range(size):
            for c in range(size):
                for d in range(4):
                    assert board[r][c][d] == board[size - 1 - r][size - 1 - c][OPP[d]], "not 180° symmetric"
        (r0, c0), (r1, c1) = state.positions()
        assert (r1, c1) == (size - 1 - r0, size - 1 - c0) and (r0, c0) != (r1, c1)
        assert state.check_endgame()[0] is False and state.current_player() == 0


def test_generation_follows_the_documented_procedure() -> None:
    # reference.generate is the procedure of docs/colosseum.md written out in Python with the same RNG.
    for size in (3, 6, 11, 20):
        for seed in (0, 1, 2, 77, 2**40 + 3):
            state = games.load(f"colosseum(size={size},seed={seed})").new_initial_state()
            board, p0, p1 = ref.generate(size, seed)
            assert state.wall_array() == board and state.positions() == [list(p0), list(p1)]


def test_the_same_seed_gives_the_same_board_and_seeds_differ() -> None:
    a = games.load("colosseum(size=8,seed=5)").new_initial_state()
    b = games.load("colosseum(size=8,seed=5)").new_initial_state()
    assert a == b
    boards = {json.dumps(games.load(f"colosseum(size=8,seed={s})").new_initial_state().observation())
              for s in range(50)}
    assert len(boards) >= 45


def test_default_size_is_uniform_over_6_to_12() -> None:
    n = 1400
    sizes = Counter(games.load(f"colosseum(seed={s})").board_size() for s in range(n))
    assert set(sizes) == set(range(6, 13))
    # Each size expects n/7 = 200 (binomial sd ~13): allow 4 sd.
    assert all(abs(count - n / 7) < 4 * (n / 7 * 6 / 7) ** 0.5 for count in sizes.values()), sizes
    assert games.load("colosseum(seed=3)").new_initial_state().size == games.load("colosseum(seed=3)").board_size()


# ---- API: strings, observation, board drawing ------------------------------------------------------
def test_action_strings_round_trip_and_accept_the_course_form() -> None:
    state = games.load("colosseum(size=7,seed=2)").new_initial_state()
    assert state.action_to_string(action(7, 2, 3, U)) == "(2,3) Up"
    for a in range(state.n_actions):
        assert state.string_to_action(state.action_to_string(a)) == a
    assert state.string_to_action("2,3,u") == action(7, 2, 3, U)
    assert state.string_to_action("(6, 0) left") == action(7, 6, 0, L)
    assert state.string_to_action("4,5,R") == action(7, 4, 5, R)
    for bad in ("", "(2,3)", "(2,3) North", "7,0,u", "a,b,u", "2,3,x"):
        with pytest.raises(InvalidActionError):
            state.string_to_action(bad)


@settings(max_examples=200, deadline=None)
@given(st.integers(3, 20), st.data())
def test_action_strings_round_trip_on_every_size(size: int, data: st.DataObject) -> None:
    state = ColosseumState.from_position(size, [], (0, 0), (size - 1, size - 1))
    a = data.draw(st.integers(0, size * size * 4 - 1))
    assert state.string_to_action(state.action_to_string(a)) == a
    (r, c), d = divmod(a // 4, size), a % 4
    assert state.string_to_action(f"{r},{c},{'urdl'[d]}") == a


@settings(max_examples=100, deadline=None)
@given(st.integers(-5, 45), st.integers(0, 2**63 - 1))
def test_spec_strings_load_back_or_name_the_valid_sizes(size: int, seed: int) -> None:
    spec = f"colosseum(size={size},seed={seed})"
    if 3 <= size <= 20:
        game = games.load(spec)
        assert str(game) == spec and games.load(str(game)) == game and game.board_size() == size
    else:
        with pytest.raises(GameSpecError, match="from 3 to 20"):
            games.load(spec)


def test_observation_fields() -> None:
    state = world_1()
    obs = state.observation()
    json.dumps(obs)
    assert obs["size"] == 5 and obs["max_step"] == 3
    assert obs["positions"] == [[2, 3], [2, 1]] and obs["current_player"] == 0
    walls = obs["walls"]
    assert len(walls) == 5 and all(len(row) == 5 and all(len(cell) == 4 for cell in row) for row in walls)
    assert walls[0][2][U] and walls[4][2][D] and walls[2][0][L] and walls[2][4][R]   # the border
    assert walls[2][3][R] and walls[2][4][L] and not walls[2][3][U]
    assert obs["scores"] == [25, 25]


def test_board_string_shows_walls_players_and_max_step() -> None:
    text = str(world_1())
    assert text.count("A") >= 1 and text.count("B") >= 1
    assert "max_step 3" in text and "scores A 25, B 25" in text and "A (seat 0) to move" in text
    rows = text.splitlines()
    # Row 2 of world_1: B in column 1, A in column 3; its only inner wall is right of A (2,3,R).
    row2 = next(line for line in rows if line.startswith(" 2 "))
    assert row2 == " 2 |     B       A |   |"
    grid_line_below_row_2 = rows[rows.index(row2) + 1]
    assert grid_line_below_row_2 == "   +   +---+---+   +   +"   # (2,1,D) and (2,2,D)


# ---- the random-walk substitute (spec §5) ----------------------------------------------------------
def test_random_walk_is_legal_and_matches_the_reference() -> None:
    rng = random.Random(4)
    for g in range(40):
        state = games.load(f"colosseum(size={rng.randint(3, 12)},seed={g})").new_initial_state()
        while not state.is_terminal():
            seed = rng.getrandbits(48)
            a = state.random_walk_action(seed)
            assert a in state.legal_actions()
            board, me, opp = ref_view(state)
            (r, c), d = ref.random_walk(board, me, opp, state.max_step, ref.XorShiftRng(seed))
            assert a == action(state.size, r, c, d)
            assert state.random_walk_action(seed) == a, "the walk must not change the state"
            state.apply_action(a)
        with pytest.raises(ValueError):
            state.random_walk_action(0)


def test_random_walk_reaches_several_cells_and_sides() -> None:
    state = games.load("colosseum(size=10,seed=8)").new_initial_state()
    moves = Counter(state.random_walk_action(s) for s in range(400))
    assert len({a >> 2 for a in moves}) >= 5 and len({a & 3 for a in moves}) == 4


# ---- parity with reference.py ----------------------------------------------------------------------
def test_legal_moves_and_end_check_match_the_reference_on_random_games() -> None:
    rng = random.Random(11)
    positions = 0
    for g in range(120):
        size = rng.choice([3, 4, 5, 6, 7, 8, 10])
        state = games.load(f"colosseum(size={size},seed={1000 + g})").new_initial_state()
        while not state.is_terminal():
            board, me, opp = ref_view(state)
            legal = state.legal_actions()
            assert legal == ref.legal_actions(board, me, opp, state.max_step)
            positions += 1
            dist = ref.distances(board, me, opp)
            for a in rng.sample(range(state.n_actions), 12):
                cell, d = divmod(a, 4)
                expect = ref.check_move(board, me, opp, divmod(cell, size), d, state.max_step, dist)
                assert state.illegal_reason(a) == expect
            state.apply_action(rng.choice(legal))
            p0, p1 = (tuple(p) for p in state.positions())
            over, s0, s1 = ref.end_check(state.wall_array(), p0, p1)
            assert state.is_terminal() == over
            assert state.scores() == [s0, s1]            # tracked incrementally by the engine
            if over:
                assert state.returns() == ([1.0, -1.0] if s0 > s1 else [-1.0, 1.0] if s1 > s0 else [0.0, 0.0])
    assert positions > 1000


def random_position(rng: random.Random) -> tuple[ColosseumState, list, tuple[int, int], tuple[int, int]]:
    """Any walls (not symmetric), any two cells: positions no generated game need reach."""
    size = rng.randint(3, 9)
    walls = []
    for _ in range(rng.randint(0, size * size)):
        r, c, d = rng.randrange(size), rng.randrange(size), rng.randrange(4)
        if not ref.is_border(size, r, c, d):
            walls.append((r, c, d))
    p0, p1 = rng.sample([(r, c) for r in range(size) for c in range(size)], 2)
    state = ColosseumState.from_position(size, walls, p0, p1, player=rng.randrange(2))
    board = ref.empty_board(size)
    for r, c, d in walls:
        ref.set_barrier(board, r, c, d)
    return state, board, p0, p1


def test_random_positions_match_the_reference() -> None:
    rng = random.Random(13)
    for _ in range(300):
        state, board, p0, p1 = random_position(rng)
        assert state.wall_array() == board
        over, s0, s1 = ref.end_check(board, p0, p1)
        assert state.is_terminal() == over and state.scores() == [s0, s1]
        if over:
            continue
        me, opp = (p0, p1) if state.current_player() == 0 else (p1, p0)
        assert state.legal_actions() == ref.legal_actions(board, me, opp, state.max_step)
        dist = ref.distances(board, me, opp)
        for a in range(0, state.n_actions, 3):
            cell, d = divmod(a, 4)
            assert state.illegal_reason(a) == ref.check_move(board, me, opp, divmod(cell, state.size), d,
                                                             state.max_step, dist)
        state.random_playout(rng.getrandbits(32))
        assert state.is_terminal() and state.check_endgame() == (True, *state.scores())


def test_compiled_playouts_end_in_a_correct_final_position() -> None:
    rng = random.Random(12)
    for g in range(300):
        size = rng.choice([3, 5, 6, 9, 12, 20])
        state = games.load(f"colosseum(size={size},seed={g})").new_initial_state()
        for _ in range(rng.randrange(4)):            # start some playouts mid-game
            if not state.is_terminal():
                state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        walls_before = interior_walls(state.wall_array())
        moves = state.random_playout(rng.getrandbits(32))
        assert state.is_terminal() and 1 <= moves <= games.load(str(state.game)).max_game_length()
        board = state.wall_array()
        assert_stored_twice(board)
        assert interior_walls(board) == walls_before + moves
        over, s0, s1 = state.check_endgame()
        assert over and state.scores() == [s0, s1]
        assert state.returns() == ([1.0, -1.0] if s0 > s1 else [-1.0, 1.0] if s1 > s0 else [0.0, 0.0])


def test_compiled_and_reference_playouts_agree_on_who_wins() -> None:
    # Same position, independent random games: seat 0's win rate must agree within the binomial noise.
    from games._core import playouts
    board, p0, p1 = ref.generate(7, 4)
    root = games.load("colosseum(size=7,seed=4)").new_initial_state()
    n_ref, n_c = 3000, 30000
    w_ref = ref.playouts(n_ref, board, p0, p1, seed=1)
    w_c, _ = playouts(root, n_c, seed=1)        # a tie counts for seat 0 there
    rate_ref = (w_ref[0] + w_ref[2]) / n_ref
    rate_c = w_c[0] / n_c
    sd = (0.25 / n_ref + 0.25 / n_c) ** 0.5
    assert abs(rate_ref - rate_c) < 4 * sd, (w_ref, w_c)


# ---- bad specs ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["colosseum(size=0)", "colosseum(size=40)", "colosseum(size=2)",
                                  "colosseum(size=21)", "colosseum(size=x)"])
def test_bad_sizes_are_rejected_with_the_valid_range(spec: str) -> None:
    with pytest.raises(GameSpecError, match="size.*from 3 to 20"):
        games.load(spec)


def test_bad_spec_parameters() -> None:
    with pytest.raises(GameSpecError, match="valid parameters: size, seed"):
        games.load("colosseum(board=5)")
    with pytest.raises(GameSpecError, match="seed"):
        games.load("colosseum(seed=-1)")


def test_game_facts() -> None:
    game = games.load("colosseum(size=6,seed=2)")
    assert isinstance(game, ColosseumGame) and str(game) == "colosseum(size=6,seed=2)"
    assert game.num_distinct_actions() == 6 * 6 * 4 == game.new_initial_state().n_actions
    assert game.max_game_length() == 2 * 6 * 5 - 2 * 3
    assert game.num_players() == 2 and not game.has_chance
    assert str(games.load("colosseum")) == "colosseum"
