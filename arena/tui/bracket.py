"""The dashboard's Bracket tab: a tournament (:class:`arena.output.brackets.Tournament`) as text, round by round.

A bracket's rounds come in play order (a losers' round after the winners' round it is played with), every match in
them, those whose entrants are not known yet too (an open slot says where its entrant comes from, as the drawn
bracket does: ``winner of R1-4``); a Swiss tournament's rounds, then its table (place, bot, points, Buchholz,
Sonneborn-Berger, byes); then the places once it is finished. Built on the poller's thread into a
:class:`rich.text.Text`: every name goes in through :func:`arena.text.shown` as plain text, never as markup.
"""
from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from arena.output.brackets import Slot, Tournament, cut, entrant, layout
from arena.text import shown
from arena.tournament.brackets import Source
from arena.tournament.matches import Match, round_title
from arena.tournament.progress import State

KIND = {"winners": 0, "losers": 1, "final": 2}
WON = "bold green"


def _status(m: Match | None) -> str:
    if m is None:
        return "to be played"
    if m.is_bye:
        return "bye"
    if not m.done:
        return "playing" if m.games else "to be played"
    return m.note or ("draw" if m.winner is None else "")


def _line(name: str, sides: Sequence[tuple[str, str, bool]], score: str, status: str, width: int) -> Text:
    """``  W2-1  A          2 - 1  B  status``: each side (text, style, known)."""
    line = Text(f"  {name:<6} ")
    (a, a_style, _), (b, b_style, _) = sides
    line.append(_mark(a, a_style).ljust(width + 2), style=a_style)
    line.append(f"  {score:^9}  ")
    line.append(_mark(b, b_style).ljust(width + 2), style=b_style)
    if status:
        line.append(f"  {status}", style="italic")
    return line


def _mark(name: str, style: str) -> str:
    """A name cut to fit, and the winner's ticked (the colour alone says nothing on a monochrome terminal)."""
    return cut(name) + (" \u2713" if style == WON else "")


def _side(bot: int | None, labels: dict[int, str], won: bool, missing: str) -> tuple[str, str, bool]:
    if bot is None:
        return missing, "italic grey50", False
    return shown(labels.get(bot, str(bot))), WON if won else "", True


def _open(slots: Sequence[Slot], src: Source, state: State, labels: dict[int, str]) -> tuple[str, str, bool]:
    """A side of a match not known yet: its bot once its feeder is decided, else where it comes from."""
    bot, where = entrant(slots, src, state)
    return _side(bot, labels, False, where)


def bracket_text(t: Tournament) -> Text:
    """The whole tab's text."""
    out = Text()
    out.append(f"{t.kind.capitalize()}", style="bold")
    if not t.started or t.state is None:
        out.append(": not started (no match paired yet)\n")
        return out
    out.append(f", {t.entrants} entrants: {'finished' if t.finished else 'in progress'}\n")
    state, labels = t.state, t.labels
    width = min(max((len(shown(n)) for n in labels.values()), default=4), 22)
    every: list[Slot] = []
    rounds: list[tuple[str, list[tuple[str, Match | None, Slot | None]]]] = []
    if t.format == "swiss":
        for matches in state.rounds:
            rounds.append((matches[0].label, [(f"{m.label}-{k}" if len(matches) > 1 else m.label, m, None)
                                              for k, m in enumerate(matches, 1)]))
    else:
        every = layout(state)
        by_label: dict[str, list[Slot]] = {}
        for slot in every:
            if not slot.empty:
                by_label.setdefault(slot.node.label, []).append(slot)
        order = sorted(by_label, key=lambda k: (by_label[k][0].node.round, KIND[by_label[k][0].node.bracket]))
        rounds = [(k, [(slot.name, slot.match, slot) for slot in by_label[k]]) for k in order]
    for label, entries in rounds:
        out.append(f"\n{round_title(label)}\n", style="italic")
        for name, m, drawn in entries:
            if m is None and drawn is not None:  # entrants not all known: where each comes from
                out.append_text(_line(name, [_open(every, src, state, labels) for src in drawn.node.sources], "",
                                      "to be played", width))
            elif m is not None and m.is_bye:
                bot = m.bots[0] if m.bots[0] is not None else m.bots[1]
                out.append_text(_line(name, [_side(bot, labels, False, ""), ("bye", "italic", False)], "", "",
                                      width))
            elif m is not None:
                sa, sb = m.score
                score = f"{sa:g} - {sb:g}" if m.games or m.done else ""
                sides = [_side(b, labels, m.done and m.winner == b, "") for b in m.bots]
                out.append_text(_line(name, sides, score, _status(m), width))
            out.append("\n")
    if t.standings:
        out.append("\nstandings\n", style="italic")
        out.append(f"  {'place':>5}  {'bot':<{width}}  {'points':>6}  {'Buchholz':>8}  {'S-B':>6}  {'byes':>4}\n",
                   style="bold")
        for r in t.standings:
            out.append(f"  {r.place:>5}  ")
            out.append(cut(shown(r.bot)).ljust(width))
            out.append(f"  {r.points:>6g}  {r.buchholz:>8g}  {r.sonneborn_berger:>6g}  {r.byes:>4}\n")
    out.append("\nplaces\n", style="italic")
    if not t.placings:
        out.append("  once the tournament is finished\n")
    for p in t.placings:
        out.append(f"  {p.place}. ")
        out.append(", ".join(shown(n) for n in p.bots), style="bold" if p.place == 1 else "")
        out.append("\n")
    return out
