"""TrueSkill ratings of a league, computed game by game in schedule order.

Always through an explicit :class:`trueskill.TrueSkill` environment (never the package's global one):
two-player games are 1-vs-1 matches, Sorry! with 3-4 players is a free-for-all (the winner first, the
others tied), and a tie in returns is a draw (Colosseum). The leaderboard key is ``mu - 3 * sigma``
(:meth:`trueskill.TrueSkill.expose` with the default parameters).

A decided two-player game (almost every game of a league) takes the closed form of the same update
(:func:`rate_decided`: the same environment's v/w functions, equal to ``env.rate`` within 1e-9, tested),
about 50 times faster than building TrueSkill's factor graph: recomputing 100,000 games then takes
seconds, not minutes. Draws and 3-4 player games go through ``env.rate``.

This module is pure (no SQLite): :class:`Rater` folds games into ratings and statistics, and the store
(:mod:`leaderboards.store`) persists what it computes. Folding the same games in the same order always
gives bit-identical ratings, which is what makes a resumed league equal to an uninterrupted one.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import trueskill

from arena.results.outcome import FAILURES, Termination
from arena.results.records import Failure
from games.registry import has_draws

MU = 25.0
SIGMA = MU / 3
BETA = MU / 6
TAU = MU / 300
DRAW_PROBABILITY = 0.10
"""Prior draw probability for games that have draws."""
ALL = "*"
"""The scope of the league-wide rating (other scopes are one game spec each)."""

FAILURE_REASONS = FAILURES
"""What a bot's failure counters count (:data:`arena.results.outcome.FAILURES`)."""

_ENVS: dict[float, trueskill.TrueSkill] = {}
_MARGINS: dict[int, float] = {}


def env_for(game_name: str) -> trueskill.TrueSkill:
    """The TrueSkill environment for a game (``game_name`` is the registry name, e.g. ``colosseum``): draw
    probability DRAW_PROBABILITY when the game declares draws (``Game.has_draws``), else 0 (an adjudicated tie
    there is still rated as a draw)."""
    draw = DRAW_PROBABILITY if has_draws(game_name) else 0.0
    env = _ENVS.get(draw)
    if env is None:
        env = _ENVS[draw] = trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU, draw_probability=draw)
    return env


def _draw_margin(env: trueskill.TrueSkill) -> float:
    margin = _MARGINS.get(id(env))
    if margin is None:  # envs live in _ENVS for the whole process, so their ids stay valid
        margin = _MARGINS[id(env)] = trueskill.calc_draw_margin(env.draw_probability, 2, env)
    return float(margin)


def rate_decided(env: trueskill.TrueSkill, winner: tuple[float, float],
                 loser: tuple[float, float]) -> tuple[tuple[float, float], tuple[float, float]]:
    """``env.rate([(winner,), (loser,)], ranks=[0, 1])`` in closed form: (mu, sigma) of the winner and the
    loser after a decided 1-vs-1 game.

    TrueSkill's factor graph for two single players has no loop, so its messages reduce to this update
    (Herbrich et al. 2007, eq. for two players): the skills widen by tau, then move by the environment's
    own truncated-Gaussian corrections v and w of the normalised performance difference.

    Raises:
        FloatingPointError: as ``env.rate`` does when the winner was far too weak for the float precision.
    """
    (mu_w, sigma_w), (mu_l, sigma_l) = winner, loser
    var_w = sigma_w * sigma_w + env.tau * env.tau
    var_l = sigma_l * sigma_l + env.tau * env.tau
    c2 = 2 * env.beta * env.beta + var_w + var_l
    c = math.sqrt(c2)
    t, eps = (mu_w - mu_l) / c, _draw_margin(env) / c
    v, w = env.v_win(t, eps), env.w_win(t, eps)
    return ((mu_w + var_w / c * v, math.sqrt(var_w * (1 - var_w / c2 * w))),
            (mu_l - var_l / c * v, math.sqrt(var_l * (1 - var_l / c2 * w))))


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


class _Columns(Protocol):
    """A row by column name (a dict, a ``sqlite3.Row``)."""

    def __getitem__(self, column: str, /) -> Any: ...


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
    failed: dict[Termination, int] = field(default_factory=dict)
    """Per failure reason (every one of :data:`FAILURE_REASONS`, in its order): the games the bot failed in so
    (a game counts once per reason). Also read by counter name: ``rating.timeouts``."""

    def __post_init__(self) -> None:  # every reason present and in order: equal ratings compare equal
        self.failed = {reason: self.failed.get(reason, 0) for reason in FAILURE_REASONS}

    def __getattr__(self, name: str) -> int:
        """A failure count by its counter's name (``timeouts``, ``crashes``, ``illegal``...: the store's columns)."""
        reason = _BY_COUNTER.get(name)
        failed = self.__dict__.get("failed")  # (absent while unpickling)
        if reason is None or failed is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return int(failed[reason])

    @property
    def exposed(self) -> float:
        return conservative(self.mu, self.sigma)

    @property
    def failures(self) -> int:
        return sum(self.failed.values())

    def as_dict(self) -> dict[str, float]:
        """The rating as the store's columns (:data:`leaderboards.schema.RATING_FIELDS`): mu ... losses, then each
        failure counter by name."""
        return {"mu": self.mu, "sigma": self.sigma, "games": self.games, "wins": self.wins, "draws": self.draws,
                "losses": self.losses, **{reason.counter: n for reason, n in self.failed.items()}}

    @classmethod
    def from_columns(cls, row: _Columns) -> BotRating:
        """A rating from its stored columns (what :meth:`as_dict` gives)."""
        return cls(row["mu"], row["sigma"], row["games"], row["wins"], row["draws"], row["losses"],
                   {reason: row[reason.counter] for reason in FAILURE_REASONS})


_BY_COUNTER = {reason.counter: reason for reason in FAILURE_REASONS}


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
    """Per seat, as stored (the words of :class:`arena.results.outcome.Termination`)."""
    failures: Sequence[Failure] = ()
    """The record's failures (with ``on_failure=random_move`` a bot can fail and still finish normally)."""


def failure_reasons(terminations: Sequence[str], failures: Sequence[Failure], seat: int) -> set[str]:
    """The kinds of failure of one seat in one game (each counted once per game): its termination reason
    if not normal, plus the reasons of its substituted moves, as plain words. A termination no Termination has (a
    store edited by hand) still fails the game, and counts in no counter; a failure's unknown reason is read as a
    crash (:meth:`Failure.from_dict`)."""
    reasons = {str(f.reason) for f in failures if f.seat == seat}
    if seat < len(terminations) and terminations[seat] != Termination.NORMAL:
        reasons.add(str(terminations[seat]))
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
        decided = len(ranks) == 2 and ranks[0] != ranks[1]
        for scope in (ALL, game.game):
            entries = [self.get(scope, bot) for bot in game.seats]
            if decided:  # the common case, in closed form
                w = 0 if ranks[0] == 0 else 1
                win, lose = rate_decided(env, (entries[w].mu, entries[w].sigma),
                                         (entries[1 - w].mu, entries[1 - w].sigma))
                new = [win, lose] if w == 0 else [lose, win]
            else:
                groups = [(trueskill.Rating(e.mu, e.sigma),) for e in entries]
                new = [(r.mu, r.sigma) for (r,) in env.rate(groups, ranks=ranks)]
            for seat, (entry, (mu, sigma)) in enumerate(zip(entries, new)):
                entry.mu, entry.sigma = mu, sigma
                entry.games += 1
                if ranks[seat] == 0:
                    if best_count == 1:
                        entry.wins += 1
                    else:
                        entry.draws += 1
                else:
                    entry.losses += 1
                for reason in failure_reasons(game.terminations, game.failures, seat):
                    if reason in entry.failed:  # (a word no Termination has, a hand-edited store's, counts nowhere)
                        entry.failed[Termination(reason)] += 1
                touched.append((scope, game.seats[seat]))
        return touched

    def apply_all(self, games: Iterable[RatedGame]) -> Rater:
        for game in sorted(games, key=lambda g: g.key):
            self.apply(game)
        return self


def leaderboard_order(ratings: dict[int, BotRating]) -> list[int]:
    """Bot ids ordered by mu - 3 sigma (best first; ties broken by mu, then id), the bots without a game last: their
    prior (mu - 3 sigma = 0) is no result, and would rank them above every bot whose games put it below 0."""
    return sorted(ratings, key=lambda b: (ratings[b].games == 0, -ratings[b].exposed, -ratings[b].mu, b))


UNRATED = "unrated"
"""What a bot without games shows instead of a batch Elo (leaderboards/elo.py) and its interval."""


def elo_text(elo: float | None, low: float | None, high: float | None) -> str:
    """``+123 [+80, +166]``: a batch Elo and its 95% interval (never ``-0``); :data:`UNRATED` without games."""
    if elo is None or low is None or high is None:
        return UNRATED
    return " ".join((_signed(elo), f"[{_signed(low)},", f"{_signed(high)}]"))


def _signed(value: float) -> str:
    return f"{round(value) + 0:+d}"
