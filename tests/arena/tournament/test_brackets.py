"""Knockout and double-elimination brackets (arena/tournament/brackets.py) and a match's tie-breaks
(arena/tournament/matches.py), replayed with made-up results."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from arena.tournament import brackets
from arena.tournament.matches import Match, MatchRules, Played, settle


def results_by(winner_of: dict[tuple[int, int], int] | None = None, seed: int = 0):  # type: ignore[no-untyped-def]
    """A settle function that decides every match at once: ``winner_of[(a, b)]`` or a seeded coin."""
    rng = random.Random(seed)

    def decide(m: Match) -> Match:
        a, b = m.bots
        if a is None or b is None:
            m.done, m.winner = True, a if b is None else b
            return m
        w = (winner_of or {}).get((a, b), (winner_of or {}).get((b, a), a if rng.random() < 0.5 else b))
        m.done, m.winner = True, w
        m.games = [Played(0, 0, (1.0, 0.0) if w == a else (0.0, 1.0))]
        return m
    return decide


def test_seed_positions_are_the_standard_bracket() -> None:
    assert brackets.seed_positions(4) == [0, 3, 1, 2]
    assert brackets.seed_positions(8) == [0, 7, 3, 4, 1, 6, 2, 5]


def test_a_knockout_of_five_gives_byes_to_the_top_three_and_the_favourites_win() -> None:
    field = [10, 11, 12, 13, 14]
    b = brackets.play(brackets.knockout_nodes(5), field, lambda m: _by_seed(m, field))
    first = [m for m in b.matches if m is not None and m.label == "R1"]
    byes = sorted(m.winner for m in first if m.is_bye and m.winner is not None)
    assert byes == [10, 11, 12]
    assert b.finished and b.placings == [[10], [11], [12, 13], [14]]


def _by_seed(m: Match, field: list[int]) -> Match:
    a, b = m.bots
    if a is None or b is None:
        m.done, m.winner = True, a if b is None else b
        return m
    m.done, m.winner = True, min((a, b), key=field.index)
    return m


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8, 9, 13, 16])
def test_double_elimination_puts_every_bot_but_the_champion_out_after_two_losses(n: int) -> None:
    for seed in range(5):
        nodes, final = brackets.double_elimination_nodes(n)
        b = brackets.play(nodes, list(range(n)), results_by(seed=seed), final=final)
        assert b.finished
        played = [m for m in b.matches if m is not None and not m.is_bye]
        losses = Counter(m.loser for m in played)
        champion = b.placings[0][0]
        assert losses[champion] <= 1
        assert all(losses[x] == 2 for x in range(n) if x != champion)
        reset = any(m.label == "GF2" for m in played)
        assert len(played) == 2 * n - 2 + int(reset)
        gf = next(m for m in played if m.label == "GF")
        assert reset == (gf.winner == gf.bots[1])  # a reset exactly when the losers' champion won the final
        assert sorted(x for group in b.placings for x in group) == list(range(n))
        keys = [(m.round, tuple(sorted(m.bots))) for m in played]  # type: ignore[type-var]
        assert len(keys) == len(set(keys))  # every match's games have keys of their own


def test_no_reset_when_turned_off() -> None:
    nodes, final = brackets.double_elimination_nodes(4)
    # seed 0 wins the winners' bracket, then loses the grand final to the losers' bracket champion
    b = brackets.play(nodes, [0, 1, 2, 3], lambda m: _final_upset(m), final=final, bracket_reset=False)
    assert b.finished and all(m is None or m.label != "GF2" for m in b.matches)
    gf = [m for m in b.matches if m is not None and m.label == "GF"][0]
    assert b.placings[0] == [gf.winner] and gf.winner != 0


def _final_upset(m: Match) -> Match:
    a, b = m.bots
    if a is None or b is None:
        m.done, m.winner = True, a if b is None else b
        return m
    m.done = True
    m.winner = (b if m.label == "GF" else a if a == 0 or b != 0 else b)
    m.games = [Played(0, 0, (1.0, 0.0) if m.winner == a else (0.0, 1.0))]
    return m


def test_an_unfinished_match_holds_up_only_the_matches_that_wait_for_it() -> None:
    def half(m: Match) -> Match:  # only seeds 0 and 3's match (and byes) are decided
        if m.is_bye or set(m.bots) == {0, 3}:
            return _by_seed(m, [0, 1, 2, 3, 4, 5, 6, 7])
        return m
    b = brackets.play(brackets.knockout_nodes(8), list(range(8)), half)
    assert not b.finished and b.placings == []
    assert sum(m is None for m in b.matches) == 3  # the semi-finals and the final wait


RULES = MatchRules(("nim",), per_spec=2, tiebreak_games=2, sudden_death=3)


def game(i: int, pts: tuple[float, float]) -> Played:
    return Played(i, 100 + i, pts)


def test_a_tied_match_goes_to_tie_breaks_then_sudden_death_then_the_higher_seed() -> None:
    m = settle(Match("R1", 1, (5, 9)), RULES, {})
    assert not m.done and m.needed == [0, 1]
    split = {0: game(0, (1.0, 0.0)), 1: game(1, (0.0, 1.0))}
    m = settle(Match("R1", 1, (5, 9)), RULES, split)
    assert not m.done and m.needed == [2, 3]
    tied = split | {2: game(2, (0.5, 0.5)), 3: game(3, (0.5, 0.5))}
    m = settle(Match("R1", 1, (5, 9)), RULES, tied)
    assert not m.done and m.needed == [4]  # sudden death: one game at a time
    m = settle(Match("R1", 1, (5, 9)), RULES, tied | {4: game(4, (0.5, 0.5)), 5: game(5, (0.0, 1.0))})
    assert m.done and m.winner == 9 and m.note == "in sudden death"
    drawn = tied | {i: game(i, (0.5, 0.5)) for i in (4, 5, 6)}
    m = settle(Match("R1", 1, (5, 9)), RULES, drawn)
    assert m.done and m.winner == 5 and "higher seed" in m.note


def test_a_swiss_match_may_be_drawn() -> None:
    rules = MatchRules(("nim",), per_spec=2, decisive=False)
    m = settle(Match("R1", 1, (5, 9)), rules, {0: game(0, (1.0, 0.0)), 1: game(1, (0.0, 1.0))})
    assert m.done and m.winner is None and m.score == (1.0, 1.0)


def test_base_games_cycle_through_the_specs_then_tie_breaks_two_by_two() -> None:
    rules = MatchRules(("nim", "hex(size=5)"), per_spec=2)
    assert [rules.spec(i) for i in range(8)] == ["nim", "nim", "hex(size=5)", "hex(size=5)", "nim", "nim",
                                                  "hex(size=5)", "hex(size=5)"]


def test_a_grand_final_of_draws_goes_to_the_winners_champion_and_says_so() -> None:
    """From the issue 32 review: the grand final's first bot is the winners' bracket champion, not the higher seed,
    yet a grand final of nothing but draws said "the higher seed goes through" (seed 1 beat seed 0 in W1 here)."""
    def upset_then_draws(m: Match) -> Match:
        a, b = m.bots
        if m.label == "W1":  # seed 1 beats seed 0 (the first bot is the higher seed, 0)
            return settle(m, RULES, {0: game(0, (0.0, 1.0)), 1: game(1, (0.0, 1.0))})
        return settle(m, RULES, {i: game(i, (0.5, 0.5)) for i in range(RULES.base_games + RULES.tiebreak_games
                                                                         + RULES.sudden_death)})
    nodes, final = brackets.double_elimination_nodes(2)
    b = brackets.play(nodes, [0, 1], upset_then_draws, final=final)
    gf = [m for m in b.matches if m is not None and m.label == "GF"][0]
    assert gf.bots == (1, 0) and gf.winner == 1 and b.placings == [[1], [0]]
    assert "winners' bracket champion" in gf.note and "higher seed" not in gf.note, gf.note
