"""Hex's board for the TUI: the rhombus."""
from __future__ import annotations

from collections import deque

from rich.text import Text

from games.board import DIM, Names, Observation, seat_style, to_move
from games.hex.reference import neighbours

HEX_MARKS = ("x", "o")


def winning_path(board: list[int], n: int) -> set[int]:
    """The cells of a shortest chain of the winner's stones joining its two sides (empty while nobody has won):
    seat 0 joins the top and bottom rows, seat 1 the left and right columns."""
    nbrs = neighbours(n)
    for seat in (0, 1):
        start = [c for c in range(n * n) if board[c] == seat and (c < n if seat == 0 else c % n == 0)]
        parent: dict[int, int | None] = {c: None for c in start}
        queue = deque(start)
        while queue:
            cell = queue.popleft()
            if (cell >= n * n - n) if seat == 0 else (cell % n == n - 1):
                path = set()
                at: int | None = cell
                while at is not None:
                    path.add(at)
                    at = parent[at]
                return path
            for nb in nbrs[cell]:
                if board[nb] == seat and nb not in parent:
                    parent[nb] = cell
                    queue.append(nb)
    return set()


def render_hex(obs: Observation, names: Names = None) -> Text:
    """The rhombus: row r shifted right by r half-cells; x (seat 0) joins top-bottom, o (seat 1) left-right."""
    board = [int(v) for v in obs["board"]]
    n = round(len(board) ** 0.5)
    if n * n != len(board):
        raise ValueError(f"hex board of {len(board)} cells is not square")
    letters = "abcdefghijklmnopqrstuvwxyz"
    path = winning_path(board, n)
    last = obs.get("last_action")  # a replay passes the action that led here: its stone is highlighted
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
                style = seat_style(v) + (" underline bold" if r * n + c in path else "") + \
                    (" on yellow" if last == r * n + c else "")
                out.append(HEX_MARKS[v % 2], style=style)
            out.append(" " if c < n - 1 else "")
        out.append("\\", style=seat_style(1))
        out.append(f" {r + 1}\n", style=seat_style(1))
    out.append(" " * (n + 3) + " ".join(letters[c] for c in range(n)) + "\n", style=seat_style(0))
    out.append("x", style=seat_style(0))
    out.append(" joins top-bottom, ")
    out.append("o", style=seat_style(1))
    out.append(" joins left-right\n")
    if path:
        out.append("the winning chain is underlined\n", style="underline")
    if isinstance(last, int) and 0 <= last < n * n:
        out.append(f"last move {letters[last % n]}{last // n + 1} highlighted\n")
    out.append_text(to_move(obs, names or HEX_MARKS, HEX_MARKS if names else None))
    return out
