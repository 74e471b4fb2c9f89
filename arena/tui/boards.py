"""Board renderers: one per game, each drawing ``state.observation()`` as a rich :class:`~rich.text.Text`.

They read only the public observation fields fixed by DESIGN.md (never a state's internals), so the replay
viewer works on any state rebuilt from (spec, history) and the tests can feed hand-made positions.
:func:`render` dispatches on the game's registry name.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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


def _to_move(obs: Observation, names: Names = None, marks: Names = None, styles: Names = None) -> Text:
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


# -- Nim ---------------------------------------------------------------------------------------------
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
    if pile > drawn:
        out.append(f"... and {pile - drawn} more\n", style=DIM)
    if pile == 0:
        out.append("(empty)\n", style=DIM)
    if obs.get("coin_pending"):
        out.append("coin flip pending\n", style="italic")
    out.append_text(_to_move(obs, names))
    return out


# -- Double Step -------------------------------------------------------------------------------------
LANE_MAX_CELLS = 30
"""Longer lanes are drawn to scale in this many cells."""


def render_doublestep(obs: Observation, names: Names = None) -> Text:
    """One lane per seat: the stone, the squares still to go and the goal."""
    positions = [int(p) for p in obs["positions"]]
    lengths = [int(n) for n in obs["lengths"]]
    out = Text()
    for seat, (pos, length) in enumerate(zip(positions, lengths)):
        cells = min(length, LANE_MAX_CELLS)
        at = pos * cells // length if length else 0  # to scale when the lane is long
        out.append(f"lane {seat} ", style=seat_style(seat))
        for i in range(cells + 1):
            if i == at:
                out.append("●", style=seat_style(seat))
            elif i == cells:
                out.append("⚑", style="bold")
            else:
                out.append("·" if i > at else "─", style=DIM)
            if i < cells:
                out.append(" ")
        out.append(f"  {pos}/{length}", style="bold" if pos >= length else "")
        out.append("\n")
    out.append_text(_to_move(obs, names))
    return out


# -- Hex ---------------------------------------------------------------------------------------------
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
    out.append_text(_to_move(obs, names or HEX_MARKS, HEX_MARKS if names else None))
    return out


# -- Colosseum ---------------------------------------------------------------------------------------
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
                    out.append(f" {COLOSSEUM_MARKS[seat % 2]} ", style=f"{seat_style(seat)} reverse")
        out.append("\n")
    out.append(f"max step {obs.get('max_step', '?')}", style=DIM)
    scores = obs.get("scores")
    if scores:
        out.append("   scores ", style=DIM)
        for seat, score in enumerate(scores):
            out.append(f"{COLOSSEUM_MARKS[seat % 2]} {score} ", style=seat_style(seat))
    out.append("\n")
    out.append_text(_to_move(obs, names or COLOSSEUM_MARKS, COLOSSEUM_MARKS if names else None))
    return out


# -- Sorry! ------------------------------------------------------------------------------------------
SORRY_START, SORRY_HOME, SORRY_SAFETY = -1, 65, 60
SLIDES = [(15 * s + 1, 15 * s + 4, s) for s in range(4)] + [(15 * s + 9, 15 * s + 13, s) for s in range(4)]


def _track_cell(square: int) -> tuple[int, int]:
    """Track square 0..59 -> (row, col) on the 16 x 16 ring: Red's side along the top, then clockwise."""
    side, offset = divmod(square, 15)
    return [(0, offset), (offset, 15), (15, 15 - offset), (15 - offset, 0)][side]


def _inward(square: int, steps: int) -> tuple[int, int]:
    """The cell ``steps`` squares in from track ``square``, perpendicular to its side."""
    r, c = _track_cell(square)
    dr, dc = [(1, 0), (0, -1), (-1, 0), (0, 1)][square // 15]
    return r + dr * steps, c + dc * steps


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
    """Where each feature is drawn on the 16 x 16 grid (exposed for the tests)."""
    layout: dict[str, Any] = {"track": {sq: _track_cell(sq) for sq in range(60)}, "safety": {}, "home": {},
                              "start": {}}
    for colour in range(4):
        turn, exit_ = 15 * colour + 2, 15 * colour + 4
        layout["safety"][colour] = [_inward(turn, i + 1) for i in range(5)]
        layout["home"][colour] = _inward(turn, 6)
        layout["start"][colour] = _inward(exit_, 1)
    return layout


_LAYOUT = sorry_layout()


def render_sorry(obs: Observation, names: Names = None) -> Text:
    """The 60-square ring with slides, each colour's safety zone, START (S) and HOME (H) counts, the card."""
    pawns = [[int(p) for p in seat] for seat in obs["pawns"]]
    colours = sorry_colours(obs)
    grid: dict[tuple[int, int], tuple[str, str]] = {}
    for tri, end, colour in SLIDES:  # slides first: pawns drawn later cover them
        for sq in range(tri, end + 1):
            grid[_track_cell(sq)] = ("▶ " if sq == tri else "──" if sq < end else "─●", f"{SEAT_STYLES[colour]} dim")
    for sq in range(60):
        grid.setdefault(_track_cell(sq), ("· ", DIM))
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
            if 0 <= p < 60:
                grid[_track_cell(p)] = (f"{letter}{index + 1}", f"{style} reverse")
            elif SORRY_SAFETY <= p < SORRY_HOME:
                grid[_LAYOUT["safety"][colour][p - SORRY_SAFETY]] = (f"{letter}{index + 1}", f"{style} reverse")
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
    out.append_text(_to_move(obs, names or colour_names, colour_names if names else None,
                             [SEAT_STYLES[c] for c in colours]))
    return out


RENDERERS: dict[str, Callable[..., Text]] = {
    "nim": render_nim,
    "doublestep": render_doublestep,
    "hex": render_hex,
    "colosseum": render_colosseum,
    "sorry": render_sorry,
}


def render(game_name: str, obs: Observation, names: Names = None) -> Text:
    """Draws ``obs`` (an observation of game ``game_name``); ``names`` are the players per seat.
    Unknown games fall back to the raw fields."""
    renderer = RENDERERS.get(game_name)
    if renderer is None:
        return Text("\n".join(f"{k}: {v}" for k, v in obs.items()))
    return renderer(obs, names)
