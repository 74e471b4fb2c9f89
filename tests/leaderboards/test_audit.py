"""The audit's statistics (leaderboards/audit.py) on leagues simulated from a known model: its false-alarm rate on
honest leagues (docs/audit.md states it from these runs), the colluding pairs it must find, and the pairs it must
not judge. The real-bot league is tests/arena/commands/test_audit.py."""
from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pytest

from leaderboards.audit import LEVEL, audit

Game = tuple[str, list[int], list[float]]


def two_player(strengths: Sequence[float], games_per_pairing: int, rng: np.random.Generator,
               thrown: tuple[int, int] | None = None) -> list[Game]:
    """A round robin of Bradley-Terry games, each seed played in both seat orders; ``thrown``: (a, b), b loses every
    game against a."""
    games = []
    for a, b in itertools.combinations(range(len(strengths)), 2):
        for r in range(games_per_pairing // 2):
            for rot, (x, y) in enumerate(((a, b), (b, a))):
                if thrown is not None and {x, y} == set(thrown):
                    x_wins = x == thrown[0]
                else:
                    x_wins = rng.random() < 1 / (1 + np.exp(strengths[y] - strengths[x]))
                games.append((f"{r}|g|t{a}-{b}|{rot}", [x, y], [1.0, -1.0] if x_wins else [-1.0, 1.0]))
    return games


def perfect_nim(games_per_pairing: int = 12, thrown: bool = True) -> list[Game]:
    """boss (0), shill (1), greedy (2) play perfect Nim, random (3) loses every game: between perfect players the
    seat that starts a winning pile wins, so every seed is one game each; shill throws to boss when ``thrown``."""
    games = []
    for a, b in itertools.combinations(range(4), 2):
        for r in range(games_per_pairing // 2):
            for rot, (x, y) in enumerate(((a, b), (b, a))):
                if thrown and {x, y} == {0, 1}:
                    winner = 0
                elif 3 in (x, y):
                    winner = x if y == 3 else y
                else:
                    winner = x if r % 4 else y  # a pile that is a multiple of k+1 is lost by the player to move
                games.append((f"{r}|nim|t{a}-{b}|{rot}", [x, y], [1.0, -1.0] if winner == x else [-1.0, 1.0]))
    return games


def tables(strengths: Sequence[float], players: int, rounds: int, rng: np.random.Generator,
           gang: tuple[int, int] | None = None, boost: float = 0.0) -> list[Game]:
    """Every table of ``players`` of the field, ``rounds`` games each, finishing orders drawn from Plackett-Luce;
    ``gang``'s two bots play ``boost`` stronger at tables where both sit (they help each other)."""
    games = []
    for table in itertools.combinations(range(len(strengths)), players):
        for r in range(rounds):
            seats = list(np.roll(table, r))
            t = np.array([strengths[b] for b in seats])
            if gang is not None and set(gang) <= set(seats):
                t = t + boost * np.isin(seats, gang)
            keys = t + rng.gumbel(size=players)
            places = np.argsort(np.argsort(-keys))  # 0: first
            games.append((f"{r}|sorry|t{'-'.join(map(str, table))}|0", [int(s) for s in seats],
                          [float(players - 1 - p) for p in places]))
    return games


def false_alarms(make, leagues: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    return sum(bool(audit(make(rng)).flagged) for _ in range(leagues)) / leagues


@pytest.mark.parametrize(("bots", "games_per_pairing", "spread", "leagues"),
                         [(4, 12, 1.0, 200), (8, 12, 1.0, 30), (6, 4, 2.0, 60), (4, 40, 0.3, 60)])
def test_honest_two_player_leagues_are_rarely_flagged(bots, games_per_pairing, spread, leagues):
    """The family-wise false-alarm rate stays near or below the 5% level: strengths drawn N(0, spread) per league
    (natural units; 1.0 is 174 Elo). Measured rates (seeded, so exact): docs/audit.md."""
    rate = false_alarms(lambda rng: two_player(rng.normal(0, spread, bots), games_per_pairing, rng), leagues, 1)
    print(f"{bots} bots, {games_per_pairing} games a pairing, spread {spread}: {rate:.1%} of {leagues} leagues "
          "had a pair flagged")
    assert rate <= LEVEL + 2 * np.sqrt(LEVEL * (1 - LEVEL) / leagues), rate


@pytest.mark.slow
def test_honest_four_player_leagues_are_rarely_flagged():
    rate = false_alarms(lambda rng: tables(rng.normal(0, 1, 6), 4, 12, rng), 30, 2)
    print(f"6 bots at every 4-player table, 12 games a table: {rate:.1%} of 30 leagues had a pair flagged")
    assert rate <= LEVEL + 2 * np.sqrt(LEVEL * (1 - LEVEL) / 30), rate


def test_perfect_players_one_of_which_throws_to_the_other_are_flagged():
    found = audit(perfect_nim(), labels={0: "boss", 1: "shill", 2: "greedy", 3: "random"})
    doc = found.as_json()
    assert [f["bots"] for f in doc["flagged"]] == [["boss", "shill"]], doc
    assert doc["flagged"][0]["score"] == 12 and doc["flagged"][0]["expected"] == pytest.approx(6, abs=0.1)
    assert 0 < doc["flagged"][0]["p"] <= LEVEL
    assert audit(perfect_nim(thrown=False)).flagged == []


def test_a_thrown_head_to_head_among_equals_is_found():
    """Power, in a noisier world than Nim's: 8 equal bots (Bradley-Terry coin flips), one throws its 24 games
    against another; the pair is flagged first (12 games: docs/audit.md gives the rate)."""
    rng = np.random.default_rng(3)
    found = [audit(two_player([0.0] * 8, 24, rng, thrown=(0, 1))).flagged for _ in range(10)]
    hits = sum(bool(f) and f[0].bots == (0, 1) for f in found)
    print(f"the pair flagged first in {hits} of 10 leagues")
    assert hits >= 8, found


def test_a_pair_that_gains_together_at_four_player_tables_is_flagged():
    rng = np.random.default_rng(4)
    found = audit(tables([0.0] * 6, 4, 12, rng, gang=(0, 1), boost=2.0), labels={0: "a", 1: "b"})
    assert found.flagged and set(found.flagged[0].bots) == {0, 1}, found
    flag = found.flagged[0]
    assert flag.gain is not None and flag.expected_gain is not None and flag.gain > flag.expected_gain
    assert "gain" in found.as_json()["flagged"][0]


def test_bots_the_rest_of_the_field_does_not_place_are_not_judged():
    """a beats b every game, and both lose every game to c: nothing else tells a from b, so a's 12 of 12 against b
    is no evidence of anything (it is reported as untested)."""
    games = []
    for r in range(6):
        for rot in range(2):
            for winner, loser in ((2, 0), (2, 1), (0, 1)):
                seats = [winner, loser] if rot == 0 else [loser, winner]
                games.append((f"{r}|g|t{min(seats)}-{max(seats)}|{rot}", seats,
                              [1.0, -1.0] if seats[0] == winner else [-1.0, 1.0]))
    found = audit(games)
    assert found.flagged == [] and found.untested >= 1, found


def test_no_games_no_pairs():
    assert audit([]).as_json() == {"flagged": [], "tested": 0, "untested": 0, "level": LEVEL}


def test_a_large_league_screens_pairs_on_one_fit_and_refits_the_close_ones(monkeypatch):
    """Past SCREEN_PAIRS pairs each pair is first tested on a one-step update of the whole league's fit; the flags
    are the ones a refit of every pair gives (pairs near the threshold are refitted exactly)."""
    import leaderboards.audit as audit_module
    rng = np.random.default_rng(7)
    leagues = [two_player(rng.normal(0, 0.5, 12), 24, rng, thrown=(2, 5)), two_player(rng.normal(0, 1, 12), 12, rng)]
    screened = [audit(g) for g in leagues]
    assert screened[0].tested + screened[0].untested == 66 > audit_module.SCREEN_PAIRS
    monkeypatch.setattr(audit_module, "SCREEN_PAIRS", 10 ** 9)
    refitted = [audit(g) for g in leagues]
    assert [f.bots for f in screened[0].flagged][:1] == [(2, 5)], screened[0]
    for s, r in zip(screened, refitted):
        assert [f.bots for f in s.flagged] == [f.bots for f in r.flagged], (s, r)
        assert [f.p for f in s.flagged] == pytest.approx([f.p for f in r.flagged])
        assert (s.tested, s.untested) == (r.tested, r.untested)


def test_the_tails_are_exact_binomial_sums_when_the_strengths_are_known():
    import math

    from leaderboards.audit import _WEIGHTS, _tails, _win_chances
    q = _win_chances(0.4, 0.0)  # no uncertainty: every node is the same chance
    p = 1 / (1 + math.exp(-0.4))
    for k, n in ((12, 12), (3, 12), (0, 5), (7, 20)):
        upper, lower = _tails(k, n, q, _WEIGHTS)
        exact = [math.comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(n + 1)]
        assert upper == pytest.approx(sum(exact[k:]), rel=1e-9) and lower == pytest.approx(sum(exact[:k + 1]), rel=1e-9)


def measure() -> None:
    """docs/audit.md's tables: false-alarm rates and power at full size (``python -m tests.leaderboards.test_audit``;
    about 10 minutes on 2 cores)."""
    cases = [(4, 12, 1.0, 1000), (8, 12, 1.0, 300), (16, 12, 1.0, 100), (6, 4, 2.0, 500), (4, 40, 0.3, 500)]
    for bots, games, spread, leagues in cases:
        rate = false_alarms(lambda rng, b=bots, g=games, s=spread: two_player(rng.normal(0, s, b), g, rng), leagues,
                            11)
        print(f"false alarms, 2 players, {bots} bots, {games} games a pairing, spread {spread}: {rate:.1%} of "
              f"{leagues} leagues", flush=True)
    rate = false_alarms(lambda rng: tables(rng.normal(0, 1.0, 6), 4, 12, rng), 200, 11)
    print(f"false alarms, 4-player tables, 6 bots, 12 games a table: {rate:.1%} of 200 leagues", flush=True)
    for games in (12, 24):
        rng = np.random.default_rng(5)
        found = [audit(two_player([0.0] * 8, games, rng, thrown=(0, 1))).flagged for _ in range(100)]
        print(f"power, 8 equal bots, {games} games thrown: the pair flagged first in "
              f"{sum(bool(f) and set(f[0].bots) == {0, 1} for f in found)} of 100 leagues", flush=True)
    rng = np.random.default_rng(6)
    found = [audit(tables([0.0] * 6, 4, 12, rng, gang=(0, 1), boost=1.0)).flagged for _ in range(50)]
    print(f"power, a gang 1.0 stronger at 4-player tables: flagged in "
          f"{sum(bool(f) and set(f[0].bots) == {0, 1} for f in found)} of 50 leagues", flush=True)


if __name__ == "__main__":
    measure()
