"""TrueSkill ratings of a league, computed game by game in schedule order.

Always through an explicit :class:`trueskill.TrueSkill` environment (never the package's global one):
two-player games are 1-vs-1 matches, Sorry! with 3-4 players is a free-for-all (the winner first, the
others tied), and a tie in returns is a draw (Colosseum). The leaderboard key is ``mu - 3 * sigma``
(:meth:`trueskill.TrueSkill.expose` with the default parameters).

This module is pure (no SQLite): :class:`Rater` folds games into ratings and statistics, and the store
(:mod:`leaderboards.store`) persists what it computes. Folding the same games in the same order always
gives bit-identical ratings, which is what makes a resumed league equal to an uninterrupted one.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import trueskill

MU = 25.0
SIGMA = MU / 3
BETA = MU / 6
TAU = MU / 300
DRAW_PROBABILITY = 0.10
"""Prior draw probability for games that have draws."""
GAMES_WITH_DRAWS = frozenset({"colosseum"})
"""Games whose rules allow a draw; the others are rated with draw probability 0 (an adjudicated tie
there is still rated as a draw)."""
ALL = "*"
"""The scope of the league-wide rating (other scopes are one game spec each)."""

FAILURE_REASONS = ("timeout", "crash", "illegal", "memory", "protocol")

_ENVS: dict[float, trueskill.TrueSkill] = {}


def env_for(game_name: str) -> trueskill.TrueSkill:
    """The TrueSkill environment for a game (``game_name`` is the registry name, e.g. ``colosseum``)."""
    draw = DRAW_PROBABILITY if game_name in GAMES_WITH_DRAWS else 0.0
    env = _ENVS.get(draw)
    if env is None:
        env = _ENVS[draw] = trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU, draw_probability=draw)
    return env


def game_name(spec: str) -> str:
    """``nim(k=3)`` -> ``nim``."""
    return spec.split("(", 1)[0].strip()


def ranks_from_returns(returns: Sequence[float]) -> list[int]:
    """Dense ranks, 0 = best; equal returns share a rank (draws, and Sorry!'s losers)."""
    distinct = sorted(set(returns), reverse=True)
    return [distinct.index(r) for r in returns]


def conservative(mu: float, sigma: float) -> float:
    """The leaderboard key, mu - 3 sigma."""
    return mu - 3 * sigma


@dataclass
class BotRating:
    """A bot's rating and counters within one scope."""

    mu: float = MU
    sigma: float = SIGMA
    games: int = 0
    wins: int = 0
    """Games where the bot alone had the best return."""
    draws: int = 0
    """Games where the bot shared the best return with another seat."""
    losses: int = 0
    timeouts: int = 0
    crashes: int = 0
    illegal: int = 0
    memory: int = 0
    protocol: int = 0

    @property
    def exposed(self) -> float:
        return conservative(self.mu, self.sigma)

    @property
    def failures(self) -> int:
        return self.timeouts + self.crashes + self.illegal + self.memory + self.protocol

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class RatedGame:
    """What rating needs from a stored game."""

    key: str
    """The schedule key (the order games are rated in)."""
    game: str
    """The league's game spec (without the per-game seed): the scope of the per-game rating."""
    seats: Sequence[int]
    """Bot id per seat."""
    returns: Sequence[float]
    terminations: Sequence[str]
    failures: Sequence[dict[str, Any]] = ()
    """The record's failures (with ``on_failure=random_move`` a bot can fail and still finish normally)."""


_COUNTERS = {"timeout": "timeouts", "crash": "crashes", "illegal": "illegal", "memory": "memory",
             "protocol": "protocol"}


def failure_reasons(terminations: Sequence[str], failures: Sequence[dict[str, Any]], seat: int) -> set[str]:
    """The kinds of failure of one seat in one game (each counted once per game): its termination reason
    if not normal, plus the reasons of its substituted moves."""
    reasons = {f["reason"] for f in failures if f.get("seat") == seat}
    if seat < len(terminations) and terminations[seat] != "normal":
        reasons.add(terminations[seat])
    return reasons


class Rater:
    """Folds games into ratings per (scope, bot): the league-wide scope ``*`` and one scope per game spec."""

    def __init__(self) -> None:
        self.table: dict[tuple[str, int], BotRating] = {}

    def get(self, scope: str, bot: int) -> BotRating:
        entry = self.table.get((scope, bot))
        if entry is None:
            entry = self.table[(scope, bot)] = BotRating()
        return entry

    def apply(self, game: RatedGame) -> list[tuple[str, int]]:
        """Rates one game; returns the (scope, bot) entries it changed."""
        if len(set(game.seats)) != len(game.seats):  # a bot against itself teaches nothing
            return []
        env = env_for(game_name(game.game))
        ranks = ranks_from_returns(game.returns)
        best_count = ranks.count(0)
        touched = []
        for scope in (ALL, game.game):
            entries = [self.get(scope, bot) for bot in game.seats]
            groups = [(trueskill.Rating(e.mu, e.sigma),) for e in entries]
            new = env.rate(groups, ranks=ranks)
            for seat, (entry, (rating,)) in enumerate(zip(entries, new)):
                entry.mu, entry.sigma = rating.mu, rating.sigma
                entry.games += 1
                if ranks[seat] == 0:
                    if best_count == 1:
                        entry.wins += 1
                    else:
                        entry.draws += 1
                else:
                    entry.losses += 1
                for reason in failure_reasons(game.terminations, game.failures, seat):
                    counter = _COUNTERS.get(reason)
                    if counter:
                        setattr(entry, counter, getattr(entry, counter) + 1)
                touched.append((scope, game.seats[seat]))
        return touched

    def apply_all(self, games: Iterable[RatedGame]) -> Rater:
        for game in sorted(games, key=lambda g: g.key):
            self.apply(game)
        return self


def leaderboard_order(ratings: dict[int, BotRating]) -> list[int]:
    """Bot ids ordered by mu - 3 sigma (best first; ties broken by mu, then id)."""
    return sorted(ratings, key=lambda b: (-ratings[b].exposed, -ratings[b].mu, b))
