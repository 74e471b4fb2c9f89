"""Swiss: every round pairs bots with equal (or the nearest) scores who have not met, the field stays whole, and a
few rounds rank many bots.

**Standings.** A match won is 1 point, drawn ½, lost 0; a bye scores ``bye_points`` (1 unless the league says
otherwise). Ties are broken by Buchholz (the sum of the opponents' points; a bye adds nothing), then
Sonneborn-Berger (the points of the opponents beaten, plus half of those drawn), then the seeding order.

**Pairing** (each round only once the last one is finished). The bots are ranked by points, then seeding; with an
odd field the lowest-ranked bot that has had no bye gets one. The rest are paired so that, in this order of
importance: no two bots meet twice while a pairing without a rematch exists; the score gaps between partners are the
smallest possible (squared, so two gaps of one are better than one of two); within a score group the top half meets
the bottom half (1 vs n/2+1, the Dutch system's order); and, when a match has an odd number of games, a bot that
played first less often plays first. One exception to that order: with an odd number of games, two bots that both
played first (or both second) twice more than the other way do not meet, since one of them would be three off
(FIDE's absolute colour rule), even at the cost of two half-point gaps, never of a whole point's. That is a
maximum-weight perfect matching, found by networkx's blossom algorithm. With more than :data:`MATCHING_LIMIT` bots
the blossom algorithm is too slow (63 s for the whole field of 1,000 bots here; 2 s even with each bot linked to its
12 nearest neighbours only), so large fields are paired score group by score group in the Dutch order, a rematch
mended by swapping partners within the group, an odd bot floated down to the next group and a group that cannot be
paired joined to the next; what is left at the bottom is paired by the matching with the last pairs above it (a pool
that doubles until no rematch is needed).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.tournament.matches import Match

MATCHING_LIMIT = 128
"""Fields up to this size are always paired by the maximum-weight matching (0.1 s at 100 bots here)."""
POOL = 32
"""The smallest pool of bots the Dutch path hands to the matching when it is stuck at the bottom."""
BIG = 10**9


def default_rounds(entrants: int) -> int:
    """ceil(log2 n) + 1 rounds, at most n - 1: log2 n rounds are what it takes for one bot to be the only one that
    won every match; one more separates the bots just below it (and lets a single lost match be made up)."""
    if entrants < 2:
        return 0
    return min(math.ceil(math.log2(entrants)) + 1, entrants - 1)


@dataclass
class Entry:
    """One bot's Swiss record."""

    bot: int
    seed: int
    """Its place in the seeding (0 first)."""
    points: float = 0.0
    opponents: list[int] = field(default_factory=list)
    results: list[float] = field(default_factory=list)
    """Points of each match against ``opponents`` (same order)."""
    byes: int = 0
    first_seats: int = 0
    """Matches in which it played first in game 0 minus those in which it played second."""
    buchholz: float = 0.0
    sonneborn_berger: float = 0.0

    def key(self) -> tuple[float, float, float, int]:
        """The standings order (ascending)."""
        return (-self.points, -self.buchholz, -self.sonneborn_berger, self.seed)


def standings(field_: Sequence[int], rounds: Sequence[Sequence[Match]], bye_points: float = 1.0) -> list[Entry]:
    """Every bot's record after the finished matches of ``rounds``, best first."""
    entries = {b: Entry(b, i) for i, b in enumerate(field_)}
    for matches in rounds:
        for m in matches:
            if not m.done:
                continue
            a, b = m.bots
            if a is None or b is None:
                present = a if b is None else b
                if present is not None:
                    entries[present].points += bye_points
                    entries[present].byes += 1
                continue
            pa, pb = m.score
            ra = 1.0 if pa > pb else 0.0 if pb > pa else 0.5
            for bot, other, r in ((a, b, ra), (b, a, 1 - ra)):
                entries[bot].points += r
                entries[bot].opponents.append(other)
                entries[bot].results.append(r)
            entries[a].first_seats += 1
            entries[b].first_seats -= 1
    for e in entries.values():
        e.buchholz = sum(entries[o].points for o in e.opponents)
        e.sonneborn_berger = sum(entries[o].points * r for o, r in zip(e.opponents, e.results))
    return sorted(entries.values(), key=Entry.key)


def places(table: Sequence[Entry]) -> list[list[int]]:
    """Bots grouped by place: the same points and tie-breaks share one (seeding breaks no tie for a place)."""
    out: list[list[int]] = []
    last = None
    for e in table:
        key = e.key()[:3]
        if key != last:
            out.append([])
            last = key
        out[-1].append(e.bot)
    return out


def pair(table: Sequence[Entry], round_: int, odd_games: bool) -> tuple[list[tuple[int, int]], int | None]:
    """The pairings of round ``round_`` (1 first) and the bot with the bye (None with an even field).

    ``table`` is the standings; each pairing is (first, second): the bot that plays first in the match's game 0
    (the one that played first less often when ``odd_games``, else the higher-ranked in odd rounds and the other
    in even ones, so that seats alternate over a tournament)."""
    ranked = sorted(table, key=lambda e: (-e.points, e.seed))  # pairing order: points, then seeding
    bye = None
    if len(ranked) % 2:
        bye = next((e for e in reversed(ranked) if e.byes == 0), ranked[-1])
        ranked = [e for e in ranked if e is not bye]
    pairs = None if len(ranked) <= MATCHING_LIMIT else _dutch(ranked)
    if pairs is None:
        pairs = matching(ranked, odd_games)
    assert pairs is not None  # (rematches allowed: a perfect matching always exists)
    return [_seated(x, y, round_, odd_games) for x, y in pairs], (bye.bot if bye is not None else None)


def _seated(x: Entry, y: Entry, round_: int, odd_games: bool) -> tuple[int, int]:
    if odd_games and x.first_seats != y.first_seats:
        return (x.bot, y.bot) if x.first_seats < y.first_seats else (y.bot, x.bot)
    higher, lower = (x, y) if (-x.points, x.seed) <= (-y.points, y.seed) else (y, x)
    return (higher.bot, lower.bot) if round_ % 2 else (lower.bot, higher.bot)


def _groups(ranked: Sequence[Entry]) -> list[list[Entry]]:
    out: list[list[Entry]] = []
    for e in ranked:
        if out and out[-1][0].points == e.points:
            out[-1].append(e)
        else:
            out.append([e])
    return out


def matching(ranked: Sequence[Entry], odd_games: bool, rematches: bool = True) -> list[tuple[Entry, Entry]] | None:
    """The maximum-weight perfect matching of the weights in the module's docstring; rematches only if no perfect
    matching avoids them, and with ``rematches`` false, None then."""
    import networkx as nx  # start-up: only a Swiss round's pairing loads it

    position: dict[int, tuple[int, int]] = {}  # bot -> (its score group's size, its place in the group)
    for group in _groups(ranked):
        for i, e in enumerate(group):
            position[e.bot] = (len(group), i)

    def weight(x: Entry, y: Entry) -> int:
        gap = round(2 * abs(x.points - y.points))
        size, px = position[x.bot]
        _, py = position[y.bot]
        dutch = abs(abs(px - py) - size // 2) if gap == 0 else 0  # top half against bottom half
        seat = 1 if odd_games and x.first_seats == y.first_seats != 0 else 0
        # both already played first (or second) twice more than the other way: one of them would be at 3 (FIDE's
        # absolute colour rule): worth more than two half-point gaps, less than a whole point's
        lopsided = 1 if odd_games and x.first_seats * y.first_seats > 0 and \
            min(abs(x.first_seats), abs(y.first_seats)) >= 2 else 0
        return BIG - gap * gap * 1_000_000 - lopsided * 2_500_000 - dutch * 100 - seat * 10

    for allow_rematches in (False, True) if rematches else (False,):
        graph = nx.Graph()
        graph.add_nodes_from(range(len(ranked)))
        for i, x in enumerate(ranked):
            met = set(x.opponents)
            for j in range(i + 1, len(ranked)):
                y = ranked[j]
                if y.bot in met:
                    if not allow_rematches:
                        continue
                    graph.add_edge(i, j, weight=weight(x, y) - BIG // 2)
                else:
                    graph.add_edge(i, j, weight=weight(x, y))
        found = nx.max_weight_matching(graph, maxcardinality=True)
        if 2 * len(found) == len(ranked):
            pairs = [(ranked[min(i, j)], ranked[max(i, j)]) for i, j in found]
            return sorted(pairs, key=lambda p: ranked.index(p[0]))
    assert not rematches, "a complete graph of an even number of bots has a perfect matching"
    return None


def _dutch(ranked: Sequence[Entry]) -> list[tuple[Entry, Entry]] | None:
    """Score group by score group in the Dutch order. A group that cannot be paired without a rematch joins the
    next one; what is left at the bottom is paired by the matching together with the last pairs made above it
    (a pool of at least :data:`POOL` bots, doubled until no rematch is needed, the whole field at most). None only
    when even the whole field needs a rematch (the caller's matching then picks the least bad)."""
    pairs: list[tuple[Entry, Entry]] = []
    floaters: list[Entry] = []
    for group in _groups(ranked):
        members = floaters + group
        floaters = []
        if len(members) % 2:
            floaters = [members.pop()]  # the lowest-ranked floats down to the next group
        half = len(members) // 2
        top, bottom = members[:half], members[half:]
        if _mend(top, bottom):
            pairs += list(zip(top, bottom))
        else:
            floaters = members + floaters  # the whole group joins the next one
    if not floaters:
        return pairs
    size = max(POOL, 2 * len(floaters))
    while True:
        keep = max(0, len(pairs) - (size - len(floaters)) // 2)
        pool = sorted([e for p in pairs[keep:] for e in p] + floaters, key=ranked.index)
        found = matching(pool, odd_games=False, rematches=keep == 0)
        if found is not None:
            return pairs[:keep] + found
        if keep == 0:
            return None
        size *= 2


def _mend(top: list[Entry], bottom: list[Entry]) -> bool:
    """Rearranges ``bottom`` so that no ``top[k]`` meets ``bottom[k]`` again, swapping each clash with the nearest
    partner that clashes with neither; False when that fails."""
    for k in range(len(top)):
        if bottom[k].bot not in top[k].opponents:
            continue
        for d in range(1, len(bottom)):
            done = False
            for m in (k + d, k - d):
                if 0 <= m < len(bottom) and bottom[m].bot not in top[k].opponents \
                        and bottom[k].bot not in top[m].opponents:
                    bottom[k], bottom[m] = bottom[m], bottom[k]
                    done = True
                    break
            if done:
                break
        else:
            return False
    return True
