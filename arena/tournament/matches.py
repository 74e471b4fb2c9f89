"""A tournament's match: ``games_per_pairing`` games of each game spec between two bots, seats alternated, and when a
match that must have a winner is tied, tie-break games, then sudden death.

Game ``i`` of a match is played with the match's first bot (the higher seed, or the one Swiss gives the first seat)
in seat 0 when ``i`` is even and in seat 1 when it is odd, so each pair of games is one position from both sides;
both games of a pair share one duplicate seed. The base games cycle through the league's game specs
(``games_per_pairing`` of each, in file order); tie-break and sudden-death games go through them two by two.

A tied match that needs a winner (knockout, double elimination) plays ``tiebreak_games`` more games; still tied, it
plays sudden-death games one at a time, and the first game someone wins decides it; after ``sudden_death`` drawn
games the higher seed goes through (a rule stated in docs/tournaments.md: a pair of bots that only draw must end).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from arena.league.schedule import Fixture, fixture_key, game_seed

ALL_DRAWN = "every game drawn: the higher seed goes through"
"""The note of a match whose sudden death was drawn to its end: its first bot goes through (the higher seed; a grand
final says otherwise: :func:`arena.tournament.brackets.play`)."""


@dataclass(frozen=True)
class MatchRules:
    """How long a match is: the league's game specs and ``games_per_pairing``, and how a tie is broken."""

    specs: tuple[str, ...]
    per_spec: int = 2
    """Base games of each spec (the league's ``games_per_pairing``)."""
    decisive: bool = True
    """A tie must be broken (knockout, double elimination); Swiss scores a tied match as a draw."""
    tiebreak_games: int = 2
    sudden_death: int = 10

    @property
    def base_games(self) -> int:
        return self.per_spec * len(self.specs)

    def spec(self, index: int) -> str:
        """The game spec of game ``index`` of a match."""
        if index < self.base_games:
            return self.specs[index // self.per_spec]
        return self.specs[((index - self.base_games) // 2) % len(self.specs)]


class Played(NamedTuple):
    """One stored game of a match: its index in the match, the store's game id, and each bot's points (1 a win,
    0.5 a draw, 0 a loss) in the match's bot order."""

    number: int
    game_id: int
    points: tuple[float, float]


@dataclass
class Match:
    """A match of a tournament: ``bots`` in the order of game 0's seats, one of them None for a bye."""

    label: str
    """Where it is in the tournament: ``R3`` (Swiss round 3), ``W2``/``L3`` (a winners'/losers' bracket round),
    ``GF``/``GF2`` (the grand final and its reset)."""
    round: int
    """The round in its games' schedule keys."""
    bots: tuple[int | None, int | None]
    games: list[Played] = field(default_factory=list)
    done: bool = False
    winner: int | None = None
    """The bot that won (None: not decided, a draw, or a bye of two empty slots)."""
    needed: list[int] = field(default_factory=list)
    """The indexes of the games to play next (empty when done)."""
    note: str = ""
    """How it was decided when it took more than its base games (tie-break, sudden death, the higher seed)."""

    @property
    def is_bye(self) -> bool:
        return self.bots[0] is None or self.bots[1] is None

    @property
    def score(self) -> tuple[float, float]:
        return (sum(g.points[0] for g in self.games), sum(g.points[1] for g in self.games))

    @property
    def loser(self) -> int | None:
        if not self.done or self.winner is None:
            return None
        other = self.bots[1] if self.winner == self.bots[0] else self.bots[0]
        return other

    def table(self) -> tuple[int, int]:
        a, b = self.bots
        assert a is not None and b is not None
        return (a, b) if a < b else (b, a)


def settle(match: Match, rules: MatchRules, stored: dict[int, Played]) -> Match:
    """Fills in ``match`` from its stored games (``stored``: index -> game): what is played, whether it is done, who
    won, and which games come next."""
    a, b = match.bots
    if a is None or b is None:  # a bye: the bot present goes through without a game
        match.done, match.winner = True, a if b is None else b
        return match
    match.games = [stored[i] for i in sorted(stored)]

    def score(upto: int) -> tuple[float, float]:  # over the games before ``upto`` (stage by stage)
        return (sum(g.points[0] for g in match.games if g.number < upto),
                sum(g.points[1] for g in match.games if g.number < upto))

    base = range(rules.base_games)
    missing = [i for i in base if i not in stored]
    if missing:
        match.needed = missing
        return match
    pa, pb = score(rules.base_games)
    if pa != pb or not rules.decisive:
        match.done, match.winner = True, (a if pa > pb else b if pb > pa else None)
        return match
    tiebreak = range(rules.base_games, rules.base_games + rules.tiebreak_games)
    missing = [i for i in tiebreak if i not in stored]
    if missing:
        match.needed = missing
        return match
    if rules.tiebreak_games:
        pa, pb = score(rules.base_games + rules.tiebreak_games)
        if pa != pb:
            match.done, match.winner, match.note = True, (a if pa > pb else b), "after tie-break games"
            return match
    first = rules.base_games + rules.tiebreak_games
    for i in range(first, first + rules.sudden_death):
        game = stored.get(i)
        if game is None:
            match.needed = [i]
            return match
        if game.points[0] != game.points[1]:
            match.done, match.winner, match.note = True, (a if game.points[0] > game.points[1] else b), \
                "in sudden death"
            return match
    match.done, match.winner, match.note = True, a, ALL_DRAWN
    return match


def fixtures(match: Match, rules: MatchRules, base_seed: int) -> list[Fixture]:
    """The fixtures of the games ``match`` needs next."""
    a, b = match.bots
    assert a is not None and b is not None
    table = match.table()
    out = []
    for i in match.needed:
        spec = rules.spec(i)
        seats = (a, b) if i % 2 == 0 else (b, a)
        # both games of a pair share a seed (each bot sees the position from both seats)
        seed = game_seed(base_seed, spec, match.round * 10_000 + i // 2)
        out.append(Fixture(fixture_key(match.round, spec, table, i), spec, match.round, table, i, seats, seed))
    return out


def points(seats: Sequence[int], returns: Sequence[float], first: int) -> tuple[float, float]:
    """(points of ``first``, points of the other) in a two-player game: 1 a win, 0.5 a draw, 0 a loss."""
    mine = returns[seats.index(first)]
    theirs = returns[1 - seats.index(first)]
    return (1.0, 0.0) if mine > theirs else (0.0, 1.0) if theirs > mine else (0.5, 0.5)


def round_title(label: str) -> str:
    """A round's name in words, from a match's :attr:`Match.label` (``R3``: round 3, ``W2``: winners' round 2,
    ``L3``: losers' round 3, ``GF``/``GF2``: the grand final and its reset): every display says it so."""
    if label.startswith("R"):
        return f"round {label[1:]}"
    if label.startswith("W"):
        return f"winners' round {label[1:]}"
    if label.startswith("L"):
        return f"losers' round {label[1:]}"
    return "grand final" if label == "GF" else "grand final, bracket reset"
