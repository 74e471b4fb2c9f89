"""Board renderers against known positions: hand-made observations (the fields of docs/contracts.md) and real states."""
from __future__ import annotations

import random

import pytest

import games
from arena.tui import boards
from arena.tui.format import histogram, sparkline
from arena.tui.replay import Replay


def lines(text) -> list[str]:  # type: ignore[no-untyped-def]
    return text.plain.splitlines()


def load_or_skip(spec: str):  # type: ignore[no-untyped-def]
    # Every game is built now: a game that fails to load is a failure, not a skip.
    return games.load(spec)


def random_state(spec: str, seed: int, moves: int):  # type: ignore[no-untyped-def]
    """A real state after up to ``moves`` random actions (chance sampled)."""
    state = load_or_skip(spec).new_initial_state()
    rng = random.Random(seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(actions, probs)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


# -- Nim -----------------------------------------------------------------------------------------------
def test_nim_draws_one_counter_per_item_in_groups_of_five() -> None:
    text = boards.render("nim", {"pile": 13, "k": 3, "coin_pending": False, "current_player": 1}, ["a", "bee"])
    out = lines(text)
    assert out[0] == "pile 13   take 1-3"
    assert out[1] == "●●●●● ●●●●● ●●●"
    assert out[-1] == "bee to move"


def test_nim_caps_huge_piles_and_shows_the_coin() -> None:
    out = boards.render("nim", {"pile": 5000, "k": 7, "coin_pending": True, "current_player": -1}).plain
    assert out.count("●") == boards.NIM_MAX_DRAWN
    assert "4800 more" in out
    assert "coin flip pending" in out and "chance to move" in out


def test_nim_real_state_matches_its_pile() -> None:
    state = games.load("nim(n=21)").new_initial_state()
    state.apply_action(3)
    text = boards.render("nim", state.observation()).plain
    assert text.count("●") == 18
    assert "player 1 to move" in text


# -- Double Step ---------------------------------------------------------------------------------------
def test_doublestep_lane_marks_stone_and_goal() -> None:
    out = lines(boards.render("doublestep", {"positions": [3, 10], "lengths": [10, 10], "current_player": -4}))
    lane0 = out[0].split()
    assert lane0[:1] == ["lane"] and lane0[2:13].index("●") == 3  # squares 0..10 after "lane 0"
    assert out[0].endswith("3/10")
    assert out[1].split()[12] == "●"  # at the goal
    assert out[-1] == "game over"


def test_doublestep_long_lanes_are_drawn_to_scale() -> None:
    out = lines(boards.render("doublestep", {"positions": [50, 0], "lengths": [100, 100], "current_player": 0}))
    cells = out[0].split()[2:2 + boards.LANE_MAX_CELLS + 1]
    assert len(cells) == boards.LANE_MAX_CELLS + 1 and cells.index("●") == boards.LANE_MAX_CELLS // 2


# -- Hex -----------------------------------------------------------------------------------------------
def test_hex_rhombus_shifts_each_row_and_places_stones() -> None:
    n = 4
    board = [-1] * (n * n)
    board[0 * n + 0] = 0  # x at a1
    board[2 * n + 3] = 1  # o at d3
    out = lines(boards.render("hex", {"board": board, "current_player": 0}))
    rows = out[1:1 + n]
    for r, row in enumerate(rows):
        assert row.startswith(" " * r + f"{r + 1:>2} \\")  # row r shifted right by r half-cells
        cells = row.split("\\")[1].split()
        assert len(cells) == n
    assert rows[0].split("\\")[1].split()[0] == "x"
    assert rows[2].split("\\")[1].split()[3] == "o"
    assert sum(row.count("·") for row in rows) == n * n - 2
    # column letters sit above the first row's cells and below the last row's
    assert out[0].index("a") == rows[0].index("x")
    assert out[1 + n].index("a") == rows[-1].index("\\") + 1
    assert out[-1] == "x to move"


def test_hex_rejects_a_board_that_is_not_square() -> None:
    with pytest.raises(ValueError, match="not square"):
        boards.render("hex", {"board": [-1] * 10, "current_player": 0})


def test_hex_real_state() -> None:
    game = load_or_skip("hex(size=5)")
    state = game.new_initial_state()
    state.apply_action(2 * 5 + 2)  # x in the centre
    state.apply_action(0)  # o at a1
    rows = lines(boards.render("hex", state.observation(), ["p", "q"]))[1:6]
    assert rows[2].split("\\")[1].split()[2] == "x"
    assert rows[0].split("\\")[1].split()[0] == "o"


# -- Colosseum -----------------------------------------------------------------------------------------
def border_walls(m: int) -> list[list[list[bool]]]:
    return [[[r == 0, c == m - 1, r == m - 1, c == 0] for c in range(m)] for r in range(m)]


def test_colosseum_grid_walls_and_players() -> None:
    m = 3
    walls = border_walls(m)
    walls[0][0][1] = walls[0][1][3] = True  # wall between (0,0) and (0,1), stored on both sides
    walls[1][1][2] = walls[2][1][0] = True  # wall below (1,1)
    obs = {"size": m, "max_step": 2, "positions": [[0, 0], [2, 2]], "walls": walls, "current_player": 1}
    out = lines(boards.render("colosseum", obs))
    assert out[0] == "┌───┬───────┐"
    assert out[1] == "│ A │       │"
    assert out[2] == "│   ╵   ·   │"
    assert out[3] == "│           │"
    assert out[4] == "│   ╶───╴   │"
    assert out[5] == "│         B │"
    assert out[6] == "└───────────┘"
    assert out[-1] == "B to move"


def test_colosseum_wall_stored_on_one_side_only_is_still_drawn() -> None:
    walls = border_walls(2)
    walls[0][0][2] = True  # below (0,0), without the mirror entry on (1,0)
    obs = {"size": 2, "max_step": 1, "positions": [[0, 1], [1, 1]], "walls": walls, "current_player": 0}
    out = lines(boards.render("colosseum", obs))
    assert out[2] == "├───╴   │"


def test_colosseum_real_state_draws_every_wall_once() -> None:
    game = load_or_skip("colosseum(size=6,seed=4)")
    obs = game.new_initial_state().observation()
    m, walls = obs["size"], obs["walls"]
    out = lines(boards.render("colosseum", obs))
    h_edges = sum(1 for i in range(m + 1) for j in range(m)
                  if (i < m and walls[i][j][0]) or (i > 0 and walls[i - 1][j][2]))
    v_edges = sum(1 for i in range(m) for j in range(m + 1)
                  if (j < m and walls[i][j][3]) or (j > 0 and walls[i][j - 1][1]))
    grid = out[:2 * m + 1]
    assert sum(line[4 * j + 1:4 * j + 4] == "───" for line in grid[0::2] for j in range(m)) == h_edges
    assert sum(line[0::4].count("│") for line in grid[1::2]) == v_edges
    for seat, (r, c) in enumerate(obs["positions"]):
        assert grid[2 * r + 1][4 * c + 2] == "AB"[seat]


# -- Sorry! --------------------------------------------------------------------------------------------
def test_sorry_layout_is_a_ring_with_separate_zones() -> None:
    layout = boards.sorry_layout()
    track = layout["track"]
    assert len(set(track.values())) == 60
    assert track[0] == (0, 0) and track[15] == (0, 15) and track[30] == (15, 15) and track[45] == (15, 0)
    for sq in range(60):  # neighbours on the ring are adjacent cells
        (r1, c1), (r2, c2) = track[sq], track[(sq + 1) % 60]
        assert abs(r1 - r2) + abs(c1 - c2) == 1
    features = list(track.values())
    for colour in range(4):
        features += layout["safety"][colour] + [layout["home"][colour], layout["start"][colour]]
        turn = track[15 * colour + 2]
        first = layout["safety"][colour][0]
        assert abs(turn[0] - first[0]) + abs(turn[1] - first[1]) == 1  # S0 next to the turn square T_s
    assert len(set(features)) == len(features) == 60 + 4 * 7
    assert all(0 <= r < 16 and 0 <= c < 16 for r, c in features)


def cell(text_lines: list[str], rc: tuple[int, int]) -> str:
    r, c = rc
    return text_lines[r][3 * c:3 * c + 2]


def test_sorry_pawns_on_track_safety_start_and_home() -> None:
    obs = {"pawns": [[-1, -1, 5, 61], [65, -1, 33, 20]], "colors": ["red", "yellow"], "card": "7",
           "draw_pile": {"1": 5, "7": 3}, "current_player": 1}
    out = lines(boards.render("sorry", obs, ["ann", "bob"]))
    layout = boards.sorry_layout()
    assert cell(out, layout["track"][5]) == "R3"
    assert cell(out, layout["safety"][0][1]) == "R4"
    assert cell(out, layout["start"][0]) == "S2"
    assert cell(out, layout["home"][0]) == "H0"
    assert cell(out, layout["track"][33]) == "Y3"
    assert cell(out, layout["track"][20]) == "Y4"
    assert cell(out, layout["home"][2]) == "H1"
    assert cell(out, layout["start"][2]) == "S1"
    assert cell(out, layout["start"][1]) == "  "  # Blue is not playing
    assert cell(out, layout["track"][1]) == "▶ "  # Red's short slide triangle
    assert out[16] == "card 7   8 left in the pile"
    assert out[17] == "bob (Yellow) to move"


def test_sorry_without_colour_names_uses_the_two_player_seating() -> None:
    obs = {"pawns": [[0, -1, -1, -1], [30, -1, -1, -1]], "card": None, "current_player": -1}
    out = lines(boards.render("sorry", obs))
    layout = boards.sorry_layout()
    assert cell(out, layout["track"][0]) == "R1" and cell(out, layout["track"][30]) == "Y1"
    assert out[16].startswith("card -")


def test_sorry_real_state() -> None:
    state = random_state("sorry(players=4)", seed=2, moves=200)
    obs = state.observation()
    out = lines(boards.render("sorry", obs))
    layout = boards.sorry_layout()
    colours = boards.sorry_colours(obs)
    for seat, pawns in enumerate(obs["pawns"]):
        letter = boards.SEAT_NAMES[colours[seat]][0]
        for i, p in enumerate(pawns):
            if 0 <= p < 60:
                assert cell(out, layout["track"][p]) == f"{letter}{i + 1}"
            elif 60 <= p < 65:
                assert cell(out, layout["safety"][colours[seat]][p - 60]) == f"{letter}{i + 1}"
        assert cell(out, layout["start"][colours[seat]]) == f"S{pawns.count(-1)}"
        assert cell(out, layout["home"][colours[seat]]) == f"H{pawns.count(65)}"


def test_unknown_game_falls_back_to_fields() -> None:
    assert boards.render("chess", {"fen": "x", "current_player": 0}).plain == "fen: x\ncurrent_player: 0"


# -- every real game renders every position of a random game ---------------------------------------------
@pytest.mark.parametrize("spec", ["nim(coin=true)", "doublestep", "hex(size=5)", "colosseum(size=5,seed=2)",
                                  "sorry(players=3)"])
def test_replay_renders_every_step_of_a_real_game(spec: str) -> None:
    state = random_state(spec, seed=7, moves=400)
    replay = Replay(str(state.game) if hasattr(state, "game") else spec, state.history())
    assert len(replay) == len(state.history()) + 1
    for step in range(len(replay)):
        assert boards.render(replay.game_name, replay.observation(step)).plain
    assert replay.observation(len(replay) - 1) == state.observation()


# -- replay model and formatting helpers -----------------------------------------------------------------
def test_replay_steps_and_labels() -> None:
    replay = Replay("nim(n=7,coin=true)", [1, 0, 2, 1])
    assert replay.observation(0)["pile"] == 7
    assert replay.observation(1)["pile"] == 6 and replay.observation(1)["coin_pending"]
    assert replay.move(1) == (0, "take 1")
    assert replay.move(2)[0] == -1  # the coin is chance
    assert replay.observation(4)["pile"] == 3
    assert replay.clamp(99) == 4 and replay.clamp(-3) == 0
    assert replay.move(0) is None


def test_replay_stops_at_an_illegal_action() -> None:
    replay = Replay("nim(n=7)", [3, 3, 3, 1])
    assert replay.clamp(10) == 2
    assert replay.error is not None and "action 3" in replay.error
    assert len(replay) == 3


def test_sparkline_and_histogram() -> None:
    assert sparkline([]) == ""
    assert sparkline([1.0, 2.0, 3.0], 10) == "▁▅█"
    squeezed = sparkline(list(range(100)), 10)
    assert len(squeezed) == 10 and squeezed[0] == "▁" and squeezed[-1] == "█"
    assert list(squeezed) == sorted(squeezed)
    counts, lo, hi = histogram([0.0, 0.1, 0.1, 1.0], 4)
    assert counts == [3, 0, 0, 1] and (lo, hi) == (0.0, 1.0)
