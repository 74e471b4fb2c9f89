"""Colosseum's board as numpy arrays, in the COMP424 course's layout (docs/comp424.md).

The state keeps one byte per cell (bit d set: a wall or the border on side d, Up/Right/Down/Left), so the
byte view of the walls is one small copy out of the compiled state, and the course's ``chess_board``
(bool, shape (M, M, 4)) is one ``unpackbits`` of it: the bit layout cannot be viewed as bools in place.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def wall_bytes(state: Any) -> np.ndarray:
    """``(M, M)`` uint8: bit d of cell (r, c) is the wall on side d (read-only)."""
    raw = state._state_key()[4]  # the walls' bytes, sliced out of the compiled state (one copy)
    m = int(state.size)
    return np.frombuffer(raw, dtype=np.uint8).reshape(m, m)


def chess_board(state: Any) -> np.ndarray:
    """The course engine's ``chess_board``: bool ``(M, M, 4)`` (Up, Right, Down, Left; border included),
    a fresh writable array (an agent may scribble on it, as under the course's ``deepcopy``)."""
    bits = np.unpackbits(wall_bytes(state)[..., None], axis=-1, bitorder="little")
    return bits[..., :4].astype(bool)


def positions(state: Any) -> np.ndarray:
    """``(2, 2)`` int: ``[row, col]`` of seat 0 (A) and seat 1 (B)."""
    return np.array(state.positions(), dtype=np.int64)
