"""``arena bench tournament``: pairing a Swiss round of 1,000 bots (the goal: under 1 s on 2 cores).

A Swiss tournament of ``BOTS`` simulated entrants (seeded results: 45% first bot wins, 45% second, 10% draws; one
game a match, so seats matter) is paired round after round by :func:`arena.tournament.swiss.pair` (its Dutch path
for a field this size); the record is the slowest round's pairing, beside the maximum-weight matching of the whole
field (networkx's blossom algorithm, what the Dutch path stands in for) on the same last round, measured in the
same run. The rounds' rematches are counted (there must be none).
"""
from __future__ import annotations

import random
import time
from collections.abc import Iterable

from arena.bench import Record, cost
from arena.tournament import swiss
from arena.tournament.matches import Match, Played

BOTS = 1000
QUICK_BOTS = 200


def _result(rng: random.Random) -> tuple[float, float]:
    x = rng.random()
    return (1.0, 0.0) if x < 0.45 else (0.0, 1.0) if x < 0.9 else (0.5, 0.5)


def simulate(bots: int, seed: int = 0) -> tuple[list[float], list[list[Match]], int]:
    """Pairs and plays (simulated) every round; returns each round's pairing time, the rounds, and the rematches."""
    rng = random.Random(seed)
    field = list(range(bots))
    rounds: list[list[Match]] = []
    times, met, rematches = [], set(), 0
    for r in range(1, swiss.default_rounds(bots) + 1):
        started = time.perf_counter()
        pairs, bye = swiss.pair(swiss.standings(field, rounds), r, odd_games=True)
        times.append(time.perf_counter() - started)
        matches = []
        for a, b in pairs:
            rematches += (min(a, b), max(a, b)) in met
            met.add((min(a, b), max(a, b)))
            pts = _result(rng)
            winner = a if pts[0] > pts[1] else b if pts[1] > pts[0] else None
            matches.append(Match(f"R{r}", r, (a, b), [Played(0, 0, pts)], True, winner))
        if bye is not None:
            matches.append(Match(f"R{r}", r, (bye, None), done=True, winner=bye))
        rounds.append(matches)
    return times, rounds, rematches


def run(quick: bool = False) -> Iterable[Record]:
    bots = QUICK_BOTS if quick else BOTS
    times, rounds, rematches = simulate(bots)
    table = swiss.standings(list(range(bots)), rounds[:-1])
    ranked = sorted(table, key=lambda e: (-e.points, e.seed))
    if len(ranked) % 2:
        ranked = ranked[:-1]
    started = time.perf_counter()
    swiss.matching(ranked, odd_games=True)  # the whole field's maximum-weight matching, for comparison
    matching = time.perf_counter() - started
    yield cost("tournament", f"swiss round pairing, {bots} bots (slowest of {len(times)} rounds)", max(times), "s",
               "networkx max-weight matching of the whole field", matching,
               note=f"goal: under 1 s; rematches in {len(times)} rounds: {rematches}",
               details={"rounds": float(len(times)), "mean_s": sum(times) / len(times),
                        "rematches": float(rematches)})
