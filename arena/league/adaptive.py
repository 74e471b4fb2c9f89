"""Adaptive schedules: spend games where they change the ranking, stop when it is certain (docs/ratings.md).

A league with ``schedule = "adaptive"`` plays in batches. Before each batch the batch Elo fit
(:mod:`leaderboards.elo`) is made over every game so far, and its normal approximation (the inverse of the
information matrix, prior included) is sampled:

- **Stop** when the answer is certain at ``confidence``: with ``top = k``, the share of samples whose best k bots
  are the reported best k (the set, not its order); with ``rank_all``, the least certain neighbouring pair of the
  whole order. Or when every pairing has played all its ``games_per_pairing`` (the full round robin).
- **Choose** otherwise: a bot's relevance is ``p (1 - p)``, p the sampled probability that it is in the top k
  (every bot is relevant to a full order); a pairing's value is the relevance of its two bots times the
  information one game between them carries, ``q (1 - q)`` with q the fitted chance that one beats the other, and
  twice that across the top-k boundary. The batch takes the most valuable pairings that still have games left,
  each bot in at most ``PER_BOT`` of them. The first batch pairs every bot with a few random opponents (nothing is known
  yet).

Each decision (the batch, what it saw, why it went on or stopped) is stored (``Store.record_decision``), and a
resumed league simply decides its next batch from the stored games.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from leaderboards.elo import ELO_PER_NAT, Stages, fit  # noqa: I001 - first: one BLAS thread (see there)

if TYPE_CHECKING:
    from arena.league.config import LeagueConfig
    from arena.league.schedule import Fixture
    from leaderboards.store import Store

FIRST_OPPONENTS = 3
"""Random opponents per bot in the first batch."""
PER_BOT = 8
"""Most pairings a bot gets in one batch (keeps a batch spread over the contested bots)."""
SAMPLES = 1000
MIN_INFO = 0.02
"""A game whose fitted outcome is surer than 98:2 (q (1 - q) < 0.02: some 675 Elo apart) is not worth playing for
the ranking: it moves neither bot. When no open pairing of a contested bot is worth one, the schedule stops."""


@dataclass(frozen=True)
class StopRule:
    top: int | None = 10
    """The size of the top set to settle (None: the whole order, ``rank_all``)."""
    confidence: float = 0.95
    batch: int | None = None
    """Pairings per batch (None: the number of bots)."""


@dataclass
class Decision:
    """What one batch decided (stored as JSON)."""

    batch: int
    games: int
    """Games played before this decision."""
    certainty: float
    """The stop rule's probability now (0 before any game)."""
    stop: bool
    reason: str
    pairs: list[tuple[int, int]] = field(default_factory=list)
    """The pairings of the next batch (bot ids), each to play one more round."""
    top: list[int] = field(default_factory=list)
    """The current best bots (ids), best first (``top`` of them, or all)."""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def pair_stages(bots: Sequence[int], results: Mapping[tuple[int, int], tuple[float, float]]) -> Stages:
    """Bradley-Terry stages from per-pairing totals: ``results[(a, b)] = (points of a, points of b)`` (a draw gives
    each half a point): two weighted stages per pairing instead of one per game (fits stay fast)."""
    index = {b: i for i, b in enumerate(bots)}
    risk, chosen, weight = [], [], []
    for (a, b), (pa, pb) in results.items():
        for winner, points in ((a, pa), (b, pb)):
            if points > 0:
                risk.append((index[a], index[b]))
                chosen.append(index[winner])
                weight.append(points)
    n = len(bots)
    return Stages(n, np.asarray(risk, dtype=np.int64).reshape(-1, 2), np.asarray(chosen, dtype=np.int64),
                  np.asarray(weight, dtype=float), np.zeros(len(chosen), dtype=np.int64))


class Planner:
    """Decides batch after batch for one league. A decision is a function of the seed and what it is given alone
    (its samples come from a generator keyed by the seed and the games, its fit starts from zero), so a resumed
    league (a new planner) decides from the stored games exactly what the run that stored them decided."""

    def __init__(self, bots: Sequence[int], rule: StopRule, rounds_per_pairing: int, seed: int = 0) -> None:
        self.bots = list(bots)
        self.rule = rule
        self.rounds = rounds_per_pairing
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def decide(self, batch: int, results: Mapping[tuple[int, int], tuple[float, float]],
               rounds_played: Mapping[tuple[int, int], int], games: int, unstored: int = 0) -> Decision:
        """The next batch, or the stop. ``results`` and ``rounds_played`` are keyed by pairings (a < b);
        ``unstored``: games this run handed out that were not stored (two decisions over the same games differ)."""
        # keyed by the games, not the batch: a resumed run numbers its batches on from the stored ones
        self.rng = np.random.default_rng([self.seed, games, unstored])
        n = len(self.bots)
        k = self.rule.top if self.rule.top is not None else n
        size = self.rule.batch or n
        open_pairs = [(a, b) for i, a in enumerate(self.bots) for b in self.bots[i + 1:]
                      if rounds_played.get((a, b), 0) < self.rounds]
        if not results:
            return Decision(batch, games, 0.0, False, "first batch: random opponents",
                            self._first(open_pairs))
        st = pair_stages(self.bots, results)
        theta, info = fit(st, tol=1e-6)
        cov = np.linalg.inv(info)
        samples = self.rng.multivariate_normal(theta, cov, size=SAMPLES, method="cholesky")
        order = np.argsort(-theta, kind="stable")
        top_ids = [self.bots[i] for i in order[:k]]
        if self.rule.top is not None:
            ranks = np.argsort(np.argsort(-samples, axis=1), axis=1)
            in_top = ranks < k
            certainty = float(np.mean(np.all(in_top[:, order[:k]], axis=1)))
            p = in_top.mean(axis=0)
            relevance = p * (1 - p)
            boundary = np.zeros(n, dtype=bool)
            boundary[order[:k]] = True
        else:
            gaps = samples[:, order[:-1]] > samples[:, order[1:]]
            pairwise = gaps.mean(axis=0)
            certainty = float(pairwise.min()) if len(pairwise) else 1.0
            relevance = np.zeros(n)
            relevance[order[:-1]] += 1 - pairwise  # an uncertain neighbour pair makes both of its bots relevant
            relevance[order[1:]] += 1 - pairwise
            boundary = None
        if not open_pairs:
            return Decision(batch, games, certainty, True, "every pairing played its games (the full round robin)",
                            top=top_ids)
        if certainty >= self.rule.confidence:
            what = f"top {k} set" if self.rule.top is not None else "every neighbouring pair"
            return Decision(batch, games, certainty, True, f"{what} certain at {certainty:.3f} >= "
                            f"{self.rule.confidence}", top=top_ids)
        pairs = self._choose(open_pairs, theta, relevance, boundary, size)
        if not pairs:
            return Decision(batch, games, certainty, True, f"certainty {certainty:.3f}, but no pairing left with "
                            "games that can change the answer (the contested bots played their close opponents)",
                            top=top_ids)
        return Decision(batch, games, certainty, False, f"certainty {certainty:.3f} < {self.rule.confidence}",
                        pairs, top_ids)

    def _first(self, open_pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Every bot against ``FIRST_OPPONENTS`` random others (random perfect matchings)."""
        allowed = set(open_pairs)
        chosen: set[tuple[int, int]] = set()
        for _ in range(FIRST_OPPONENTS):
            shuffled = [self.bots[i] for i in self.rng.permutation(len(self.bots))]
            for a, b in zip(shuffled[::2], shuffled[1::2]):
                pair = (min(a, b), max(a, b))
                if pair in allowed:
                    chosen.add(pair)
        return sorted(chosen) or open_pairs[:1]

    def _choose(self, open_pairs: list[tuple[int, int]], theta: np.ndarray, relevance: np.ndarray,
                boundary: np.ndarray | None, size: int) -> list[tuple[int, int]]:
        index = {b: i for i, b in enumerate(self.bots)}
        contested = {self.bots[i] for i in np.flatnonzero(relevance > 1e-3)}
        if len(contested) < 2:  # nothing looks open, yet the rule is not met: the least settled bots play
            contested = {self.bots[i] for i in np.argsort(-relevance)[:4]}
        # pairings with a contested bot (its opponent may be settled: a game still measures the contested one)
        candidates = [(a, b) for a, b in open_pairs if a in contested or b in contested]
        if not candidates:
            return []
        ia = np.asarray([index[a] for a, _ in candidates])
        ib = np.asarray([index[b] for _, b in candidates])
        q = 1 / (1 + np.exp(theta[ib] - theta[ia]))
        value = np.where(q * (1 - q) >= MIN_INFO, (relevance[ia] + relevance[ib]) * q * (1 - q), 0.0)
        if boundary is not None:
            value *= np.where(boundary[ia] != boundary[ib], 2.0, 1.0)
        value += self.rng.random(len(value)) * 1e-9  # ties broken at random, reproducibly
        used: dict[int, int] = {}
        chosen = []
        for j in np.argsort(-value):
            if value[j] <= 1e-8:
                break
            a, b = candidates[j]
            if used.get(a, 0) < PER_BOT and used.get(b, 0) < PER_BOT:
                chosen.append((a, b))
                used[a], used[b] = used.get(a, 0) + 1, used.get(b, 0) + 1
                if len(chosen) >= size:
                    break
        return chosen


def elo_of(theta: np.ndarray) -> np.ndarray:
    return (theta - theta.mean()) * ELO_PER_NAT


def league_batches(store: Store, league_id: int, config: LeagueConfig, todo: list[Fixture]) -> Iterator[list[Fixture]]:
    """The fixtures of each next batch of an adaptive league (the runner plays one, then asks again), chosen from
    ``todo`` (the schedule's fixtures not played yet) by a :class:`Planner` over the stored games; every decision
    is stored. A pairing's next round is its lowest-keyed fixtures left of one (round, game): both seat orders.

    What a decision sees comes from the store: a pairing is open while the schedule has a fixture of it that is
    neither stored nor handed out earlier in this run (one handed out and not stored, skipped or failed, is not
    tried again until the next run), and a pairing with none left (a bot on probation or retired) is closed. So a
    resumed league decides from its stored games what the run that stored them decided, unless that run had
    fixtures it could not store: their count keys the decision too (:meth:`Planner.decide`)."""
    pool: dict[tuple[int, int], list[Fixture]] = {}
    for f in todo:
        pool.setdefault((min(f.table), max(f.table)), []).append(f)
    bots = sorted({b for pair in pool for b in pair} | {b for _, seats, _ in store.outcomes(league_id) for b in seats})
    stop = config.stop
    rule = StopRule(top=None if stop.get("rank_all") and stop.get("top") is None else stop.get("top") or 10,
                    confidence=stop.get("confidence", 0.95), batch=stop.get("batch"))
    planner = Planner(bots, rule, max(1, config.games_per_pairing // 2), seed=config.seed)
    batch = len(store.decisions(league_id))
    handed_out: set[str] = set()
    while True:
        results: dict[tuple[int, int], tuple[float, float]] = {}
        rounds: dict[tuple[int, int], set[tuple[int, str]]] = {}
        stored: set[str] = set()
        games = 0
        for key, seats, returns in store.outcomes(league_id):
            stored.add(key)
            if len(seats) != 2 or seats[0] == seats[1] or seats[0] not in bots or seats[1] not in bots:
                continue
            a, b = sorted(seats)
            pa = 1.0 if returns[seats.index(a)] > returns[seats.index(b)] else 0.5 if returns[0] == returns[1] else 0.0
            old = results.get((a, b), (0.0, 0.0))
            results[(a, b)] = (old[0] + pa, old[1] + 1 - pa)
            round_, game = key.split("|")[:2]
            rounds.setdefault((a, b), set()).add((int(round_), game))
            games += 1
        left = {pair: [f for f in fixtures if f.key not in stored and f.key not in handed_out]
                for pair, fixtures in pool.items()}
        played = {pair: len(r) for pair, r in rounds.items()}
        for i, a in enumerate(bots):
            for b in bots[i + 1:]:
                if not left.get((a, b)):  # nothing of it left to play in this run: closed
                    played[(a, b)] = planner.rounds
        decision = planner.decide(batch, results, played, games, unstored=len(handed_out - stored))
        store.record_decision(league_id, decision.to_dict())
        batch += 1
        if decision.stop:
            return
        fixtures: list[Fixture] = []
        for pair in decision.pairs:  # (an open pairing has fixtures left)
            head = left[pair][0].key.rsplit("|", 2)[0]  # round and game of its next fixtures
            fixtures += [f for f in left[pair] if f.key.rsplit("|", 2)[0] == head]
        handed_out.update(f.key for f in fixtures)
        yield sorted(fixtures, key=lambda f: f.key)
