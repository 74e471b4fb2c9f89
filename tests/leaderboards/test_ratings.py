"""Ratings: TrueSkill through an explicit environment, in schedule order, equal to a fresh recomputation."""
from __future__ import annotations

import random

import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.results.outcome import Termination
from arena.results.records import Failure
from leaderboards.ratings import (
    ALL,
    RatedGame,
    Rater,
    env_for,
    leaderboard_order,
    ranks_from_returns,
    rate_decided,
)


def _games(n: int, seed: int = 1) -> list[RatedGame]:
    rng = random.Random(seed)
    games = []
    for i in range(n):
        a, b = rng.sample(range(5), 2)
        r = rng.choice([(1.0, -1.0), (-1.0, 1.0)])
        games.append(RatedGame(f"{i:05d}", "nim", (a, b), r, ("normal", "normal")))
    return games


def test_two_player_ratings_equal_trueskill_rate_1vs1_with_an_explicit_env():
    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.0)
    ratings = {b: env.create_rating() for b in range(5)}
    games = _games(200)
    for g in games:
        a, b = g.seats
        winner, loser = (a, b) if g.returns[0] > g.returns[1] else (b, a)
        ratings[winner], ratings[loser] = trueskill.rate_1vs1(ratings[winner], ratings[loser], env=env)
    rater = Rater().apply_all(reversed(games))  # apply_all sorts by key: input order must not matter
    for bot, expected in ratings.items():
        got = rater.get(ALL, bot)
        assert got.mu == pytest.approx(expected.mu, abs=1e-9)
        assert got.sigma == pytest.approx(expected.sigma, abs=1e-9)


def test_sorry_is_a_free_for_all_with_the_winner_first_and_the_rest_tied():
    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.0)
    returns = [-1 / 3, 1.0, -1 / 3, -1 / 3]
    assert ranks_from_returns(returns) == [1, 0, 1, 1]
    rater = Rater()
    rater.apply(RatedGame("k", "sorry(players=4)", (7, 8, 9, 10), returns, ["normal"] * 4))
    expected = env.rate([(env.create_rating(),)] * 4, ranks=[1, 0, 1, 1])
    for bot, (rating,) in zip((7, 8, 9, 10), expected):
        assert rater.get(ALL, bot).mu == pytest.approx(rating.mu)
    assert rater.get(ALL, 8).wins == 1 and rater.get(ALL, 7).losses == 1
    losers = [rater.get(ALL, b).mu for b in (7, 9, 10)]
    assert losers[0] == pytest.approx(losers[1]) and rater.get(ALL, 8).mu > losers[0]


def test_a_colosseum_draw_is_rated_as_a_draw_with_draw_probability():
    assert env_for("colosseum").draw_probability > 0
    assert env_for("hex").draw_probability == 0
    rater = Rater()
    rater.apply(RatedGame("k", "colosseum", (1, 2), [0.0, 0.0], ["normal", "normal"]))
    a, b = rater.get(ALL, 1), rater.get(ALL, 2)
    assert a.draws == b.draws == 1 and a.wins == 0
    assert a.mu == pytest.approx(25.0) and a.sigma < 25 / 3


def test_failures_are_counted_per_reason_and_per_game_scope():
    rater = Rater()
    rater.apply(RatedGame("a", "nim", (1, 2), [-1.0, 1.0], ["timeout", "normal"]))
    rater.apply(RatedGame("b", "hex(size=5)", (2, 1), [1.0, -1.0], ["normal", "illegal"]))
    overall = rater.get(ALL, 1)
    assert (overall.timeouts, overall.illegal, overall.failures, overall.games) == (1, 1, 2, 2)
    assert rater.get("nim", 1).games == 1 and rater.get("hex(size=5)", 1).illegal == 1


def test_leaderboard_order_is_by_mu_minus_three_sigma():
    rater = Rater().apply_all(_games(100, seed=3))
    table = {b: rater.get(ALL, b) for b in range(5)}
    order = leaderboard_order(table)
    exposed = [table[b].mu - 3 * table[b].sigma for b in order]
    assert exposed == sorted(exposed, reverse=True)
    env = env_for("nim")
    assert exposed[0] == pytest.approx(env.expose(trueskill.Rating(table[order[0]].mu, table[order[0]].sigma)))


def test_a_substituted_move_counts_as_a_failure_once_per_game():
    rater = Rater()
    failures = [Failure(1, Termination.TIMEOUT, 3), Failure(1, Termination.TIMEOUT, 5),
                Failure(1, Termination.ILLEGAL, 7)]
    rater.apply(RatedGame("a", "nim", (1, 2), [1.0, -1.0], ["normal", "normal"], failures))
    bot = rater.get(ALL, 2)
    assert (bot.timeouts, bot.illegal, bot.failures) == (1, 1, 2)
    assert rater.get(ALL, 1).failures == 0


@settings(max_examples=300, deadline=None)
@given(mu_w=st.floats(-10, 60), sigma_w=st.floats(0.2, 25 / 3), mu_l=st.floats(-10, 60), sigma_l=st.floats(0.2, 25 / 3),
       game=st.sampled_from(["nim", "colosseum"]))
def test_the_closed_form_of_a_decided_game_equals_trueskill_rate(mu_w, sigma_w, mu_l, sigma_l, game):
    env = env_for(game)  # draw probability 0 and 0.10: the draw margin enters v and w
    try:
        (w,), (l,) = env.rate([(trueskill.Rating(mu_w, sigma_w),), (trueskill.Rating(mu_l, sigma_l),)], ranks=[0, 1])
    except FloatingPointError:  # a winner far too weak for float precision: the closed form must refuse too
        with pytest.raises(FloatingPointError):
            rate_decided(env, (mu_w, sigma_w), (mu_l, sigma_l))
        return
    (fw_mu, fw_sigma), (fl_mu, fl_sigma) = rate_decided(env, (mu_w, sigma_w), (mu_l, sigma_l))
    assert (fw_mu, fw_sigma, fl_mu, fl_sigma) == pytest.approx((w.mu, w.sigma, l.mu, l.sigma), abs=1e-9, rel=0)


def test_the_rater_takes_the_closed_form_only_for_decided_two_player_games(monkeypatch):
    calls = []
    real = trueskill.TrueSkill.rate

    def counting(self, groups, ranks=None, **kwargs):
        calls.append(list(ranks))
        return real(self, groups, ranks=ranks, **kwargs)

    monkeypatch.setattr(trueskill.TrueSkill, "rate", counting)
    rater = Rater()
    rater.apply(RatedGame("1", "nim", (1, 2), (1.0, -1.0), ("normal", "normal")))
    assert calls == []
    rater.apply(RatedGame("2", "colosseum", (1, 2), (0.0, 0.0), ("normal", "normal")))  # a draw
    rater.apply(RatedGame("3", "sorry(players=3)", (1, 2, 3), (-0.5, 1.0, -0.5), ("normal",) * 3))
    assert calls == [[0, 0], [0, 0], [1, 0, 1], [1, 0, 1]]  # both scopes of each
