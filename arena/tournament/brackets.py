"""Knockout and double-elimination brackets.

**Knockout.** The field, in seeding order, is placed in a bracket of the next power of two the standard way (1 and 2
can meet only in the final, 1-4 in the semi-finals, ...): round 1 is seed 1 against the last seed, 2 against the
second-last and so on, the missing entrants being byes (the top seeds go through without a game). The loser of each
match leaves; the final's winner is first, its loser second, the semi-final losers share third place, and so on.

**Double elimination.** The same winners' bracket; a bot's first lost match sends it to the losers' bracket, its
second ends its tournament. Losers' round 1 pairs the winners' round 1 losers; each even losers' round meets the
survivors with the losers dropping from the next winners' round (in reverse order every other time, so bots from
one half do not meet again at once); each odd one halves the survivors. The grand final is the winners' bracket
champion against the losers' bracket champion; when the latter wins it, both have lost once and a second final
decides (the bracket reset; ``bracket_reset = false`` makes the first final the last). Places: first, second, then
the losers' bracket's eliminations, the latest first (bots out in the same losers' round share a place).

A match's key round is one more than the latest of the matches it waits for (winners' round k is round k), so every
match's games have keys of their own and sort in an order that replays the bracket.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from arena.tournament.matches import ALL_DRAWN, Match

Settle = Callable[[Match], Match]
"""Fills a match in from its stored games (:func:`arena.tournament.matches.settle` with the league's rules)."""


def bracket_size(entrants: int) -> int:
    size = 2
    while size < entrants:
        size *= 2
    return size


def seed_positions(size: int) -> list[int]:
    """The seeds (0 first) in bracket order: 1 vs n, then the match whose winner meets it in round 2, ..."""
    order = [0]
    while len(order) < size:
        order = [x for s in order for x in (s, 2 * len(order) - 1 - s)]
    return order


@dataclass(frozen=True)
class Source:
    """Where a match's entrant comes from: a seed, or the winner or loser of an earlier match (by index)."""

    kind: str
    """``seed``, ``winner`` or ``loser``."""
    value: int


@dataclass(frozen=True)
class Node:
    label: str
    bracket: str
    """``winners``, ``losers`` or ``final`` (a knockout is all ``winners``)."""
    round: int
    sources: tuple[Source, Source]


def knockout_nodes(entrants: int, prefix: str = "R") -> list[Node]:
    """The matches of a knockout bracket for ``entrants`` seeds, round after round."""
    size = bracket_size(entrants)
    nodes: list[Node] = []
    current = [Source("seed", s) for s in seed_positions(size)]
    r = 1
    while len(current) > 1:
        nxt = []
        for k in range(0, len(current), 2):
            nodes.append(Node(f"{prefix}{r}", "winners", r, (current[k], current[k + 1])))
            nxt.append(Source("winner", len(nodes) - 1))
        current, r = nxt, r + 1
    return nodes


def double_elimination_nodes(entrants: int) -> tuple[list[Node], int]:
    """The matches of a double-elimination bracket (the grand final last) and the index of the grand final."""
    nodes = knockout_nodes(entrants, prefix="W")
    by_round: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        by_round.setdefault(n.round, []).append(i)
    last = max(by_round)

    def add(label: str, a: Source, b: Source) -> Source:
        rounds = [nodes[s.value].round for s in (a, b) if s.kind != "seed"]
        nodes.append(Node(label, "losers", max(rounds, default=0) + 1, (a, b)))
        return Source("winner", len(nodes) - 1)

    survivors: list[Source]
    if last == 1:  # two entrants: the final's loser is the losers' bracket
        survivors = [Source("loser", by_round[1][0])]
    else:
        losers = [Source("loser", i) for i in by_round[1]]
        lr = 1
        survivors = [add(f"L{lr}", losers[k], losers[k + 1]) for k in range(0, len(losers), 2)]
        for w in range(2, last + 1):
            dropping = [Source("loser", i) for i in by_round[w]]
            if w % 2 == 0:
                dropping.reverse()
            lr += 1
            survivors = [add(f"L{lr}", s, d) for s, d in zip(survivors, dropping)]
            if len(survivors) > 1:
                lr += 1
                survivors = [add(f"L{lr}", survivors[k], survivors[k + 1]) for k in range(0, len(survivors), 2)]
    champion = Source("winner", by_round[last][0])
    rounds = [nodes[s.value].round for s in (champion, survivors[0])]
    nodes.append(Node("GF", "final", max(rounds) + 1, (champion, survivors[0])))
    return nodes, len(nodes) - 1


@dataclass
class Bracket:
    """A bracket replayed from its stored games: each node's match (None while an entrant is still unknown)."""

    nodes: list[Node]
    matches: list[Match | None]
    finished: bool
    placings: list[list[int]]


def play(nodes: Sequence[Node], field: Sequence[int], settle: Settle, *, final: int | None = None,
         bracket_reset: bool = True) -> Bracket:
    """Replays the bracket of ``nodes`` for ``field`` (seeding order): every match whose entrants are known is
    settled from its games; with ``final`` (double elimination) the grand final and, when the losers' bracket
    champion won it and ``bracket_reset``, its reset."""
    rank = {b: i for i, b in enumerate(field)}
    unknown = object()
    matches: list[Match | None] = []
    nodes = list(nodes)

    def resolve(source: Source) -> object:
        if source.kind == "seed":
            return field[source.value] if source.value < len(field) else None
        m = matches[source.value]
        if m is None or not m.done:
            return unknown
        return m.winner if source.kind == "winner" else m.loser

    def order(a: int | None, b: int | None) -> tuple[int | None, int | None]:
        if a is None or (b is not None and rank[b] < rank[a]):
            return (b, a)
        return (a, b)

    i = 0
    while i < len(nodes):
        node = nodes[i]
        a, b = resolve(node.sources[0]), resolve(node.sources[1])
        if a is unknown or b is unknown:
            matches.append(None)
        else:
            pair = (cast(int | None, a), cast(int | None, b))
            bots = pair if node.label == "GF" else order(*pair)  # the winners' champion first in the final
            m = settle(Match(node.label, node.round, bots))
            if node.label == "GF" and m.note == ALL_DRAWN:  # its first bot is the winners' champion, not a seed
                m.note = "every game drawn: the winners' bracket champion (who has not lost) goes through"
            matches.append(m)
            if i == final and m.done and bracket_reset and m.winner is not None and m.winner == bots[1] \
                    and bots[0] is not None:
                nodes.append(Node("GF2", "final", node.round + 1, (Source("winner", i), Source("loser", i))))
        i += 1
    last = matches[-1]
    finished = last is not None and last.done
    placings: list[list[int]] = []
    if finished and last is not None:
        placings = [[b] for b in (last.winner, last.loser) if b is not None]
        out_by_round: dict[int, list[int]] = {}
        placed = {b for group in placings for b in group}
        for node, played in zip(nodes, matches):
            if played is None or played.loser is None or played.loser in placed:
                continue
            if final is not None and node.bracket == "winners":
                continue  # a winners' bracket loser lives on in the losers' bracket
            out_by_round.setdefault(node.round, []).append(played.loser)
        for r in sorted(out_by_round, reverse=True):
            placings.append(sorted(out_by_round[r], key=rank.__getitem__))
    return Bracket(nodes, matches, finished, placings)
