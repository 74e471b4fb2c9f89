"""Batch maximum-likelihood ratings on the Elo scale, with 95% intervals and rank ranges (docs/ratings.md).

TrueSkill (leaderboards/ratings.py) is an online filter: its numbers depend on the order games were folded in and
its sigma says little about how sure an *order* is. This module fits every game of a league at once:

- **Model.** Plackett-Luce: a game's finishing order is a sequence of choices, the winner chosen from everyone
  with probability ``exp(t_i) / sum(exp(t_k))``, the second from the rest, and so on. For two players this is
  Bradley-Terry. Ties: a draw of the last (or only) group counts as half a win each way (half points: the usual
  Bradley-Terry treatment of chess draws); a tie in front of other players uses Breslow's rule (each tied player
  is chosen from the same remaining set).
- **Fit.** Newton's method on the log-likelihood with a weak Gaussian prior (``PRIOR_ELO_SD``: it keeps an
  unbeaten bot's rating finite, like BayesElo's virtual draws), vectorised with numpy (``bincount`` over the
  stages; no Python loop over games).
- **Scale.** ``elo = t * 400 / ln 10``, centred so the bots' mean is 0: a 100 Elo gap means the stronger wins
  64% of decided two-player games.
- **Intervals.** Cluster-robust (sandwich) covariance: the games that share a seed (every seat rotation of one
  table in one round, :mod:`arena.league.schedule`) are one cluster, since luck is shared within it; the interval is
  +-1.96 standard errors. ``method="bootstrap"`` resamples clusters instead (slower; used to check the sandwich).
  Rank ranges: the 2.5th and 97.5th percentiles of each bot's rank over draws from the fitted normal.
- **Tied groups.** Neighbours in the order whose intervals overlap (transitively) share a group.
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

# The fits solve 200 x 200 systems: BLAS threads only contend for the cores (a 200 x 200 inverse took 16 ms on one
# thread and 260 ms on two on a loaded 2-core machine). Set before numpy's first import when this module is first.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ELO_PER_NAT = 400 / math.log(10)
"""Elo points per natural-log unit of strength."""
PRIOR_ELO_SD = 500.0
"""Standard deviation of the Gaussian prior on each rating, in Elo (weak: about half a game of information)."""
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Outcome:
    """One game as the fit needs it."""

    seats: Sequence[int]
    """Bot id per seat."""
    returns: Sequence[float]
    """Per seat; higher is better, equal is a tie."""
    cluster: str = ""
    """Games with the same cluster share their luck (a seed); intervals resample them together."""


@dataclass(frozen=True)
class EloRow:
    """One bot's batch rating."""

    bot: int
    elo: float
    elo_low: float
    elo_high: float
    rank_low: int
    rank_high: int
    group: int
    """1 for the top tied group, 2 for the next, ...: bots in one group cannot be told apart at 95%."""


@dataclass
class Stages:
    """The games as Plackett-Luce choices: stage s chooses ``chosen[s]`` from the bot indices ``risk[s]`` (padded
    with ``n``, an index whose strength is minus infinity) with weight ``weight[s]``."""

    n: int
    risk: np.ndarray
    chosen: np.ndarray
    weight: np.ndarray
    cluster: np.ndarray


def cluster_of(schedule_key: str) -> str:
    """A league fixture's cluster: its key without the seat rotation (round, game spec and table share a seed)."""
    return schedule_key.rsplit("|", 1)[0]


def stages(outcomes: Sequence[Outcome], bots: Sequence[int]) -> Stages:
    """Turns games into choice stages over the bot indices of ``bots`` (games with another bot are left out)."""
    index = {b: i for i, b in enumerate(bots)}
    n = len(bots)
    risk: list[list[int]] = []
    chosen: list[int] = []
    weight: list[float] = []
    cluster: list[int] = []
    clusters: dict[str, int] = {}
    width = 2
    for game in outcomes:
        if len(set(game.seats)) != len(game.seats) or any(b not in index for b in game.seats):
            continue  # a bot against itself teaches nothing
        c = clusters.setdefault(game.cluster, len(clusters))
        order = sorted(range(len(game.seats)), key=lambda s: -game.returns[s])
        groups: list[list[int]] = []
        for s in order:
            if groups and game.returns[groups[-1][0]] == game.returns[s]:
                groups[-1].append(s)
            else:
                groups.append([s])
        remaining = [index[game.seats[s]] for s in order]
        width = max(width, len(remaining))
        start = 0
        for group in groups:
            last = start + len(group) == len(remaining)
            if last and len(group) == 1:
                break
            for s in group:  # Breslow in front; half points (1/g each) for a tied last group
                risk.append(remaining[start:])
                chosen.append(index[game.seats[s]])
                weight.append(1.0 / len(group) if last else 1.0)
                cluster.append(c)
            start += len(group)
    padded = np.full((len(risk), width), n, dtype=np.int64)
    for s, members in enumerate(risk):
        padded[s, :len(members)] = members
    return Stages(n, padded, np.asarray(chosen, dtype=np.int64), np.asarray(weight, dtype=float),
                  np.asarray(cluster, dtype=np.int64))


def _probabilities(theta: np.ndarray, st: Stages) -> np.ndarray:
    ext = np.append(theta, -np.inf)[st.risk]
    ext = np.exp(ext - ext.max(axis=1, keepdims=True))
    return ext / ext.sum(axis=1, keepdims=True)


def log_likelihood(theta: np.ndarray, st: Stages, alpha: float, weights: np.ndarray | None = None) -> float:
    w = st.weight if weights is None else st.weight * weights
    ext = np.append(theta, -np.inf)[st.risk]
    top = ext.max(axis=1)
    lse = top + np.log(np.exp(ext - top[:, None]).sum(axis=1))
    return float(np.sum(w * (theta[st.chosen] - lse)) - 0.5 * alpha * theta @ theta)


def _gradient_hessian(theta: np.ndarray, st: Stages, alpha: float,
                      weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    n, k = st.n, st.risk.shape[1]
    w = st.weight if weights is None else st.weight * weights
    p = _probabilities(theta, st)
    wp = w[:, None] * p
    # (float: bincount of nothing is an int array)
    grad = np.bincount(st.chosen, weights=w, minlength=n + 1)[:n].astype(float)
    grad -= np.bincount(st.risk.ravel(), weights=wp.ravel(), minlength=n + 1)[:n]
    grad -= alpha * theta
    pairs = (st.risk[:, :, None] * (n + 1) + st.risk[:, None, :]).ravel()
    outer = (wp[:, :, None] * p[:, None, :]).ravel()
    info = -np.bincount(pairs, weights=outer, minlength=(n + 1) ** 2).reshape(n + 1, n + 1)[:n, :n].astype(float)
    info[np.diag_indices(n)] += np.bincount(st.risk.ravel(), weights=wp.ravel(), minlength=n + 1)[:n]
    info[np.diag_indices(n)] += alpha
    del k
    return grad, info  # info = minus the Hessian (positive semi-definite)


def fit(st: Stages, *, alpha: float | None = None, start: np.ndarray | None = None,
        weights: np.ndarray | None = None, tol: float = 1e-9, max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Maximum a posteriori strengths (natural units) by damped Newton; returns (theta, information matrix).

    ``alpha`` is the prior's precision (default from ``PRIOR_ELO_SD``; 0 is the plain MLE, which needs every bot
    to have won and lost). ``weights`` multiply the stages' weights (the bootstrap).
    """
    alpha = (ELO_PER_NAT / PRIOR_ELO_SD) ** 2 if alpha is None else alpha
    n = st.n
    theta = np.zeros(n) if start is None else start.copy()
    ones = np.ones((n, n)) / n
    current = log_likelihood(theta, st, alpha, weights)
    for _ in range(max_iter):
        grad, info = _gradient_hessian(theta, st, alpha, weights)
        # without a prior the likelihood is flat along (1, ..., 1): curvature there pins the mean
        step = np.linalg.solve(info + (ones if alpha == 0 else 0.0), grad)
        size = 1.0
        while True:
            trial = theta + size * step
            value = log_likelihood(trial, st, alpha, weights)
            if value >= current - 1e-12 or size < 1e-6:
                break
            size /= 2
        theta, current = trial, value
        if np.max(np.abs(size * step)) < tol:
            break
    if alpha == 0:
        theta -= theta.mean()
    _, info = _gradient_hessian(theta, st, alpha, weights)
    return theta, info


def _cluster_scores(theta: np.ndarray, st: Stages) -> np.ndarray:
    """Sum over clusters of the outer products of each cluster's score vector (the sandwich's meat), n x n."""
    n = st.n
    p = _probabilities(theta, st)
    w = st.weight
    clusters = np.concatenate([st.cluster, np.repeat(st.cluster, st.risk.shape[1])])
    bots = np.concatenate([st.chosen, st.risk.ravel()])
    values = np.concatenate([w, -(w[:, None] * p).ravel()])
    keep = bots < n
    cell = clusters[keep] * n + bots[keep]
    cells, inverse = np.unique(cell, return_inverse=True)
    sums = np.bincount(inverse, weights=values[keep])
    c_of, b_of = cells // n, cells % n
    # entries of one cluster are adjacent (cells sorted): pad each cluster's entries to a row
    starts = np.flatnonzero(np.r_[True, c_of[1:] != c_of[:-1]])
    lengths = np.diff(np.r_[starts, len(cells)])
    width = int(lengths.max()) if len(lengths) else 1
    row = np.repeat(np.arange(len(starts)), lengths)
    col = np.arange(len(cells)) - np.repeat(starts, lengths)
    idx = np.full((len(starts), width), n, dtype=np.int64)
    val = np.zeros((len(starts), width))
    idx[row, col], val[row, col] = b_of, sums
    pairs = (idx[:, :, None] * (n + 1) + idx[:, None, :]).ravel()
    outer = (val[:, :, None] * val[:, None, :]).ravel()
    return np.bincount(pairs, weights=outer, minlength=(n + 1) ** 2).reshape(n + 1, n + 1)[:n, :n]


def covariance(theta: np.ndarray, info: np.ndarray, st: Stages) -> np.ndarray:
    """Cluster-robust covariance of the centred strengths: A^-1 B A^-1 with a C/(C-1) small-sample factor."""
    n = st.n
    inv = np.linalg.pinv(info)
    meat = _cluster_scores(theta, st)
    c = len(np.unique(st.cluster))
    sandwich = inv @ meat @ inv * (c / (c - 1) if c > 1 else 1.0)
    centre = np.eye(n) - 1.0 / n
    out = centre @ sandwich @ centre
    return (out + out.T) / 2  # symmetric to the last bit (the sampler checks)


def bootstrap(theta: np.ndarray, st: Stages, replicates: int, seed: int = 0,
              alpha: float | None = None) -> np.ndarray:
    """Centred strengths refitted on ``replicates`` resamples of the clusters (with replacement): (replicates, n)."""
    rng = np.random.default_rng(seed)
    c = int(st.cluster.max()) + 1 if len(st.cluster) else 0
    out = np.empty((replicates, st.n))
    for r in range(replicates):
        counts = np.bincount(rng.integers(0, c, c), minlength=c).astype(float)
        t, _ = fit(st, alpha=alpha, start=theta, weights=counts[st.cluster], max_iter=20)
        out[r] = t - t.mean()
    return out


def tied_groups(elo: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Group numbers (1 = top) in order of ``elo``: a new group starts where no interval above the cut overlaps any
    interval below it."""
    order = np.argsort(-elo, kind="stable")
    lows = np.minimum.accumulate(low[order])  # lowest bound of anyone at or above each place
    highs = np.maximum.accumulate(high[order][::-1])[::-1]  # highest bound of anyone at or below
    cuts = np.r_[False, lows[:-1] > highs[1:]]
    groups = np.empty(len(elo), dtype=np.int64)
    groups[order] = np.cumsum(cuts) + 1
    return groups


def rank_ranges(samples: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Per bot, the (low, high) rank (1 = best) covering ``level`` of the sampled strengths."""
    ranks = np.argsort(np.argsort(-samples, axis=1), axis=1) + 1
    tail = (1 - level) / 2 * 100
    return (np.floor(np.percentile(ranks, tail, axis=0, method="lower")).astype(int),
            np.ceil(np.percentile(ranks, 100 - tail, axis=0, method="higher")).astype(int))


def rate(outcomes: Sequence[Outcome], bots: Sequence[int], *, shown: Sequence[int] | None = None,
         method: str = "sandwich", replicates: int = 200, draws: int = 2000, seed: int = 0,
         alpha: float | None = None) -> list[EloRow]:
    """Batch Elo ratings from ``outcomes`` (fitted over ``bots``; rows, rank ranges and groups for ``shown``, by
    default all of them), best first, with 95% intervals. A bot without games gets the prior (0 Elo)."""
    bots = list(bots)
    shown = bots if shown is None else list(shown)
    if not bots or not shown:
        return []
    st = stages(outcomes, bots)
    theta, info = fit(st, alpha=alpha)
    theta = theta - theta.mean()
    rng = np.random.default_rng(seed)
    if method == "bootstrap":
        samples = bootstrap(theta, st, replicates, seed, alpha)
        sd = samples.std(axis=0, ddof=1)
    elif method == "sandwich":
        cov = covariance(theta, info, st) if len(st.chosen) > 1 else np.linalg.pinv(info)
        sd = np.sqrt(np.clip(np.diag(cov), 0, None))
        samples = theta + rng.multivariate_normal(np.zeros(len(bots)), cov, size=draws, method="eigh",
                                                   check_valid="ignore")  # centred: one eigenvalue is 0 (+-1e-17)
    else:
        raise ValueError(f"unknown interval method {method!r}: sandwich or bootstrap")
    pick = np.asarray([bots.index(b) for b in shown], dtype=np.int64)
    elo, half = theta[pick] * ELO_PER_NAT, Z95 * sd[pick] * ELO_PER_NAT
    low, high = elo - half, elo + half
    rank_low, rank_high = rank_ranges(samples[:, pick])
    groups = tied_groups(elo, low, high)
    rows = [EloRow(b, float(elo[i]), float(low[i]), float(high[i]), int(rank_low[i]), int(rank_high[i]),
                   int(groups[i])) for i, b in enumerate(shown)]
    return sorted(rows, key=lambda r: -r.elo)


ELO_FIELDS = ("elo", "elo_low", "elo_high", "rank_low", "rank_high", "group")
"""What :func:`annotate` adds to a leaderboard row (``--json`` fields and CSV columns)."""


def annotate(rows: list[dict], games: Sequence[tuple[str, Sequence[int], Sequence[float]]]) -> list[dict]:
    """Adds :data:`ELO_FIELDS` to leaderboard rows (dicts with ``bot_id``) from a league's games
    (:meth:`leaderboards.store.Store.outcomes`); every bot that played is fitted, only the rows' bots are ranked."""
    outcomes = [Outcome(seats, returns, cluster_of(key)) for key, seats, returns in games]
    played = {b for o in outcomes for b in o.seats}
    # a bot without games is unrated: no Elo, no interval, no rank range (all None); it is neither fitted (its prior
    # would move the others' centre) nor ranked (it would hold "ranks 2-4" on no evidence)
    shown = [r["bot_id"] for r in rows if r["bot_id"] in played]
    by_bot = {e.bot: e for e in rate(outcomes, sorted(played), shown=shown)} if shown else {}
    for r in rows:
        e = by_bot.get(r["bot_id"])
        if e is None:
            r.update(dict.fromkeys(ELO_FIELDS))
            continue
        r.update(elo=_elo(e.elo), elo_low=_elo(e.elo_low), elo_high=_elo(e.elo_high),
                 rank_low=e.rank_low, rank_high=e.rank_high, group=e.group)
    return rows


def _elo(value: float) -> float:
    return round(value, 1) + 0.0  # + 0.0: never -0.0
