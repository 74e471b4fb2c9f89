"""Free-for-all ratings (Sorry! with 3 and 4 players): mu AND sigma of every bot after a sequence of games
equal TrueSkill's own ``env.rate`` folded by hand, the leaderboard's rank order follows the bots' strength,
and ties in returns (an adjudicated end: every seat 0, or two seats sharing the best return) are draws."""
from __future__ import annotations

import random

import pytest
import trueskill

from leaderboards.ratings import ALL, RatedGame, Rater, env_for, leaderboard_order, ranks_from_returns


def _env() -> trueskill.TrueSkill:
    # Built here from TrueSkill's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300), not read from the
    # module: Sorry! declares no draws, so its prior draw probability is 0.
    return trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.0)


def _sorry_returns(k: int, winner: int) -> list[float]:
    return [1.0 if s == winner else -1 / (k - 1) for s in range(k)]


@pytest.mark.parametrize("k", [3, 4])
def test_mu_and_sigma_of_every_bot_equal_trueskill_folded_by_hand(k: int) -> None:
    env = _env()
    rng = random.Random(k)
    expected = {b: env.create_rating() for b in range(6)}
    games = []
    for i in range(60):
        seats = tuple(rng.sample(range(6), k))
        returns = _sorry_returns(k, rng.randrange(k))
        games.append(RatedGame(f"{i:05d}", f"sorry(players={k})", seats, returns, ("normal",) * k))
        ranks = [0 if r == 1.0 else 1 for r in returns]
        new = env.rate([(expected[b],) for b in seats], ranks=ranks)
        for b, (rating,) in zip(seats, new):
            expected[b] = rating
    rater = Rater().apply_all(games)
    for b, rating in expected.items():
        got = rater.get(ALL, b)
        assert got.mu == pytest.approx(rating.mu, abs=1e-9), b
        assert got.sigma == pytest.approx(rating.sigma, abs=1e-9), b
    # sigma shrinks with every game a bot plays (sixty games: every bot played some)
    assert all(rater.get(ALL, b).sigma < 25 / 3 for b in range(6))


@pytest.mark.parametrize("k", [3, 4])
def test_rank_order_follows_how_often_each_bot_wins(k: int) -> None:
    # Bot b wins its share of games: with 4 bots 40/30/20/10%, with 3 bots 50/33/17% (deterministic draws).
    bots = list(range(k + 1)) if k == 3 else list(range(4))
    weights = [4, 3, 2, 1][:len(bots)]
    rng = random.Random(10 + k)
    games = []
    for i in range(400):
        seats = tuple(rng.sample(bots, k))
        w = rng.choices(range(k), weights=[weights[b] for b in seats])[0]
        games.append(RatedGame(f"{i:05d}", f"sorry(players={k})", seats, _sorry_returns(k, w), ("normal",) * k))
    rater = Rater().apply_all(games)
    ratings = {b: rater.get(ALL, b) for b in bots}
    assert leaderboard_order(ratings) == bots  # strongest first
    mus = [ratings[b].mu for b in bots]
    assert mus == sorted(mus, reverse=True)
    assert all(ratings[b].wins > 0 and ratings[b].losses > 0 for b in bots)
    assert sum(ratings[b].wins for b in bots) == 400 and sum(ratings[b].draws for b in bots) == 0


@pytest.mark.parametrize("k", [3, 4])
def test_an_adjudicated_end_is_a_draw_between_every_seat(k: int) -> None:
    env = env_for("sorry")
    assert env.draw_probability == 0  # Sorry! has no draws by its rules: only an adjudicated end ties
    returns = [0.0] * k
    assert ranks_from_returns(returns) == [0] * k
    rater = Rater()
    # Unequal priors: a draw moves the weaker bot up and the stronger down, and shrinks both sigmas.
    for i in range(3):
        rater.apply(RatedGame(f"a{i}", f"sorry(players={k})", tuple(range(k)), _sorry_returns(k, 0),
                              ("normal",) * k))
    before = {b: rater.get(ALL, b) for b in range(k)}
    before = {b: (r.mu, r.sigma) for b, r in before.items()}
    rater.apply(RatedGame("b", f"sorry(players={k})", tuple(range(k)), returns, ("normal",) * k))
    expected = _env().rate([(trueskill.Rating(*before[b]),) for b in range(k)], ranks=[0] * k)
    for b, (rating,) in enumerate(expected):
        got = rater.get(ALL, b)
        assert got.mu == pytest.approx(rating.mu, abs=1e-9) and got.sigma == pytest.approx(rating.sigma, abs=1e-9)
        assert got.draws == 1 and got.wins == (3 if b == 0 else 0)
    assert rater.get(ALL, 0).mu < before[0][0] and rater.get(ALL, 1).mu > before[1][0]


def test_two_seats_sharing_the_best_return_draw_and_beat_the_rest() -> None:
    returns = [0.5, 0.5, -0.5, -0.5]
    assert ranks_from_returns(returns) == [0, 0, 1, 1]
    rater = Rater()
    rater.apply(RatedGame("k", "sorry(players=4)", (1, 2, 3, 4), returns, ("normal",) * 4))
    env = _env()
    expected = env.rate([(env.create_rating(),)] * 4, ranks=[0, 0, 1, 1])
    for b, (rating,) in zip((1, 2, 3, 4), expected):
        got = rater.get(ALL, b)
        assert got.mu == pytest.approx(rating.mu, abs=1e-9) and got.sigma == pytest.approx(rating.sigma, abs=1e-9)
    assert rater.get(ALL, 1).draws == rater.get(ALL, 2).draws == 1
    assert rater.get(ALL, 3).losses == rater.get(ALL, 4).losses == 1
    assert rater.get(ALL, 1).mu == pytest.approx(rater.get(ALL, 2).mu)
    assert rater.get(ALL, 1).mu > rater.get(ALL, 3).mu
