"""Collusion the organiser can see: pairs of bots whose results against each other are improbable given each bot's
results against the rest of the field (``arena audit``, the report's and ``arena serve``'s /admin section;
docs/audit.md).

Two bots can agree without any channel the sandbox could close (their think times are visible to each other:
docs/sandbox.md, "The clock"), so one can throw its games to the other. What that leaves in the results: their
head-to-head departs from what their strengths predict, where the strengths come from everyone else.

- **Strengths without the pair.** For each pair that met, the batch Elo's Plackett-Luce model
  (:mod:`leaderboards.elo`, for two players Bradley-Terry) is fitted on every game of the league *except* the games
  where both sat. That gives the strength difference ``d`` of the two bots as the rest of the field sees it, its
  cluster-robust variance (the leaderboard's intervals: games sharing a seed share their luck) and its
  model-based variance.
- **The pair's score.** In every game where both sat, the one who finished above the other wins (a tie is a draw);
  in a Plackett-Luce model the chance that ``A`` finishes above ``B`` is ``1 / (1 + exp(-d))`` whoever else is at
  the table. Given ``d``, A's wins among the decisive games are binomial; ``d`` is integrated over its
  cluster-robust normal distribution (Gauss-Hermite), so uncertainty about the strengths makes nothing look
  improbable. The p-value is two-sided: twice the smaller exact tail.
- **Pairs that gain together (3-4 players).** Where the pair shared tables of three or more, their places against
  the *other* players there are compared with the model too (simulated finishing orders, one-sided: they gain);
  the pair's p-value is then the smaller of the two, doubled.
- **Not judged.** A pair whose strength difference the rest of the field does not pin down (its model-based
  standard error above :data:`MAX_SE`: e.g. two bots that both lost every other game) is counted as untested:
  their head-to-head is all there is to know of them.
- **Many pairs.** Holm's step-down at family-wise level :data:`LEVEL` over every pair that met, the untested ones
  too (m: whether a pair is placed depends on the other pairs' games): the smallest p-value is compared with
  ``LEVEL / m``, the next with ``LEVEL / (m - 1)``, and so on. After each flag the flagged pair's
  games are set aside (they are evidence of nothing about anyone's strength) and the rest are tested again. The
  ``p`` reported is Holm's adjusted p-value (at most :data:`LEVEL` for a flagged pair).
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from leaderboards.elo import Outcome, Stages, _cluster_scores, _gradient_hessian, cluster_of, covariance, fit, stages
from leaderboards.ratings import ALL
from leaderboards.store import Store

LEVEL = 0.05
"""The family-wise error rate: the chance that a league of honest bots has any pair flagged (in the model)."""
MAX_SE = 1.0
"""The largest standard error of a pair's strength difference (natural units; 1.0 is 174 Elo) at which the rest of
the field is said to place the two bots."""
NODES = 48
"""Gauss-Hermite nodes over the strength difference's distribution."""
SIMULATIONS = 1000
"""Simulated draws of a pair's shared multi-player tables (the one-sided test of pairs that gain together), drawn
again while fewer than 10 of all drawn reach the observed gain, up to :data:`MAX_SIMULATIONS`."""
MAX_SIMULATIONS = 100_000
SCREEN_PAIRS = 50
"""With more pairs than this, each pair is first tested on a one-step update of the whole league's fit (its games
taken out by a low-rank correction, no refit); only pairs within ten times of Holm's threshold are refitted exactly.
A refit per pair costs a fit of the whole league: 8 s for 32 bots, minutes for a course's hundred."""
SCREEN_MARGIN = 10.0


@dataclass(frozen=True)
class Flag:
    """A flagged pair: ``bots[0]`` did better against ``bots[1]`` than the field predicts (for a pair that gained
    together, the first of the two)."""

    bots: tuple[int, int]
    games: int
    """Games where both sat."""
    score: float
    """``bots[0]``'s score against ``bots[1]``: games finished above it, draws half."""
    expected: float
    """That score as the rest of the field predicts it."""
    p: float
    """Holm's adjusted p-value."""
    p_raw: float
    gain: float | None = None
    """Multi-player tables: the pair's places against the other players there (games finished above, ties
    half), and the model's expectation of it; None when they met only in two-player games."""
    expected_gain: float | None = None


@dataclass(frozen=True)
class Audit:
    flagged: list[Flag]
    tested: int
    """Pairs that met and that the rest of the field places (with :attr:`untested`, the m of Holm's correction)."""
    untested: int
    """Pairs that met but that the rest of the field does not place (see :data:`MAX_SE`)."""
    level: float = LEVEL
    labels: dict[int, str] = field(default_factory=dict)
    """Bot id -> label, for the front ends."""

    def as_json(self) -> dict[str, Any]:
        """``arena audit --json``: ``{"flagged": [{"bots": [A, B], "games", "score", "expected", "p"}, ...]}``, worst
        first, plus what was tested."""
        def row(f: Flag) -> dict[str, Any]:
            out = {"bots": [self.labels.get(b, str(b)) for b in f.bots], "games": f.games, "score": f.score,
                   "expected": round(f.expected, 3), "p": _sig(f.p), "p_raw": _sig(f.p_raw)}
            if f.gain is not None and f.expected_gain is not None:
                out.update(gain=f.gain, expected_gain=round(f.expected_gain, 3))
            return out
        return {"flagged": [row(f) for f in self.flagged], "tested": self.tested, "untested": self.untested,
                "level": self.level}


def _sig(p: float) -> float:
    return float(f"{p:.3g}")


@dataclass
class _Pair:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    multi: list[tuple[int, int, list[int], list[float]]] = field(default_factory=list)
    """Shared tables of 3+ players: (index of A's seat, of B's, bot indices per seat, returns)."""

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses


def audit(games: Sequence[tuple[str, Sequence[int], Sequence[float]]], *, level: float = LEVEL,
          labels: dict[int, str] | None = None, seed: int = 0) -> Audit:
    """The audit of a league's games: (schedule key, bot id per seat, returns), as
    :meth:`leaderboards.store.Store.outcomes` reads them."""
    played = sorted({b for _, seats, _ in games for b in seats})
    index = {b: i for i, b in enumerate(played)}
    # a cluster per table of a seeded fixture: every game of a cluster has the same bots, so a pair's games are
    # whole clusters
    outcomes = [Outcome(seats, returns, f"{cluster_of(key)}|{sorted(seats)}") for key, seats, returns in games]
    st = stages(outcomes, played)
    n = len(played)
    clusters: dict[str, int] = {}
    members: list[set[int]] = []
    pairs: dict[tuple[int, int], _Pair] = defaultdict(_Pair)
    for o in outcomes:
        if len(set(o.seats)) != len(o.seats):
            continue  # (left out of the fit too: a bot against itself)
        c = clusters.setdefault(o.cluster, len(clusters))
        if c == len(members):
            members.append({index[b] for b in o.seats})
        seats = [index[b] for b in o.seats]
        for s in range(len(seats)):
            for t in range(s + 1, len(seats)):
                a, b = (s, t) if seats[s] < seats[t] else (t, s)
                pair = pairs[(seats[a], seats[b])]
                ra, rb = o.returns[a], o.returns[b]
                if ra > rb:
                    pair.wins += 1
                elif ra < rb:
                    pair.losses += 1
                else:
                    pair.draws += 1
                if len(seats) > 2:
                    pair.multi.append((a, b, seats, list(o.returns)))
    # stages() numbers clusters in order of first appearance, as above: stage -> cluster -> members
    member = np.zeros((len(members), n + 1), dtype=bool)
    for c, ms in enumerate(members):
        member[c, list(ms)] = True
    if not pairs:
        return Audit([], 0, 0, level, dict(labels or {}))
    full, _ = fit(st)
    rng = np.random.default_rng(seed)
    excluded = np.zeros(len(st.chosen), dtype=bool)
    flags: list[Flag] = []
    tested: int | None = None
    looked_at = 0
    untested = 0
    adjusted = 0.0
    while True:
        results = []
        unplaced = 0
        remaining = (len(pairs) if tested is None else looked_at) - len(flags)
        base = _Base(st, excluded, full) if len(pairs) > SCREEN_PAIRS else None
        for (a, b), pair in pairs.items():
            if any(set(f.bots) == {played[a], played[b]} for f in flags):
                continue
            drop = excluded | (member[st.cluster, a] & member[st.cluster, b])
            result = base.test(drop & ~excluded, a, b, pair, rng) if base is not None else None
            if base is None or (result is not None and result[0] * remaining <= SCREEN_MARGIN * level):
                result = _test(st, drop, full, a, b, pair, rng)
            if result is None:
                unplaced += 1
            else:
                results.append((result[0], a, b, result[1:]))
        if tested is None:
            tested, untested = len(results), unplaced
            looked_at = len(pairs)
        if not results:
            break
        p_raw, a, b, (first, score, expected, gain, expected_gain) = min(results, key=lambda r: r[0])
        adjusted = max(adjusted, min(1.0, (looked_at - len(flags)) * p_raw))
        if adjusted > level:
            break
        bots = (played[a], played[b]) if first == 0 else (played[b], played[a])
        flags.append(Flag(bots, pairs[(a, b)].games, score, expected, adjusted, p_raw, gain, expected_gain))
        excluded |= member[st.cluster, a] & member[st.cluster, b]
    return Audit(flags, tested or 0, untested, level, dict(labels or {}))


def _test(st: Stages, drop: np.ndarray, start: np.ndarray, a: int, b: int, pair: _Pair, rng: np.random.Generator
          ) -> tuple[float, int, float, float, float | None, float | None] | None:
    """(p, 0 or 1: who gained, that one's score against the other, its expected score, the pair's gain at multi-player
    tables and its expectation) for the pair ``a``, ``b`` (bot indices), fitted without the stages in ``drop``; None
    when the rest of the field does not place the two."""
    keep = ~drop
    rest = Stages(st.n, st.risk[keep], st.chosen[keep], st.weight[keep], st.cluster[keep])
    in_rest = np.zeros(st.n + 1, dtype=bool)
    in_rest[rest.risk.ravel()] = True
    if not (in_rest[a] and in_rest[b]):
        return None
    theta, info = fit(rest, start=start)
    direction = np.zeros(st.n)
    direction[a], direction[b] = 1.0, -1.0
    model_var = float(direction @ np.linalg.pinv(info) @ direction)
    if model_var > MAX_SE ** 2:
        return None
    robust = covariance(theta, info, rest) if len(rest.chosen) > 1 else np.linalg.pinv(info)
    var = max(float(direction @ robust @ direction), 0.0)
    return _p_value(float(theta[a] - theta[b]), var, theta, robust, pair, rng)


def _p_value(d: float, var: float, theta: np.ndarray, cov: np.ndarray, pair: _Pair, rng: np.random.Generator
             ) -> tuple[float, int, float, float, float | None, float | None]:
    """:func:`_test`'s answer from the pair's strength difference ``d`` (its variance ``var``) and, for shared
    multi-player tables, every strength and their covariance."""
    q = _win_chances(d, var)
    weights = _WEIGHTS
    upper, lower = _tails(pair.wins, pair.wins + pair.losses, q, weights)
    p_h2h = min(1.0, 2 * min(upper, lower))
    expected_a = float(weights @ q) * pair.games
    score_a = pair.wins + 0.5 * pair.draws
    first = 0 if score_a >= expected_a else 1
    score = score_a if first == 0 else pair.games - score_a
    expected = expected_a if first == 0 else pair.games - expected_a
    if not pair.multi:
        return p_h2h, first, score, expected, None, None
    p_gain, gain, expected_gain = _gain(theta, cov, pair.multi, rng)
    return min(1.0, 2 * min(p_h2h, p_gain)), first, score, expected, gain, expected_gain


class _Base:
    """The whole league's fit (less the stages already set aside), from which a pair's games are taken out by a
    Newton step with a low-rank (Woodbury) update of the inverse information, instead of a refit."""

    def __init__(self, st: Stages, excluded: np.ndarray, start: np.ndarray) -> None:
        keep = ~excluded
        self.st = st
        self.rest = Stages(st.n, st.risk[keep], st.chosen[keep], st.weight[keep], st.cluster[keep])
        self.theta, info = fit(self.rest, start=start)
        self.inv = np.linalg.pinv(info)
        self.meat = _cluster_scores(self.theta, self.rest)
        self.clusters = len(np.unique(self.rest.cluster))
        self.cov = covariance(self.theta, info, self.rest) if len(self.rest.chosen) > 1 else self.inv

    def test(self, drop: np.ndarray, a: int, b: int, pair: _Pair, rng: np.random.Generator
             ) -> tuple[float, int, float, float, float | None, float | None] | None:
        """:func:`_test`, approximately: ``drop`` are the pair's stages (not yet set aside)."""
        st = self.st
        sub = Stages(st.n, st.risk[drop], st.chosen[drop], st.weight[drop], st.cluster[drop])
        if len(sub.chosen) == 0:
            return None
        grad, info = _gradient_hessian(self.theta, sub, 0.0)
        involved = np.flatnonzero(np.abs(info).sum(axis=1) > 0)
        if len(involved) == 0:
            return None
        c = info[np.ix_(involved, involved)]
        m = self.inv[np.ix_(involved, involved)]
        core = c @ np.linalg.pinv(np.eye(len(involved)) - m @ c)

        def solve(x: np.ndarray) -> np.ndarray:  # (information - the pair's part)^-1 x
            y = self.inv @ x
            return y + self.inv[:, involved] @ (core @ y[involved])

        theta = self.theta + solve(-grad)  # the rest's gradient at the full fit is minus the pair's
        direction = np.zeros(st.n)
        direction[a], direction[b] = 1.0, -1.0
        u = solve(direction)
        if float(u[a] - u[b]) > MAX_SE ** 2:
            return None
        left = self.clusters - len(np.unique(sub.cluster))
        meat = float(u @ self.meat @ u - u @ _cluster_scores(self.theta, sub) @ u)
        var = max(meat, 0.0) * (left / (left - 1) if left > 1 else 1.0)
        return _p_value(float(theta[a] - theta[b]), var, theta, self.cov, pair, rng)


_X, _W = np.polynomial.hermite_e.hermegauss(NODES)
_WEIGHTS = _W / _W.sum()


def _win_chances(d: float, var: float) -> np.ndarray:
    """The chance that A finishes above B at each quadrature node of ``d ~ N(d, var)``."""
    return 1.0 / (1.0 + np.exp(-(d + math.sqrt(var) * _X)))


def _tails(k: int, n: int, q: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """P(X >= k) and P(X <= k) for X binomial(n, q) with q mixed over ``weights``: exact sums of the pmf."""
    if n == 0:
        return 1.0, 1.0
    j = np.arange(n + 1)
    log_choose = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in j])
    qs = np.clip(q, 1e-300, 1 - 1e-16)[:, None]
    pmf = np.exp(log_choose + j * np.log(qs) + (n - j) * np.log1p(-qs))
    mixed = weights @ pmf
    return min(1.0, float(mixed[k:].sum())), min(1.0, float(mixed[:k + 1].sum()))


def _gain(theta: np.ndarray, cov: np.ndarray, tables: list[tuple[int, int, list[int], list[float]]],
          rng: np.random.Generator) -> tuple[float, float, float]:
    """One-sided p-value that the pair's places against the other players at their shared tables are this high
    or higher, simulated from the Plackett-Luce model with strengths drawn from their fitted normal distribution
    (``theta``, ``cov``: the strengths are estimates; ties do not occur in the model, observed ties count half);
    with the observed value and its expectation."""
    observed = 0.0
    expected = 0.0
    by_size: dict[int, list[tuple[int, int, list[int]]]] = defaultdict(list)
    for sa, sb, seats, returns in tables:
        by_size[len(seats)].append((sa, sb, seats))
        for s in (sa, sb):
            for o in range(len(seats)):
                if o not in (sa, sb):
                    observed += 1.0 if returns[s] > returns[o] else 0.5 if returns[s] == returns[o] else 0.0
                    expected += 1.0 / (1.0 + math.exp(theta[seats[o]] - theta[seats[s]]))
    groups = []
    for rows in by_size.values():
        games = np.arange(len(rows))
        groups.append((np.array([r[2] for r in rows]), games, np.array([r[0] for r in rows]),
                       np.array([r[1] for r in rows])))
    reached = draws = 0
    while draws < SIMULATIONS or (reached < 10 and draws < MAX_SIMULATIONS):
        strengths = rng.multivariate_normal(theta, cov, size=SIMULATIONS, method="eigh", check_valid="ignore")
        total = np.zeros(SIMULATIONS)
        for at_table, games, seat_a, seat_b in groups:
            # Plackett-Luce by Gumbel keys: strength plus Gumbel noise, sorted, is a draw of the finishing order
            keys = strengths[:, at_table] + rng.gumbel(size=(SIMULATIONS, *at_table.shape))
            below_a = (keys < keys[:, games, seat_a][:, :, None]).sum(axis=2)
            below_b = (keys < keys[:, games, seat_b][:, :, None]).sum(axis=2)
            total += (below_a + below_b - 1).sum(axis=1)  # (one of the pair is above the other: not a gain)
        reached += int(np.count_nonzero(total >= observed - 1e-9))
        draws += SIMULATIONS
    return (reached + 1) / (draws + 1), observed, expected


def league_audit(store: Store, league_id: int, scope: str = ALL, *, level: float = LEVEL) -> Audit:
    """The audit of a league's games in ``scope`` (``*``: every game), with its bots' labels."""
    labels = {b.id: b.label for b in store.bots(league_id, source=False)}
    return audit(store.outcomes(league_id, scope), level=level, labels=labels)
