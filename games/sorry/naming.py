"""Action names of Sorry! (``action_to_string`` and its inverse), written from the state's public view.

Every action has a short, position-independent name (``"split 7: pawn 0 +3, pawn 2 +4"``,
``"swap pawn 1 with blue pawn 3"``, ``"sorry! blue pawn 0"``, ``"pass"``, ``"draw 11"``) and, when it is
legal in the state at hand, a full name that adds the squares, slides and bumps
(``"red pawn 2: 14 -> 21"``, ``"red pawn 0: 20 -> 16 (back 4), slide to 19, bumps blue pawn 1"``).
``action_to_string`` gives the full name when it can; ``string_to_action`` accepts either form.
"""
from __future__ import annotations

from typing import Any

from games.errors import InvalidActionError

COLOURS = ("red", "blue", "yellow", "green")
START, SAFETY0, HOME = -1, 60, 65
PASS, START_OUT, FWD, BACK, SPLIT, SWAP, SORRY, N_ACTIONS = 0, 14, 15, 19, 23, 95, 159, 175
SORRY_CARD = 13
CARDS = (1, 2, 3, 4, 5, 7, 8, 10, 11, 12, 13)
# triangle square -> (slide end, slide colour)
SLIDES = {15 * c + off: (15 * c + end, c) for c in range(4) for off, end in ((1, 4), (9, 13))}


def square_name(p: int) -> str:
    """``start``, a track square ``0``..``59``, ``S0``..``S4`` or ``home``."""
    if p == START:
        return "start"
    if p == HOME:
        return "home"
    if p >= SAFETY0:
        return f"S{p - SAFETY0}"
    return str(p)


def decode_split(action: int) -> tuple[int, int, int]:
    """``(pawnA, a, pawnB)``: pawn A moves +a first, then pawn B moves +(7-a)."""
    idx = action - SPLIT
    pair, a = divmod(idx, 6)
    pa, j = divmod(pair, 3)
    return pa, a + 1, (j if j < pa else j + 1)


def short_name(action: int) -> str:
    """The position-independent name of an action id."""
    if not 0 <= action < N_ACTIONS:
        raise InvalidActionError(f"{action} is not a Sorry! action id (0..{N_ACTIONS - 1})")
    if action == PASS:
        return "pass"
    if action < START_OUT:
        if action not in CARDS:
            raise InvalidActionError(f"{action} is not a card: cards are 1-5, 7, 8, 10-12 and 13 (Sorry!)")
        return "draw sorry!" if action == SORRY_CARD else f"draw {action}"
    if action == START_OUT:
        return "start out"
    if action < BACK:
        return f"pawn {action - FWD} forward"
    if action < SPLIT:
        return f"pawn {action - BACK} back"
    if action < SWAP:
        pa, a, pb = decode_split(action)
        return f"split 7: pawn {pa} +{a}, pawn {pb} +{7 - a}"
    if action < SORRY:
        own, colour, pawn = (action - SWAP) >> 4, ((action - SWAP) >> 2) & 3, (action - SWAP) & 3
        return f"swap pawn {own} with {COLOURS[colour]} pawn {pawn}"
    colour, pawn = divmod(action - SORRY, 4)
    return f"sorry! {COLOURS[colour]} pawn {pawn}"


def _slide_note(colour: int, square: int) -> str:
    slide = SLIDES.get(square)
    return f", slide to {slide[0]}" if slide and slide[1] != colour else ""


def _bumps(before: list[list[int]], after: list[list[int]], skip: tuple[int, int] | None = None) -> str:
    hit = [f"{COLOURS[c]} pawn {k}" for c in range(4) for k in range(4)
           if before[c][k] != START and after[c][k] == START and (c, k) != skip]
    return ", bumps " + ", ".join(hit) if hit else ""


def describe(state: Any, action: int) -> str:
    """``action_to_string``: the full name when the action is legal here, else the short name."""
    name = short_name(action)
    if action < START_OUT or state.current_player() < 0 or action not in state.legal_actions():
        return name
    colour = state._colour_of(state.current_player())
    col = COLOURS[colour]
    before = state._positions()
    after = state._simulate(action)
    mine = before[colour]
    if action == START_OUT:
        k = mine.index(START)
        return f"{col} pawn {k}: start -> {15 * colour + 4}" + _bumps(before, after)
    if action < SPLIT:
        k = (action - FWD) if action < BACK else (action - BACK)
        forward = action < BACK
        steps = state._step_size(forward)
        dest = state._dest(colour, mine[k], steps, forward)
        back = "" if forward else f" (back {steps})"
        return (f"{col} pawn {k}: {square_name(mine[k])} -> {square_name(dest)}{back}"
                + _slide_note(colour, dest) + _bumps(before, after))
    if action < SWAP:
        pa, a, pb = decode_split(action)
        parts = []
        for k, n in ((pa, a), (pb, 7 - a)):
            dest = state._dest(colour, mine[k], n, True)
            path = f"{square_name(mine[k])} -> {square_name(dest)}{_slide_note(colour, dest)}"
            parts.append(f"pawn {k} +{n} ({path})")
        return "split 7: " + ", ".join(parts) + _bumps(before, after)
    if action < SORRY:
        own, c2, pawn = (action - SWAP) >> 4, ((action - SWAP) >> 2) & 3, (action - SWAP) & 3
        y = before[c2][pawn]
        return (f"{name} ({mine[own]} <-> {y})" + _slide_note(colour, y) + _bumps(before, after))
    c2, pawn = divmod(action - SORRY, 4)
    x = before[c2][pawn]
    return f"{name} on {x}" + _slide_note(colour, x) + _bumps(before, after, skip=(c2, pawn))


def parse(state: Any, text: str) -> int:
    """``string_to_action``: a legal action's full or short name (case-insensitive)."""
    wanted = " ".join(text.lower().split())
    wanted = {"draw sorry": "draw sorry!", "draw 13": "draw sorry!"}.get(wanted, wanted)
    legal = state.legal_actions()
    for a in legal:
        if wanted == short_name(a):
            return a
    for a in legal:
        if wanted == describe(state, a).lower():
            return a
    shown = "; ".join(describe(state, a) for a in legal[:8]) + ("; ..." if len(legal) > 8 else "")
    raise InvalidActionError(f"{text!r} names no legal action here; legal: {shown}")
