"""A tournament as people see it (docs/tournaments.md): its bracket drawn as inline SVG, a Swiss table, its places.

:func:`tournament` reads a league's tournament once (:func:`arena.tournament.progress.current`) into a
:class:`Tournament` that every front end renders: ``arena report``'s index page and ``arena serve``'s /bracket
(the ``tournament_section`` macro of ``templates/results.html``), /api/bracket (``doc``: ``arena bracket --json``'s
document), the exports of matches and places. Names stay exact here; the SVG escapes every text it writes (like
:mod:`arena.output.pictures`: it comes as :class:`markupsafe.Markup`), the templates escape the rest.

**The drawing.** A knockout bracket runs left to right, a column per round, each match a box (both bots with their
scores, the winner's line bold on green, a bye as "bye", a match not finished as "to be played" or "playing") and a
line from each match to the one its winner plays next. Double elimination puts the winners' bracket above, the
losers' bracket below and the grand final (and its reset) at the right; a column is a round of play (a match's
schedule round), so a losers' round sits beside the winners' round it is played with. A match whose entrants are
not known yet is drawn too, each open slot saying where its entrant comes from ("winner of W1-2", "loser of W2-1").
"""
from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from arena.text import shown
from arena.tournament import brackets as bracket_rules
from arena.tournament.matches import Match, MatchRules, settle
from arena.tournament.progress import State, current, is_tournament, view

if TYPE_CHECKING:
    from leaderboards.store import League, Store

NAME = 22
"""Characters of a bot's name written in a match box (the whole name is in the box's tooltip)."""
BOX_W, ROW_H, CAPTION = 200, 18, 14
"""A match box's width, a bot's line in it, the caption above it (pixels)."""
PITCH = 2 * ROW_H + CAPTION + 12
"""Vertical room of a first-round match."""
COLUMN = BOX_W + 44
"""Horizontal room of a round."""
GAP = 28
"""Between the winners' and the losers' brackets."""
DOT, TICK, BOLD = " \u00b7 ", " \u2713", ' font-weight="bold"'


def _t(value: object) -> str:
    return html.escape(shown(value), quote=True)


def cut(name: str) -> str:
    return name if len(name) <= NAME else name[:NAME - 1] + "\u2026"


@dataclass
class Slot:
    """One drawn match: its node in the bracket, where it is, its match (None while an entrant is not known)."""

    index: int
    node: bracket_rules.Node
    match: Match | None
    number: int
    """Its place among the matches of its label (1 first): ``W2-1`` (0: its label's only match, ``GF``)."""
    x: float = 0.0
    y: float = 0.0

    @property
    def name(self) -> str:
        return f"{self.node.label}-{self.number}" if self.number else self.node.label

    @property
    def empty(self) -> bool:
        """Two empty slots of a small field: nobody plays it, nothing is drawn."""
        return self.match is not None and self.match.bots == (None, None)


def layout(state: State) -> list[Slot]:
    """Every match of a knockout or double-elimination ``state``, placed: a column per schedule round, a
    first-round match (of each bracket) below the last, a later one level with the matches its entrants come from."""
    n = len(state.entrants)
    final: int | None = None
    if state.format == "knockout":
        nodes = bracket_rules.knockout_nodes(n)
    else:
        nodes, final = bracket_rules.double_elimination_nodes(n)
    known = {(m.label, m.bots): m for matches in state.rounds for m in matches}

    def settled(m: Match) -> Match:  # the state's own match (a bye, or two empty slots, is settled here)
        found = known.get((m.label, m.bots))
        return found if found is not None else settle(m, MatchRules(()), {})

    reset = any(m.label == "GF2" for matches in state.rounds for m in matches)
    played = bracket_rules.play(nodes, state.entrants, settled, final=final, bracket_reset=reset)
    numbers: dict[str, int] = {}
    slots = []
    for i, (node, m) in enumerate(zip(played.nodes, played.matches)):
        numbers[node.label] = numbers.get(node.label, 0) + 1
        slots.append(Slot(i, node, m, numbers[node.label]))
    for s in slots:
        if numbers[s.node.label] == 1:
            s.number = 0
    leaves = {"winners": 0, "losers": 0}
    for s in slots:
        s.x = 8 + COLUMN * (s.node.round - 1)
        feeders = [slots[src.value].y for src in s.node.sources if src.kind == "winner" and
                   (slots[src.value].node.bracket == s.node.bracket or s.node.bracket == "final")]
        if s.node.label == "GF2":
            feeders = [slots[s.node.sources[0].value].y]
        if feeders:
            s.y = sum(feeders) / len(feeders)
        else:
            s.y = 8 + PITCH * leaves[s.node.bracket]
            leaves[s.node.bracket] += 1
    below = 8 + PITCH * leaves["winners"] + GAP  # the losers' bracket under the winners'
    for s in slots:
        if s.node.bracket == "losers":
            s.y += below - 8
    for s in slots:  # the finals sit between the brackets' own finals (their feeders have moved)
        if s.node.bracket == "final":
            feeders = [slots[src.value].y for src in s.node.sources if src.kind == "winner"]
            s.y = sum(feeders) / len(feeders) if s.node.label == "GF" else slots[s.node.sources[0].value].y
    return slots


def match_names(state: State) -> dict[int, str]:
    """Each match of ``state`` (by ``id()``) named as the drawing names it: ``W2-1``, ``GF`` (a bracket's numbers
    count every match of its round, those not known yet too), ``R3-2`` in Swiss (a round's pairings in order)."""
    if state.format != "swiss":
        return {id(s.match): s.name for s in layout(state) if s.match is not None}
    out = {}
    for matches in state.rounds:
        for k, m in enumerate(matches, 1):
            out[id(m)] = f"{m.label}-{k}" if len(matches) > 1 else m.label
    return out


def entrant(slots: Sequence[Slot], source: bracket_rules.Source, state: State) -> tuple[int | None, str]:
    """A slot of a match whose entrants are not all known: (the bot, when its source is decided; else None) and
    what to write when it is not."""
    if source.kind == "seed":
        return (state.entrants[source.value] if source.value < len(state.entrants) else None), "bye"
    feeder = slots[source.value]
    m = feeder.match
    if m is not None and m.done:
        return (m.winner if source.kind == "winner" else m.loser), "bye"
    return None, f"{source.kind} of {feeder.name}"


def _status(m: Match | None) -> str:
    if m is None:
        return "to be played"
    if m.is_bye:
        return "bye"
    if m.done:
        return m.note or ("draw" if m.winner is None else "")
    return "playing" if m.games else "to be played"


def bracket_svg(state: State, labels: dict[int, str], bot_href: Callable[[int], str] | None = None) -> Markup:
    """The bracket of a knockout or double-elimination ``state`` as inline SVG (``labels``: bot id -> name;
    ``bot_href``: a bot's page, linked from its name)."""
    slots = layout(state)
    drawn = [s for s in slots if not s.empty]
    width = int(max((s.x for s in drawn), default=0) + BOX_W + 8)
    height = int(max((s.y for s in drawn), default=0) + CAPTION + 2 * ROW_H + 8)
    kind = state.format.replace("_", " ")
    parts = [f'<svg class="pic bracket" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="{_t(kind)} bracket of {len(state.entrants)} entrants">']
    if state.format == "double_elimination":
        losers = [s.y for s in drawn if s.node.bracket == "losers"]
        if losers:
            parts.append(f'<text class="bracket-title" x="8" y="{min(losers) - 4:.0f}" font-size="11" '
                         f'font-style="italic">losers\u2019 bracket</text>')
    for s in drawn:  # the lines first, under the boxes: a match to the one its winner plays next
        for src in s.node.sources:
            feeder = slots[src.value] if src.kind == "winner" else None
            if feeder is None or feeder.empty or not (feeder.node.bracket == s.node.bracket or
                                                      s.node.bracket == "final"):
                continue
            x1, y1 = feeder.x + BOX_W, feeder.y + CAPTION + ROW_H
            x2, y2 = s.x, s.y + CAPTION + ROW_H
            mid = x2 - (COLUMN - BOX_W) / 2
            parts.append(f'<path class="link" d="M{x1:.0f},{y1:.0f} H{mid:.0f} V{y2:.0f} H{x2:.0f}" fill="none" '
                         'stroke="#888" stroke-width="1"/>')
    for s in drawn:
        parts.append(_box(s, slots, state, labels, bot_href))
    parts.append("</svg>")
    return Markup("".join(parts))  # (every text in it escaped by _t)


def _box(s: Slot, slots: Sequence[Slot], state: State, labels: dict[int, str],
         bot_href: Callable[[int], str] | None) -> str:
    m = s.match
    rows: list[tuple[int | None, str, str, bool]] = []  # (bot, text, score, won)
    if m is None:
        for src in s.node.sources:
            bot, where = entrant(slots, src, state)
            rows.append((bot, labels.get(bot, str(bot)) if bot is not None else where, "", False))
    else:
        for i, bot in enumerate(m.bots):
            if bot is None:
                rows.append((None, "bye", "", False))
                continue
            score = "" if m.is_bye or not m.games and not m.done else f"{m.score[i]:g}"
            rows.append((bot, labels.get(bot, str(bot)), score, m.done and m.winner == bot and not m.is_bye))
    status = _status(m)
    state_class = "bye" if m is not None and m.is_bye else "done" if m is not None and m.done else \
        "playing" if m is not None and m.games else "waiting"
    summary = f"{s.name}: " + " vs ".join(text for _, text, _, _ in rows) + \
        (f" ({', '.join(sc for _, _, sc, _ in rows)})" if all(sc for _, _, sc, _ in rows) else "") + \
        (f"; {status}" if status else "")
    out = [f'<g class="match {state_class}" data-match="{_t(s.name)}"><title>{_t(summary)}</title>',
           f'<text class="caption" x="{s.x:.0f}" y="{s.y + CAPTION - 3:.0f}" font-size="10" fill="#555">'
           f'{_t(s.name)}{DOT + _t(status) if status else ""}</text>',
           f'<rect x="{s.x:.0f}" y="{s.y + CAPTION:.0f}" width="{BOX_W}" height="{2 * ROW_H}" fill="#fff" '
           'stroke="#888"/>']
    for k, (bot, text, score, won) in enumerate(rows):
        top = s.y + CAPTION + k * ROW_H
        if won:
            out.append(f'<rect class="won" x="{s.x + 1:.0f}" y="{top + 1:.0f}" width="{BOX_W - 2}" '
                       f'height="{ROW_H - 1}" fill="#d7f0d2"/>')
        known = bot is not None
        style = BOLD if won else "" if known else ' fill="#777" font-style="italic"'
        label = (f'<text class="{"bot won" if won else "bot" if known else "open"}" x="{s.x + 6:.0f}" '
                 f'y="{top + ROW_H - 5:.0f}" font-size="12"{style}>{_t(cut(text))}{TICK if won else ""}</text>')
        if known and bot_href is not None:
            label = f'<a href="{_t(bot_href(bot))}">{label}</a>'  # type: ignore[arg-type]
        out.append(label)
        if score:
            out.append(f'<text class="score" x="{s.x + BOX_W - 6:.0f}" y="{top + ROW_H - 5:.0f}" font-size="12" '
                       f'text-anchor="end"{BOLD if won else ""}>{_t(score)}</text>')
    out.append(f'<line x1="{s.x:.0f}" x2="{s.x + BOX_W:.0f}" y1="{s.y + CAPTION + ROW_H:.0f}" '
               f'y2="{s.y + CAPTION + ROW_H:.0f}" stroke="#ddd"/></g>')
    return "".join(out)


# -- what the pages show ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SwissRow:
    """A line of the Swiss table (bots sharing points and both tie-breaks share a place)."""

    place: int
    bot: str
    bot_id: int
    points: float
    buchholz: float
    sonneborn_berger: float
    byes: int


@dataclass(frozen=True)
class Placing:
    place: int
    bots: list[str]
    bot_ids: list[int]


@dataclass
class Tournament:
    """A tournament league as its pages show it (``started`` False: no game paired yet; the rest empty)."""

    league: str
    format: str
    started: bool
    entrants: int = 0
    finished: bool = False
    figure: Markup = field(default_factory=lambda: Markup(""))
    """The bracket (knockout, double elimination): inline SVG."""
    standings: list[SwissRow] = field(default_factory=list)
    """Swiss: the table after the rounds finished."""
    rounds: list[list[dict[str, Any]]] = field(default_factory=list)
    """The rounds' matches as ``doc`` has them (label, bots, score, winner, done, games, note)."""
    placings: list[Placing] = field(default_factory=list)
    doc: dict[str, Any] = field(default_factory=dict)
    """``arena bracket --json``'s document (/api/bracket)."""
    state: State | None = None
    labels: dict[int, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.format.replace("_", " ")

    @property
    def progress(self) -> str:
        """A short token that changes whenever a game of the tournament is stored or a match ends (the server's
        page reloads its bracket when /api/bracket's document gives another: bracket.js computes the same)."""
        return signature(self.doc)


def signature(doc: dict[str, Any]) -> str:
    """Games stored, matches known, matches done, finished: of a :func:`arena.tournament.progress.view` document."""
    matches = [m for r in doc.get("rounds", []) for m in r]
    games = sum(len(m.get("games", [])) for m in matches)
    done = sum(1 for m in matches if m.get("done"))
    return f"{games}-{len(matches)}-{done}-{1 if doc.get('finished') else 0}"


def swiss_rows(state: State, labels: dict[int, str]) -> list[SwissRow]:
    rows: list[SwissRow] = []
    last: tuple[float, float, float] | None = None
    place = 0
    for i, e in enumerate(state.standings):
        key = (e.points, e.buchholz, e.sonneborn_berger)
        if key != last:
            place, last = i + 1, key
        rows.append(SwissRow(place, labels.get(e.bot, str(e.bot)), e.bot, e.points, e.buchholz,
                             e.sonneborn_berger, e.byes))
    return rows


def placings(state: State, labels: dict[int, str]) -> list[Placing]:
    out, place = [], 1
    for group in state.placings:
        out.append(Placing(place, [labels.get(b, str(b)) for b in group], list(group)))
        place += len(group)
    return out


def tournament(store: Store, league: League, bot_href: Callable[[int], str] | None = None, *,
               draw: bool = True) -> Tournament | None:
    """The tournament of ``league`` as its pages show it; None when the league is not a tournament. ``draw``
    False: no SVG (an export)."""
    if not is_tournament(league.config):
        return None
    fmt = str(league.config["format"])
    state = current(store, league.id, league.config)
    if state is None:
        return Tournament(league.name, fmt, False,
                          doc={"format": fmt, "finished": False, "rounds": [], "placings": []})
    labels = {b.id: b.label for b in store.bots(league.id, source=False)}
    doc = view(state, labels)
    figure = Markup("") if fmt == "swiss" or not draw else bracket_svg(state, labels, bot_href)
    return Tournament(league.name, fmt, True, len(state.entrants), state.finished, figure,
                      swiss_rows(state, labels) if fmt == "swiss" else [], doc["rounds"],
                      placings(state, labels), doc, state, labels)
