"""Rules of Nim (and its coin variant) and Double Step (both overshoot rules, unequal lanes)."""
from __future__ import annotations

import pytest

import games
from games._core import playouts
from games.doublestep import reference as ds_reference
from games.nim import reference as nim_reference


def play(spec: str, actions: list[int]):
    state = games.load(spec).new_initial_state()
    for a in actions:
        state.apply_action(a)
    return state


# ---- Nim -------------------------------------------------------------------------------------
def test_nim_take_last_counter_wins() -> None:
    s = play("nim(n=5,k=3)", [3, 2])
    assert s.is_terminal() and s.returns() == [-1.0, 1.0]


def test_nim_cannot_take_more_than_left_or_k() -> None:
    s = play("nim(n=5,k=3)", [3])
    assert s.legal_actions() == [1, 2]
    assert play("nim(n=10,k=4)", []).legal_actions() == [1, 2, 3, 4]
    with pytest.raises(ValueError):
        s.apply_action(3)


def test_nim_pile_drawn_from_seed_covers_20_to_50() -> None:
    piles = {games.load(f"nim(seed={s})").new_initial_state().observation()["pile"] for s in range(2000)}
    assert piles == set(range(20, 51))
    assert games.load("nim(seed=7)").new_initial_state().observation()["pile"] == \
        games.load("nim(seed=7)").new_initial_state().observation()["pile"]


def test_nim_coin_heads_removes_one_more_and_flipper_can_win() -> None:
    s = play("nim(n=6,k=3,coin=true)", [3])
    assert s.is_chance_node() and s.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    s.apply_action(1)  # heads: 6 - 3 - 1 = 2 left, player 1 to move
    assert s.observation()["pile"] == 2 and s.current_player() == 1
    # Pile of 2: player 1 takes 1, flips heads -> the last counter goes and player 1 wins.
    s.apply_action(1)
    s.apply_action(1)
    assert s.is_terminal() and s.returns() == [-1.0, 1.0]


def test_nim_coin_tails_changes_nothing_and_no_flip_after_the_last_counter() -> None:
    s = play("nim(n=4,k=3,coin=true)", [1, 0])
    assert s.observation()["pile"] == 3 and s.current_player() == 1
    s.apply_action(3)
    assert s.is_terminal(), "taking the last counter ends the game without a flip"
    assert s.returns() == [-1.0, 1.0]


def test_nim_compiled_playouts_agree_with_reference() -> None:
    # Random play from pile 12, k=3: the win rate of player 0 from both implementations.
    n = 40_000
    c_wins, _ = playouts(games.load("nim(n=12,k=3)").new_initial_state(), n, 5)
    py_wins = nim_reference.playouts(n, 12, 3, seed=5)
    p = py_wins[0] / n
    sd = (p * (1 - p) / n) ** 0.5
    assert abs(c_wins[0] / n - p) < 6 * sd * 2 ** 0.5


def test_nim_strings_round_trip() -> None:
    s = games.load("nim(n=9,coin=true)").new_initial_state()
    assert s.action_to_string(2) == "take 2" and s.string_to_action("take 2") == 2
    s.apply_action(2)
    assert s.action_to_string(1) == "heads" and s.string_to_action("tails") == 0


# ---- Double Step ------------------------------------------------------------------------------
def test_doublestep_exact_landing_wins() -> None:
    s = play("doublestep(length=3)", [2, 1, 1])
    assert s.is_terminal() and s.returns() == [1.0, -1.0]


def test_doublestep_overshoot_pass_keeps_the_stone_and_passes_the_turn() -> None:
    s = play("doublestep(length=3,overshoot=pass)", [2, 2])
    assert s.legal_actions() == [1, 2]
    s.apply_action(2)  # from distance 1: a pass
    assert s.observation()["positions"] == [2, 2] and s.current_player() == 1 and not s.is_terminal()


def test_doublestep_overshoot_forbid_allows_only_one_step() -> None:
    s = play("doublestep(length=3,overshoot=forbid)", [2, 2])
    assert s.legal_actions() == [1]
    with pytest.raises(ValueError):
        s.apply_action(2)


def test_doublestep_unequal_lanes() -> None:
    s = play("doublestep(length0=2,length1=5)", [])
    assert s.observation()["lengths"] == [2, 5]
    s.apply_action(1)
    s.apply_action(2)
    s.apply_action(1)
    assert s.is_terminal() and s.returns() == [1.0, -1.0]


def test_doublestep_length_and_lane_lengths_conflict() -> None:
    with pytest.raises(ValueError, match="either length or length0"):
        games.load("doublestep(length=5,length0=3)")


@pytest.mark.parametrize("overshoot", ["pass", "forbid"])
def test_doublestep_compiled_playouts_agree_with_reference(overshoot: str) -> None:
    n = 40_000
    c_wins, _ = playouts(games.load(f"doublestep(length0=6,length1=7,overshoot={overshoot})").new_initial_state(), n, 3)
    py_wins = ds_reference.playouts(n, 6, 7, overshoot == "pass", seed=3)
    p = py_wins[0] / n
    sd = (p * (1 - p) / n) ** 0.5
    assert abs(c_wins[0] / n - p) < 6 * sd * 2 ** 0.5
