"""``str(state)`` of Sorry!: the 16x16 ring of 60 squares, each colour's safety zone, START and HOME,
drawn from the observation dict (so a front end can reuse it)."""
from __future__ import annotations

from typing import Any

from games.sorry.naming import COLOURS, HOME, SAFETY0, START, square_name

_ARROWS = (">", "v", "<", "^")    # the clockwise direction along each side
# Inner cells of each colour (0 Red .. 3 Green): safety S0..S4 (from the turn square inwards), HOME, and START
# (by E_s). The one layout of the board: the text board here and the TUI's (games.sorry.board) both use it.
SAFETY_CELLS = (
    [(1 + i, 2) for i in range(5)],
    [(2, 14 - i) for i in range(5)],
    [(14 - i, 13) for i in range(5)],
    [(13, 1 + i) for i in range(5)],
)
HOME_CELLS = ((6, 2), (2, 9), (9, 13), (13, 6))
START_CELLS = ((1, 4), (4, 14), (14, 11), (11, 1))


def ring_cell(square: int) -> tuple[int, int]:
    """(row, col) of a track square: 0 is the top-left corner, numbering runs clockwise."""
    side, off = divmod(square, 15)
    return ((0, off), (off, 15), (15, 15 - off), (15 - off, 0))[side]


def _empty_ring() -> list[list[str]]:
    grid = [["   "] * 16 for _ in range(16)]
    for sq in range(60):
        side, off = divmod(sq, 15)
        mark = " . "
        if off in (1, 9):
            mark = f" {_ARROWS[side]} "
        elif 1 < off <= 4 or 9 < off <= 13:
            mark = " - "
        r, c = ring_cell(sq)
        grid[r][c] = mark
    return grid


_RING = _empty_ring()


def render(obs: dict[str, Any]) -> str:
    grid = [list(row) for row in _RING]
    legend = []
    for player, (name, pawns) in enumerate(zip(obs["colors"], obs["pawns"])):
        colour = COLOURS.index(name)
        letter = name[0].upper()
        for r, c in SAFETY_CELLS[colour]:
            grid[r][c] = " : "
        n_start = sum(p == START for p in pawns)
        n_home = sum(p == HOME for p in pawns)
        r, c = START_CELLS[colour]
        grid[r][c] = f"{letter.lower()}{n_start} "
        r, c = HOME_CELLS[colour]
        grid[r][c] = f"{letter}^{n_home}"
        for k, p in enumerate(pawns):
            if 0 <= p < SAFETY0:
                r, c = ring_cell(p)
                grid[r][c] = f"{letter}{k} "
            elif SAFETY0 <= p < HOME:
                r, c = SAFETY_CELLS[colour][p - SAFETY0]
                grid[r][c] = f"{letter}{k} "
        where = ", ".join(f"{k}:{square_name(p)}" for k, p in enumerate(pawns))
        legend.append(f"  player {player} {name:<6} START {n_start}  HOME {n_home}  pawns {where}")
    lines = ["".join(row).rstrip() for row in grid]
    lines.append("  (R0 = red pawn 0; r2 = 2 red pawns in START; R^1 = 1 red pawn HOME; ':' safety;"
                 " '>' slide triangle, '-' slide)")
    lines.extend(legend)
    turn = obs["turn"]
    who = f"player {turn} ({obs['colors'][turn]})"
    card = obs["card"]
    if obs.get("winner") is not None:
        status = f"player {obs['winner']} ({obs['colors'][obs['winner']]}) won"
    elif card is None:
        extra = " (extra draw after a 2)" if obs.get("extra_draw") else ""
        status = f"{who} draws a card{extra}"
    else:
        status = f"{who} plays card {'Sorry!' if card == 13 else card}"
    lines.append(f"  {status}; draw pile {obs['draw_pile_size']} cards")
    return "\n".join(lines)
