"""What every game's Rich board shares: seat colours and the status line under the board.

Each game draws its own board (``Game.render_board``, in its package's ``board.py``) from an observation
alone, so the TUI's replay can show any step; this module is the common vocabulary. Importing it imports
Rich (the TUI's dependency): game packages import their ``board`` module only when a board is drawn.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text

Observation = Mapping[str, Any]

SEAT_STYLES = ("bold red", "bold blue", "bold yellow", "bold green")
"""Per seat (Sorry!'s colours: 0 Red, 1 Blue, 2 Yellow, 3 Green; the two-player games use the first two)."""
SEAT_NAMES = ("Red", "Blue", "Yellow", "Green")
DIM = "grey50"
TERMINAL = -4
CHANCE = -1


def seat_style(seat: int) -> str:
    return SEAT_STYLES[seat % len(SEAT_STYLES)]


Names = Sequence[str] | None


def to_move(obs: Observation, names: Names = None, marks: Names = None, styles: Names = None) -> Text:
    """The status line under every board: who moves (its name and its mark on the board), chance, or game over."""
    player = obs.get("current_player")
    if player == TERMINAL:
        return Text("game over", style="bold")
    if player == CHANCE:
        return Text("chance to move", style="italic")
    if not isinstance(player, int) or player < 0:
        return Text("")
    label = names[player] if names and player < len(names) else f"player {player}"
    if marks and player < len(marks):
        label += f" ({marks[player]})"
    style = styles[player] if styles and player < len(styles) else seat_style(player)
    return Text.assemble(Text(label, style=style), " to move")
