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


LAST = "on yellow"
"""Added to the style of what the last move changed. A replay adds to the observation it draws ``last_action``
(the action that led here), ``last_player`` (who made it; CHANCE for a chance outcome) and ``last_move`` (its
name, as the game names it); each game's board marks what that move changed."""


def last_move(obs: Observation, names: Names = None) -> Text:
    """``last move: alice: take 3`` (highlighted) under a board drawn in a replay, else nothing."""
    label = obs.get("last_move")
    if not isinstance(label, str):
        return Text("")
    player = obs.get("last_player")
    who = "chance" if player == CHANCE else names[player] if isinstance(player, int) and names and \
        0 <= player < len(names) else f"player {player}"
    return Text.assemble("last move: ", (f"{who}: {label}", f"bold {LAST}"), "\n")


def last_mover(obs: Observation) -> int | None:
    """The seat that made the last move, None without one (not a replay, or a chance outcome)."""
    player = obs.get("last_player")
    return player if isinstance(player, int) and player >= 0 and "last_action" in obs else None


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
