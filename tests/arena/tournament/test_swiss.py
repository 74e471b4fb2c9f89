"""Swiss pairing and standings (arena/tournament/swiss.py): no rematch while one is possible, score groups, the
Dutch order, byes, seats and the tie-breaks."""
from __future__ import annotations

import random

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.bench.tournament import simulate
from arena.tournament import swiss
from arena.tournament.matches import Match, Played


def played(r: int, a: int, b: int | None, pts: tuple[float, float] = (1.0, 0.0)) -> Match:
    if b is None:
        return Match(f"R{r}", r, (a, None), done=True, winner=a)
    winner = a if pts[0] > pts[1] else b if pts[1] > pts[0] else None
    return Match(f"R{r}", r, (a, b), [Played(0, 0, pts)], True, winner)


def play_swiss(n: int, rounds: int, seed: int, odd_games: bool = True) -> list[list[Match]]:
    rng = random.Random(seed)
    field = list(range(n))
    out: list[list[Match]] = []
    for r in range(1, rounds + 1):
        pairs, bye = swiss.pair(swiss.standings(field, out), r, odd_games)
        ms = [played(r, a, b, rng.choice([(1.0, 0.0), (0.0, 1.0), (0.5, 0.5)])) for a, b in pairs]
        if bye is not None:
            ms.append(played(r, bye, None))
        out.append(ms)
    return out


def test_default_rounds() -> None:
    assert [swiss.default_rounds(n) for n in (1, 2, 3, 4, 8, 9, 16, 1000)] == [0, 1, 2, 3, 4, 5, 5, 11]


def test_round_one_is_top_half_against_bottom_half() -> None:
    pairs, bye = swiss.pair(swiss.standings(list(range(8)), []), 1, odd_games=True)
    assert bye is None
    assert sorted(tuple(sorted(p)) for p in pairs) == [(0, 4), (1, 5), (2, 6), (3, 7)]


def test_an_odd_field_gives_the_bye_to_the_lowest_bot_without_one() -> None:
    rounds = play_swiss(7, 6, seed=1)
    byes = [next(m.bots[0] for m in ms if m.is_bye) for ms in rounds]
    assert len(set(byes)) == 6  # nobody sits out twice while another never has
    assert byes[0] == 6  # round 1: the last seed


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 24), st.integers(0, 10_000))
def test_no_rematch_while_a_pairing_without_one_exists(n: int, seed: int) -> None:
    rng = random.Random(seed)
    field = list(range(n))
    rounds: list[list[Match]] = []
    for r in range(1, n):  # up to a full round robin's worth of rounds
        table = swiss.standings(field, rounds)
        pairs, bye = swiss.pair(table, r, odd_games=True)
        met = {e.bot: set(e.opponents) for e in table}
        rest = [b for b in field if b != bye]
        graph = nx.Graph()
        graph.add_nodes_from(rest)
        graph.add_edges_from((a, b) for i, a in enumerate(rest) for b in rest[i + 1:] if b not in met[a])
        possible = 2 * len(nx.max_weight_matching(graph, maxcardinality=True)) == len(rest)
        if possible:
            assert all(b not in met[a] for a, b in pairs), (r, pairs)
        assert sorted(x for p in pairs for x in p) == sorted(rest)  # everyone but the bye plays once
        rounds.append([played(r, a, b, rng.choice([(1.0, 0.0), (0.0, 1.0), (0.5, 0.5)])) for a, b in pairs]
                      + ([played(r, bye, None)] if bye is not None else []))


def test_partners_come_from_the_same_score_group_when_they_can() -> None:
    # 8 bots after one round: four on 1 point, four on 0; no pairing needs to cross the groups
    rounds = [[played(1, 0, 4), played(1, 1, 5), played(1, 2, 6), played(1, 3, 7)]]
    table = swiss.standings(list(range(8)), rounds)
    pairs, _ = swiss.pair(table, 2, odd_games=True)
    points = {e.bot: e.points for e in table}
    assert all(points[a] == points[b] for a, b in pairs)
    assert sorted(tuple(sorted(p)) for p in pairs) == [(0, 2), (1, 3), (4, 6), (5, 7)]  # Dutch order in each group


@pytest.mark.parametrize("n, seed", [(16, 3), (16, 1), (16, 28), (12, 5), (20, 7)])
def test_seats_balance_over_a_tournament_of_one_game_matches(n: int, seed: int) -> None:
    """No bot plays first (or second) three times more than the other way (FIDE's absolute colour rule) here;
    seeds 1 and 28 of 16 bots gave a bot 4 first seats in 5 rounds before the pairing weighed it. (Not a promise
    for every field: it is never bought with a whole point's score gap, so ~1 tournament in 30 of 12-64 bots
    still has one bot three off.)"""
    rounds = play_swiss(n, 5, seed=seed, odd_games=True)
    first = {b: 0 for b in range(n)}
    for ms in rounds:
        for m in ms:
            if not m.is_bye:
                first[m.bots[0]] += 1  # type: ignore[index]
                first[m.bots[1]] -= 1  # type: ignore[index]
    assert max(abs(v) for v in first.values()) <= 2, first
    assert sum(abs(v) > 1 for v in first.values()) <= n // 4, first  # (most end even-handed: +-1 in 5 rounds)


def test_tie_breaks_buchholz_then_sonneborn_berger() -> None:
    # 0 beats 1, 2 beats 3; then 0 draws 2, 1 beats 3: 0 and 2 have 1.5 (Buchholz: 0 met 1 (1 point) and 2 (1.5);
    # 2 met 3 (0) and 0 (1.5)), so 0 is above 2
    rounds = [[played(1, 0, 1), played(1, 2, 3)], [played(2, 0, 2, (0.5, 0.5)), played(2, 1, 3)]]
    table = swiss.standings([0, 1, 2, 3], rounds)
    by = {e.bot: e for e in table}
    assert (by[0].points, by[0].buchholz, by[0].sonneborn_berger) == (1.5, 2.5, 1.0 + 0.75)
    assert (by[2].points, by[2].buchholz, by[2].sonneborn_berger) == (1.5, 1.5, 0.0 + 0.75)
    assert [e.bot for e in table] == [0, 2, 1, 3]
    # equal Buchholz: Sonneborn-Berger decides; equal everything: they share a place
    rounds = [[played(1, 0, 1), played(1, 2, 3)]]
    table = swiss.standings([0, 1, 2, 3], rounds)
    assert swiss.places(table) == [[0, 2], [1, 3]]


def test_a_bye_scores_bye_points_and_adds_nothing_to_buchholz() -> None:
    rounds = [[played(1, 0, 1), played(1, 2, None)]]
    table = {e.bot: e for e in swiss.standings([0, 1, 2], rounds, bye_points=0.5)}
    assert table[2].points == 0.5 and table[2].byes == 1 and table[2].buchholz == 0.0


def test_a_thousand_bots_are_paired_without_rematches() -> None:
    times, rounds, rematches = simulate(1000, seed=0)
    assert rematches == 0 and len(rounds) == 11
    for ms in rounds:
        seen = [b for m in ms for b in m.bots if b is not None]
        assert sorted(seen) == list(range(1000))


def test_pairing_is_deterministic() -> None:
    a = [[m.bots for m in ms] for ms in play_swiss(21, 5, seed=9)]
    b = [[m.bots for m in ms] for ms in play_swiss(21, 5, seed=9)]
    assert a == b
