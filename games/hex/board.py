"""Hex's board for the TUI: the rhombus."""
from __future__ import annotations

from rich.text import Text

from games.board import DIM, Names, Observation, seat_style, to_move

HEX_MARKS = ("x", "o")


def render_hex(obs: Observation, names: Names = None) -> Text:
    """The rhombus: row r shifted right by r half-cells; x (seat 0) joins top-bottom, o (seat 1) left-right."""
    board = [int(v) for v in obs["board"]]
    n = round(len(board) ** 0.5)
    if n * n != len(board):
        raise ValueError(f"hex board of {len(board)} cells is not square")
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = Text()
    header = "    " + " ".join(letters[c] for c in range(n))
    out.append(header + "\n", style=seat_style(0))
    for r in range(n):
        out.append(" " * r)
        out.append(f"{r + 1:>2} ", style=seat_style(1))
        out.append("\\", style=seat_style(1))
        for c in range(n):
            v = board[r * n + c]
            if v < 0:
                out.append("·", style=DIM)
            else:
                out.append(HEX_MARKS[v % 2], style=seat_style(v))
            out.append(" " if c < n - 1 else "")
        out.append("\\", style=seat_style(1))
        out.append(f" {r + 1}\n", style=seat_style(1))
    out.append(" " * (n + 3) + " ".join(letters[c] for c in range(n)) + "\n", style=seat_style(0))
    out.append("x", style=seat_style(0))
    out.append(" joins top-bottom, ")
    out.append("o", style=seat_style(1))
    out.append(" joins left-right\n")
    out.append_text(to_move(obs, names or HEX_MARKS, HEX_MARKS if names else None))
    return out
