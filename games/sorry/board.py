"""Sorry!'s board for the TUI: the ring, safety zones, START and HOME, drawn on the geometry of
:mod:`games.sorry.render` (one layout for the text board and this one)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text

from games.board import DIM, LAST, SEAT_NAMES, SEAT_STYLES, Names, Observation, last_move, last_mover, to_move
from games.sorry.naming import FWD, HOME, SAFETY0, SORRY, SPLIT, START, SWAP, decode_split
from games.sorry.render import HOME_CELLS, SAFETY_CELLS, START_CELLS, ring_cell

SORRY_START, SORRY_HOME, SORRY_SAFETY = START, HOME, SAFETY0
SLIDES = [(15 * s + 1, 15 * s + 4, s) for s in range(4)] + [(15 * s + 9, 15 * s + 13, s) for s in range(4)]


def sorry_colours(obs: Observation) -> list[int]:
    """Board colour (0 Red .. 3 Green) of each seat: the observation's ``colors`` names when given, else
    sorry.md §7's seating (2 players sit on Red and Yellow, 3 on Red, Blue, Yellow)."""
    names = obs.get("colors")
    if names:
        lower = [n.lower() for n in SEAT_NAMES]
        return [lower.index(str(n).lower()) for n in names]
    n_seats = len(obs["pawns"])
    return {2: [0, 2], 3: [0, 1, 2]}.get(n_seats, list(range(n_seats)))


def sorry_layout() -> dict[str, Any]:
    """Where each feature is drawn on the 16 x 16 grid (the geometry of :mod:`games.sorry.render`)."""
    return {"track": {sq: ring_cell(sq) for sq in range(60)},
            "safety": {colour: list(cells) for colour, cells in enumerate(SAFETY_CELLS)},
            "home": dict(enumerate(HOME_CELLS)), "start": dict(enumerate(START_CELLS))}


_LAYOUT = sorry_layout()


def moved_pawns(obs: Observation) -> set[tuple[int, int]]:
    """(seat, pawn) of the pawns the last move named (forward, back, split, swap); empty otherwise."""
    seat, action = last_mover(obs), obs.get("last_action")
    if seat is None or not isinstance(action, int):
        return set()
    if FWD <= action < SPLIT:
        return {(seat, (action - FWD) % 4)}
    if SPLIT <= action < SWAP:
        first, _, second = decode_split(action)
        return {(seat, first), (seat, second)}
    if SWAP <= action < SORRY:
        return {(seat, (action - SWAP) >> 4)}
    return set()


def render_sorry(obs: Observation, names: Names = None) -> Text:
    """The 60-square ring with slides, each colour's safety zone, START (S) and HOME (H) counts, the card."""
    pawns = [[int(p) for p in seat] for seat in obs["pawns"]]
    colours = sorry_colours(obs)
    moved = moved_pawns(obs)
    grid: dict[tuple[int, int], tuple[str, str]] = {}
    for tri, end, colour in SLIDES:  # slides first: pawns drawn later cover them
        for sq in range(tri, end + 1):
            grid[ring_cell(sq)] = ("▶ " if sq == tri else "──" if sq < end else "─●", f"{SEAT_STYLES[colour]} dim")
    for sq in range(60):
        grid.setdefault(ring_cell(sq), ("· ", DIM))
    for colour in range(4):
        style = f"{SEAT_STYLES[colour]} dim"
        for cell in _LAYOUT["safety"][colour]:
            grid[cell] = ("░░", style)
        playing = colour in colours
        grid[_LAYOUT["home"][colour]] = ("H ", style) if playing else ("  ", "")
        grid[_LAYOUT["start"][colour]] = ("S ", style) if playing else ("  ", "")
    for seat, seat_pawns in enumerate(pawns):
        colour = colours[seat]
        style = SEAT_STYLES[colour]
        letter = SEAT_NAMES[colour][0]
        at_start = sum(1 for p in seat_pawns if p == SORRY_START)
        at_home = sum(1 for p in seat_pawns if p == SORRY_HOME)
        grid[_LAYOUT["start"][colour]] = (f"S{at_start}", style if at_start else f"{style} dim")
        grid[_LAYOUT["home"][colour]] = (f"H{at_home}", style if at_home else f"{style} dim")
        for index, p in enumerate(seat_pawns):
            look = f"{style} {LAST}" if (seat, index) in moved else f"{style} reverse"
            if 0 <= p < 60:
                grid[ring_cell(p)] = (f"{letter}{index + 1}", look)
            elif SORRY_SAFETY <= p < SORRY_HOME:
                grid[_LAYOUT["safety"][colour][p - SORRY_SAFETY]] = (f"{letter}{index + 1}", look)
    out = Text()
    for r in range(16):
        for c in range(16):
            label, style = grid.get((r, c), ("  ", ""))
            out.append(label, style=style)
            out.append(" " if c < 15 else "")
        out.append("\n")
    card = obs.get("card")
    out.append("card ", style="bold")
    out.append("-" if card is None else str(card), style="bold magenta")
    pile = obs.get("draw_pile")
    if pile is not None:
        left = sum(pile.values()) if isinstance(pile, Mapping) else sum(int(n) for n in pile)
        out.append(f"   {left} left in the pile", style=DIM)
    out.append("\n")
    colour_names = [SEAT_NAMES[c] for c in colours]
    out.append_text(last_move(obs, names or colour_names))
    out.append_text(to_move(obs, names or colour_names, colour_names if names else None,
                             [SEAT_STYLES[c] for c in colours]))
    return out
