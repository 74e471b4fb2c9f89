"""Double Step's board for the TUI: one lane per seat."""
from __future__ import annotations

from rich.text import Text

from games.board import DIM, LAST, Names, Observation, last_move, last_mover, seat_style, to_move

LANE_MAX_CELLS = 30
"""Longer lanes are drawn to scale in this many cells."""


def render_doublestep(obs: Observation, names: Names = None) -> Text:
    """One lane per seat: the stone, the squares still to go and the goal."""
    positions = [int(p) for p in obs["positions"]]
    lengths = [int(n) for n in obs["lengths"]]
    out = Text()
    # each lane named by its player when the names are known (a replay), else by its seat
    labels = [str(names[seat]) if names and seat < len(names) else f"lane {seat}" for seat in range(len(positions))]
    pad = max(len(label) for label in labels) if labels else 0
    for seat, (pos, length) in enumerate(zip(positions, lengths)):
        cells = min(length, LANE_MAX_CELLS)
        at = pos * cells // length if length else 0  # to scale when the lane is long
        out.append(f"{labels[seat]:<{pad}} ", style=seat_style(seat))
        for i in range(cells + 1):
            if i == at:
                out.append("●", style=seat_style(seat) + (f" {LAST}" if seat == last_mover(obs) else ""))
            elif i == cells:
                out.append("⚑", style="bold")
            else:
                out.append("·" if i > at else "─", style=DIM)
            if i < cells:
                out.append(" ")
        out.append(f"  {pos}/{length}", style="bold" if pos >= length else "")
        out.append("\n")
    out.append_text(last_move(obs, names))
    out.append_text(to_move(obs, names))
    return out
