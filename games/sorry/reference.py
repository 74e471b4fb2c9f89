"""A slow, plain-Python model of Sorry!'s options (shared/specs/sorry.md §3-§5), written step by step from
the spec and independently of the compiled engine: the parity oracle of the rules tests.

``options(pos, colour, card, in_play, sorry_fwd4, victim_slides)`` maps every legal decision action id
(numbered as docs/sorry.md) to the position it leads to. ``pos[colour][pawn]`` uses the engine's
squares: START -1, track 0..59, S_i 60+i, HOME 65.
"""
from __future__ import annotations

import copy

START, HOME = -1, 65
PASS, START_OUT, FWD, BACK, SPLIT, SWAP, SORRY = 0, 14, 15, 19, 23, 95, 159

Pos = list[list[int]]


def turn_square(c: int) -> int:
    return 15 * c + 2


def exit_square(c: int) -> int:
    return 15 * c + 4


def slide_at(square: int) -> tuple[int, int] | None:
    """(end, colour) if square is a slide's triangle."""
    side, off = divmod(square, 15)
    if off == 1:
        return 15 * side + 4, side
    if off == 9:
        return 15 * side + 13, side
    return None


def step_forward(c: int, p: int) -> int | None:
    if p == HOME:
        return None
    if p >= 60:
        return p + 1
    if p == turn_square(c):
        return 60
    return (p + 1) % 60


def step_back(c: int, p: int) -> int:
    if p == 60:
        return turn_square(c)
    if p > 60:
        return p - 1
    return (p - 1) % 60


def walk(c: int, p: int, n: int, forward: bool) -> int | None:
    for _ in range(n):
        if forward:
            nxt = step_forward(c, p)
            if nxt is None:
                return None            # HOME reached with steps left
            p = nxt
        else:
            p = step_back(c, p)
    return p


def pawn_at(pos: Pos, square: int, colour_for_safety: int) -> tuple[int, int] | None:
    for c in range(4):
        if square >= 60 and c != colour_for_safety:
            continue
        for k in range(4):
            if pos[c][k] == square:
                return c, k
    return None


def arrive(pos: Pos, c: int, k: int, q: int) -> bool:
    """§4 for pawn (c, k) arriving on q; mutates pos; False if the own-pawn block forbids it."""
    if q != HOME:
        other = pawn_at(pos, q, c)
        if other is not None and other != (c, k):
            if other[0] == c:
                return False
            pos[other[0]][other[1]] = START
    pos[c][k] = q
    if q < 60:
        slide = slide_at(q)
        if slide is not None and slide[1] != c:
            end = slide[0]
            for x in range(q + 1, end + 1):
                hit = pawn_at(pos, x, c)
                if hit is not None:
                    pos[hit[0]][hit[1]] = START
            pos[c][k] = end
    return True


def movable(p: int) -> bool:
    return p != START and p != HOME


def single_move(pos: Pos, c: int, k: int, n: int, forward: bool) -> Pos | None:
    if not movable(pos[c][k]):
        return None
    q = walk(c, pos[c][k], n, forward)
    if q is None:
        return None
    new = copy.deepcopy(pos)
    return new if arrive(new, c, k, q) else None


def options(pos: Pos, colour: int, card: int, in_play: list[bool], sorry_fwd4: bool = False,
            victim_slides: bool = False) -> dict[int, Pos]:
    c = colour
    out: dict[int, Pos] = {}
    in_start = [k for k in range(4) if pos[c][k] == START]
    opponents = [(c2, q) for c2 in range(4) if c2 != c and in_play[c2]
                 for q in range(4) if 0 <= pos[c2][q] < 60]
    fwd = 0 if card == 4 else (4 if sorry_fwd4 else 0) if card == 13 else card
    back = {4: 4, 10: 1}.get(card, 0)
    if card in (1, 2) and in_start:
        new = copy.deepcopy(pos)
        if arrive(new, c, in_start[0], exit_square(c)):
            out[START_OUT] = new
    for k in range(4):
        if fwd and (res := single_move(pos, c, k, fwd, True)) is not None:
            out[FWD + k] = res
        if back and (res := single_move(pos, c, k, back, False)) is not None:
            out[BACK + k] = res
    if card == 7:
        seen: list[Pos] = []
        for pa in range(4):
            for pb in range(4):
                if pa == pb or not movable(pos[c][pa]) or not movable(pos[c][pb]):
                    continue
                for a in range(1, 7):
                    mid = single_move(pos, c, pa, a, True)
                    if mid is None or mid[c][pb] == START:
                        continue
                    end = single_move(mid, c, pb, 7 - a, True)
                    if end is None or end in seen:
                        continue
                    seen.append(end)
                    j = pb if pb < pa else pb - 1
                    out[SPLIT + (pa * 3 + j) * 6 + a - 1] = end
    if card == 11:
        for k in range(4):
            x = pos[c][k]
            if not 0 <= x < 60:
                continue
            for c2, q in opponents:
                new = copy.deepcopy(pos)
                y = new[c2][q]
                new[c2][q] = x
                new[c][k] = -99                # lifted; y is free now
                arrive(new, c, k, y)
                if victim_slides and new[c2][q] == x:
                    slide = slide_at(x)
                    if slide is not None and slide[1] != c2:
                        arrive(new, c2, q, x)
                out[SWAP + k * 16 + c2 * 4 + q] = new
        if not any(FWD <= a < BACK for a in out):
            out[PASS] = copy.deepcopy(pos)
    if card == 13 and in_start:
        for c2, q in opponents:
            new = copy.deepcopy(pos)
            arrive(new, c, in_start[0], new[c2][q])
            out[SORRY + c2 * 4 + q] = new
    if not out:
        out[PASS] = copy.deepcopy(pos)
    return dict(sorted(out.items()))
