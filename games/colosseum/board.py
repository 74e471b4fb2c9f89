"""Colosseum's board for the TUI: the grid with every wall."""
from __future__ import annotations

from rich.text import Text

from games.board import DIM, LAST, Names, Observation, last_move, last_mover, seat_style, to_move

UP, RIGHT, DOWN, LEFT = range(4)
_JUNCTIONS = {  # (up, right, down, left) -> box-drawing character
    (0, 0, 0, 0): "·", (1, 0, 1, 0): "│", (0, 1, 0, 1): "─", (0, 1, 1, 0): "┌", (0, 0, 1, 1): "┐",
    (1, 1, 0, 0): "└", (1, 0, 0, 1): "┘", (1, 1, 1, 0): "├", (1, 0, 1, 1): "┤", (0, 1, 1, 1): "┬",
    (1, 1, 0, 1): "┴", (1, 1, 1, 1): "┼", (1, 0, 0, 0): "╵", (0, 1, 0, 0): "╶", (0, 0, 1, 0): "╷",
    (0, 0, 0, 1): "╴",
}
COLOSSEUM_MARKS = ("A", "B")


def render_colosseum(obs: Observation, names: Names = None) -> Text:
    """The M x M grid with every wall (border included); players A (seat 0) and B (seat 1)."""
    size = int(obs["size"])
    walls = obs["walls"]
    where = {(int(p[0]), int(p[1])): seat for seat, p in enumerate(obs["positions"])}
    moved = divmod(int(obs["last_action"]) // 4, size) if last_mover(obs) is not None else None

    def horizontal(i: int, j: int) -> bool:  # the edge above row i (below row i-1), column j
        if not 0 <= j < size:
            return False
        return bool((i < size and walls[i][j][UP]) or (i > 0 and walls[i - 1][j][DOWN]))

    def vertical(i: int, j: int) -> bool:  # the edge left of column j (right of column j-1), row i
        if not 0 <= i < size:
            return False
        return bool((j < size and walls[i][j][LEFT]) or (j > 0 and walls[i][j - 1][RIGHT]))

    out = Text()
    for i in range(size + 1):
        for j in range(size + 1):
            key = (int(vertical(i - 1, j)), int(horizontal(i, j)), int(vertical(i, j)), int(horizontal(i, j - 1)))
            out.append(_JUNCTIONS[key], style="bold" if any(key) else DIM)
            if j < size:
                out.append("───" if horizontal(i, j) else "   ", style="bold")
        out.append("\n")
        if i == size:
            break
        for j in range(size + 1):
            out.append("│" if vertical(i, j) else " ", style="bold")
            if j < size:
                seat = where.get((i, j))
                if seat is None:
                    out.append("   ")
                else:
                    out.append(f" {COLOSSEUM_MARKS[seat % 2]} ", style=f"{seat_style(seat)} " +
                               (f"bold {LAST}" if (i, j) == moved else "reverse"))
        out.append("\n")
    out.append(f"max step {obs.get('max_step', '?')}", style=DIM)
    scores = obs.get("scores")
    if scores:
        out.append("   scores ", style=DIM)
        for seat, score in enumerate(scores):
            out.append(f"{COLOSSEUM_MARKS[seat % 2]} {score} ", style=seat_style(seat))
    out.append("\n")
    out.append_text(last_move(obs, names or COLOSSEUM_MARKS))
    out.append_text(to_move(obs, names or COLOSSEUM_MARKS, COLOSSEUM_MARKS if names else None))
    return out
