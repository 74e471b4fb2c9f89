"""Probation counts the failure rate over a bot's recent games, not only runs of failures; lifting it (a
release or a resubmission) starts the count afresh."""
from __future__ import annotations

import pytest

from leaderboards.probation import ProbationRule, lift_hint
from leaderboards.store import Store
from tests.leaderboards.support import store_game


def _record(failing_seat: int | None) -> dict:
    terminations = ["normal", "normal"]
    returns = [1.0, -1.0]
    if failing_seat is not None:
        terminations[failing_seat] = "crash"
        returns = [-1.0, 1.0] if failing_seat == 0 else [1.0, -1.0]
    return {"game": "nim(seed=1)", "seed": 1, "players": ["a", "b"], "history": [1], "returns": returns,
            "terminations": terminations, "move_seats": [0], "wall_times": [0.1], "cpu_times": [0.1],
            "failures": [], "duration": 0.1, "info": {}}


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "s.sqlite", create=True) as s:
        yield s


def _play(store, league, a, b, n, start, rule, fails=lambda i: i % 2 == 0):
    """n games of b against a; b fails game i when fails(i)."""
    for i in range(start, start + n):
        store_game(store, league.id, f"{i:06d}|nim|x|0", "nim", 0, (a.id, b.id), _record(1 if fails(i) else None),
                          probation=rule)


def test_a_bot_failing_every_other_game_reaches_probation(store):
    league = store.ensure_league("L", {})
    a, _ = store.upsert_bot(league.id, "a", origin="config", spec="random")
    b, _ = store.upsert_bot(league.id, "b", origin="submit", filename="b.py", source="x")
    rule = ProbationRule(after=5, window=10, failures=5)
    _play(store, league, a, b, 8, 0, rule)  # 4 failures in 8 games: not yet
    assert store.bot(b.id).status == "active" and store.bot(b.id).consecutive_failures <= 1
    _play(store, league, a, b, 1, 8, rule)  # the 5th failure among its last 9 games
    bot = store.bot(b.id)
    assert bot.status == "probation", bot
    assert "5 of its last 9 games failed (last: crash in game" in bot.status_reason
    assert store.bot(a.id).status == "active"


def test_the_window_slides_and_only_the_last_games_count(store):
    league = store.ensure_league("L", {})
    a, _ = store.upsert_bot(league.id, "a", origin="config", spec="random")
    b, _ = store.upsert_bot(league.id, "b", origin="config", spec="random")
    rule = ProbationRule(after=0, window=4, failures=3)
    # f . . f . . f . . : never 3 failures among 4 consecutive games
    _play(store, league, a, b, 30, 0, rule, fails=lambda i: i % 3 == 0)
    assert store.bot(b.id).status == "active"


def test_runs_still_count_and_a_rule_of_zero_is_off(store):
    league = store.ensure_league("L", {})
    a, _ = store.upsert_bot(league.id, "a", origin="config", spec="random")
    b, _ = store.upsert_bot(league.id, "b", origin="config", spec="random")
    _play(store, league, a, b, 3, 0, ProbationRule(after=3, window=10, failures=0), fails=lambda i: True)
    assert "3 failed games in a row" in store.bot(b.id).status_reason
    c, _ = store.upsert_bot(league.id, "c", origin="config", spec="greedy")
    _play(store, league, a, c, 20, 100, ProbationRule(after=0, window=10, failures=0), fails=lambda i: True)
    assert store.bot(c.id).status == "active"


def test_releasing_a_bot_lifts_probation_and_restarts_its_window(store):
    league = store.ensure_league("L", {})
    a, _ = store.upsert_bot(league.id, "a", origin="config", spec="random")
    b, _ = store.upsert_bot(league.id, "b", origin="config", spec="random")
    rule = ProbationRule(after=0, window=10, failures=3)
    _play(store, league, a, b, 5, 0, rule)  # failures at 0, 2, 4
    assert store.bot(b.id).status == "probation"
    assert store.release_bot(b.id) is True
    bot = store.bot(b.id)
    assert bot.status == "active" and bot.status_reason == "" and bot.consecutive_failures == 0
    assert store.release_bot(b.id) is False  # not on probation: nothing to lift
    _play(store, league, a, b, 1, 5, rule, fails=lambda i: True)  # one failure: the old three do not count
    assert store.bot(b.id).status == "active"
    _play(store, league, a, b, 2, 6, rule, fails=lambda i: True)
    assert store.bot(b.id).status == "probation"


def test_a_resubmission_restarts_the_window_too(store):
    league = store.ensure_league("L", {})
    a, _ = store.upsert_bot(league.id, "a", origin="config", spec="random")
    b, _ = store.upsert_bot(league.id, "b", origin="submit", filename="b.py", source="x")
    rule = ProbationRule(after=0, window=10, failures=2)
    _play(store, league, a, b, 2, 0, rule, fails=lambda i: True)
    assert store.bot(b.id).status == "probation"
    again, new = store.upsert_bot(league.id, "b", origin="submit", filename="b.py", source="x", reactivate=True)
    assert not new and again.status == "active"
    _play(store, league, a, b, 1, 2, rule, fails=lambda i: True)
    assert store.bot(b.id).status == "active"


def test_the_rule_comes_from_the_league_config_with_defaults_for_older_stores():
    assert ProbationRule.from_config({}) == ProbationRule()
    assert ProbationRule.from_config({"probation_after": 2, "probation_window": 6, "probation_failures": 3}) == \
        ProbationRule(after=2, window=6, failures=3)


def test_the_hint_names_what_works_for_each_kind_of_bot():
    config_file = lift_hint({"name": "bob", "origin": "config", "kind": "file"}, "course", "c.sqlite")
    assert "fix its file in the league file and run `arena league run`" in config_file
    assert "arena submit" not in config_file  # submit refuses a bot of the league file
    assert "`arena league release bob --league course --db c.sqlite`" in config_file
    builtin = lift_hint({"name": "mc", "origin": "config", "kind": "builtin"}, "course", "c.sqlite")
    assert "fix its spec in the league file" in builtin
    submitted = lift_hint({"name": "my bot", "origin": "submit", "kind": "file"}, "course", "c.sqlite")
    assert "resubmit it with `arena submit`" in submitted and "release 'my bot'" in submitted
