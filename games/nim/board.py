"""Nim's board for the TUI: the pile as counters."""
from __future__ import annotations

from rich.text import Text

from games.board import DIM, LAST, Names, Observation, last_move, last_mover, seat_style, to_move

NIM_MAX_DRAWN = 200
"""Counters drawn one by one; a larger pile is shown as a number plus the first NIM_MAX_DRAWN."""


def render_nim(obs: Observation, names: Names = None, width: int = 50) -> Text:
    """The pile as counters in groups of five, with the move rule and the coin state."""
    pile = int(obs["pile"])
    k = obs.get("k")
    out = Text()
    out.append("pile ", style="bold")
    out.append(f"{pile}", style="bold cyan")
    if k is not None:
        out.append(f"   take 1-{k}", style=DIM)
    out.append("\n")
    drawn = min(pile, NIM_MAX_DRAWN)
    groups = ["●" * min(5, drawn - i) for i in range(0, drawn, 5)]
    per_line = max(1, (width + 1) // 6)
    for i in range(0, len(groups), per_line):
        out.append(" ".join(groups[i:i + per_line]) + "\n", style="cyan")
    taken = int(obs["last_action"]) if last_mover(obs) is not None else 0  # a bot's take (not the coin)
    if 0 < taken <= NIM_MAX_DRAWN:
        out.append("○" * taken, style=f"{seat_style(last_mover(obs) or 0)} {LAST}")
        out.append(" taken\n", style=DIM)
    if pile > drawn:
        out.append(f"... and {pile - drawn} more\n", style=DIM)
    if pile == 0:
        out.append("(empty)\n", style=DIM)
    if obs.get("coin_pending"):
        out.append("coin flip pending\n", style="italic")
    out.append_text(last_move(obs, names))
    out.append_text(to_move(obs, names))
    return out
