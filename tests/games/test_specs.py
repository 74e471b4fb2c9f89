"""Spec strings: parsing, canonical str(game), and bad input (property-based where it helps)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games.spec import parse_spec

BAD_SPECS = [
    ("nosuchgame", "unknown game 'nosuchgame'; valid games: doublestep, nim, hex, colosseum, sorry"),
    ("nim(bogus=1)", "unknown parameter 'bogus'"),
    ("nim(k=0)", "must be an integer from 1"),
    ("nim(k=abc)", "must be an integer"),
    ("nim(coin=maybe)", "true or false"),
    ("doublestep(length=0)", "from 1"),
    ("doublestep(overshoot=bounce)", "one of pass, forbid"),
    ("nim(k=3", "balanced parentheses"),
    ("nim(k)", "must be key=value"),
    ("nim(k=1,k=2)", "given twice"),
    ("(k=1)", "not a valid name"),
    ("hex(size=0)", "size"),
    ("hex(size=40)", "size"),
    ("sorry(players=5)", "players"),
]


@pytest.mark.parametrize("spec,message", BAD_SPECS)
def test_bad_specs_raise_value_error_naming_the_problem(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        games.load(spec)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@given(n=st.integers(1, 10_000), k=st.integers(1, 1000), coin=st.booleans())
@settings(max_examples=200, deadline=None)
def test_nim_spec_round_trips(n: int, k: int, coin: bool) -> None:
    game = games.load(f"nim(n={n}, k={k}, coin={'true' if coin else 'false'})")
    assert games.load(str(game)) == game
    assert game.param("n") == n and game.param("k") == k and game.param("coin") is coin


@given(l0=st.integers(1, 500), l1=st.integers(1, 500), overshoot=st.sampled_from(["pass", "forbid"]))
@settings(max_examples=200, deadline=None)
def test_doublestep_spec_round_trips(l0: int, l1: int, overshoot: str) -> None:
    game = games.load(f"doublestep(length0={l0},length1={l1},overshoot={overshoot})")
    assert str(game) == f"doublestep(length0={l0},length1={l1},overshoot={overshoot})"
    assert game.new_initial_state().observation()["lengths"] == [l0, l1]


@given(st.text(max_size=30))
@settings(max_examples=300, deadline=None)
def test_arbitrary_text_never_crashes_the_parser(text: str) -> None:
    try:
        games.load(text)
    except ValueError as exc:
        assert str(exc)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True),
                       st.from_regex(r"[A-Za-z0-9_.\-]{1,8}", fullmatch=True), max_size=5))
@settings(max_examples=200, deadline=None)
def test_parse_spec_inverts_formatting(params: dict[str, str]) -> None:
    text = "game(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")"
    assert parse_spec(text) == ("game", params)


@pytest.mark.parametrize("spec", ["nim(n=7,coin=true)", "doublestep(length=4)"])
def test_action_strings_round_trip_at_every_step(spec: str) -> None:
    state = games.load(spec).new_initial_state()
    while not state.is_terminal():
        for a in state.legal_actions():
            assert state.string_to_action(state.action_to_string(a)) == a
        state.apply_action(state.legal_actions()[-1])
