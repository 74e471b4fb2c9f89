"""The batch Elo fit (leaderboards/elo.py) against choix, a maintained reference implementation of Bradley-Terry
and Plackett-Luce, on the same games; intervals, rank ranges and tied groups on leagues of known strengths."""
from __future__ import annotations

import numpy as np
import pytest

from leaderboards.elo import ELO_FIELDS, ELO_PER_NAT, Outcome, annotate, fit, rate, stages, tied_groups

choix = pytest.importorskip("choix", reason="choix is the reference implementation (pip install -e '.[test]')")


def _pairwise(n: int, games: int, seed: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """(true strengths, (winner, loser) per game) for random pairings of n bots."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0, 1, n)
    out = []
    for _ in range(games):
        a, b = rng.choice(n, 2, replace=False)
        out.append((a, b) if rng.random() < 1 / (1 + np.exp(true[b] - true[a])) else (b, a))
    return true, out


def test_bradley_terry_mle_matches_choix() -> None:
    _, games = _pairwise(12, 3000, seed=1)
    outcomes = [Outcome((int(w), int(l)), (1.0, 0.0)) for w, l in games]
    ours, _ = fit(stages(outcomes, list(range(12))), alpha=0)  # the plain MLE: no prior, mean 0
    ref = choix.ilsr_pairwise(12, games, alpha=0, tol=1e-12)
    np.testing.assert_allclose(ours, ref - ref.mean(), atol=1e-6)


def test_draws_count_half_a_win_each_way() -> None:
    """Half points: a draw is worth what one win each way is worth at half weight, i.e. doubling every game turns the
    data into choix's win/loss pairs (each decided game twice, each draw one win for each side)."""
    rng = np.random.default_rng(2)
    outcomes, doubled = [], []
    for _ in range(2000):
        a, b = (int(x) for x in rng.choice(8, 2, replace=False))
        r = rng.random()
        if r < 0.2:
            outcomes.append(Outcome((a, b), (0.5, 0.5)))
            doubled += [(a, b), (b, a)]
        else:
            w, l = (a, b) if r < 0.2 + 0.8 * (0.5 + 0.05 * (a - b)) else (b, a)
            outcomes.append(Outcome((a, b), (1.0, 0.0) if w == a else (0.0, 1.0)))
            doubled += [(w, l), (w, l)]
    ours, _ = fit(stages(outcomes, list(range(8))), alpha=0)
    ref = choix.ilsr_pairwise(8, doubled, alpha=0, tol=1e-12)
    np.testing.assert_allclose(ours, ref - ref.mean(), atol=1e-6)


def test_plackett_luce_for_four_players_matches_choix() -> None:
    rng = np.random.default_rng(3)
    true = rng.normal(0, 1, 10)
    outcomes, rankings = [], []
    for _ in range(1500):
        table = [int(x) for x in rng.choice(10, 4, replace=False)]
        order = []  # sampled Plackett-Luce order: each place chosen in proportion to exp(strength)
        left = list(table)
        while left:
            p = np.exp(true[left]) / np.exp(true[left]).sum()
            order.append(left.pop(int(rng.choice(len(left), p=p))))
        rankings.append(order)
        outcomes.append(Outcome(table, [float(4 - order.index(b)) for b in table]))
    ours, _ = fit(stages(outcomes, list(range(10))), alpha=0)
    ref = choix.ilsr_rankings(10, rankings, alpha=0, tol=1e-12)
    np.testing.assert_allclose(ours, ref - ref.mean(), atol=1e-6)


def test_intervals_cover_the_true_ratings_and_groups_separate_what_is_known() -> None:
    """Over 20 seeded leagues of 8 bots with known strengths, the 95% intervals cover the true (centred) Elo in
    roughly 95% of cases (at least 85% of 160 here: a wrong covariance misses far more or covers everything)."""
    covered = total = 0
    widths = []
    for seed in range(20):
        true, games = _pairwise(8, 1200, seed=100 + seed)
        true_elo = (true - true.mean()) * ELO_PER_NAT
        rows = rate([Outcome((int(w), int(l)), (1.0, 0.0), str(i)) for i, (w, l) in enumerate(games)], range(8),
                    alpha=0)
        for r in rows:
            covered += r.elo_low <= true_elo[r.bot] <= r.elo_high
            total += 1
            widths.append(r.elo_high - r.elo_low)
            assert 1 <= r.rank_low <= r.rank_high <= 8
    assert 0.85 <= covered / total <= 0.995, covered / total
    assert max(widths) < 200  # 300 games a bot: about +-50 Elo, not an interval that says nothing


def test_tied_groups_split_only_where_no_interval_overlaps() -> None:
    elo = np.array([300.0, 280.0, 0.0, -10.0, -400.0])
    low, high = elo - 30, elo + 30
    assert tied_groups(elo, low, high).tolist() == [1, 1, 2, 2, 3]
    assert tied_groups(elo, elo - 500, elo + 500).tolist() == [1, 1, 1, 1, 1]


def test_annotate_fills_the_leaderboard_fields_and_ranks_a_lopsided_league() -> None:
    """Bot 1 beats bot 2 in 40 of 40 games, bots 2 and 3 split 20-20: 1 is alone on top, 2 and 3 tie."""
    games = []
    for i in range(40):
        games.append((f"{i:06d}|nim|000001.000002|0", [1, 2], [1.0, -1.0]))
        games.append((f"{i:06d}|nim|000002.000003|0", [2, 3], [1.0, -1.0] if i % 2 else [-1.0, 1.0]))
    rows = annotate([{"bot_id": 1}, {"bot_id": 2}, {"bot_id": 3}], games)
    top, mid, low = rows
    assert top["elo"] > mid["elo"] and top["rank_low"] == top["rank_high"] == 1
    assert top["group"] == 1 and mid["group"] == low["group"] == 2
    assert {mid["rank_low"], mid["rank_high"], low["rank_low"], low["rank_high"]} == {2, 3}
    for r in rows:
        assert r["elo_low"] < r["elo"] < r["elo_high"]


def test_a_league_without_games_claims_no_rating_for_any_bot() -> None:
    # (issue 23 §3: the prior's "+0 [-x, +x], ranks 1-2" was shown as if measured)
    rows = annotate([{"bot_id": 7}, {"bot_id": 9}], [])
    assert all(r[k] is None for r in rows for k in ELO_FIELDS)


def test_arena_leaderboard_prints_the_batch_elo_in_the_table_json_and_csv(tmp_path) -> None:
    import csv
    import io
    import json

    from tests.leaderboards.support import arena, write
    config = write(tmp_path / "league.toml", """
        name = "elo"
        games = ["nim"]
        bots = ["greedy", "random", { name = "random2", spec = "random" }]
        games_per_pairing = 6
        database = "e.sqlite"
        """)
    assert arena(tmp_path, "league", "run", str(config)).returncode == 0
    out = json.loads(arena(tmp_path, "leaderboard", "--db", "e.sqlite", "--json").stdout)
    greedy = next(r for r in out["bots"] if r["bot"] == "greedy")
    assert greedy["rank_low"] == greedy["rank_high"] == 1 and greedy["group"] == 1  # perfect Nim play wins every game
    for r in out["bots"]:
        assert r["elo_low"] <= r["elo"] <= r["elo_high"] and 1 <= r["rank_low"] <= r["rank_high"] <= 3
    rows = list(csv.DictReader(io.StringIO(arena(tmp_path, "leaderboard", "--db", "e.sqlite", "--csv").stdout)))
    assert {"elo", "elo_low", "elo_high", "rank_low", "rank_high", "group"} <= set(rows[0])
    table = arena(tmp_path, "leaderboard", "--db", "e.sqlite").stdout
    assert "elo (95%)" in table and "g1" in table
