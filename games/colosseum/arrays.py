"""Colosseum's board as numpy arrays, in the COMP424 course's layout (docs/comp424.md).

The state keeps one byte per cell (bit d set: a wall or the border on side d, Up/Right/Down/Left), so the
byte view of the walls is the state's own memory (buffer protocol, no copy, read-only), and the course's
``chess_board`` (bool, shape (M, M, 4)) is one table lookup of it: the bit layout cannot be viewed as
bools in place, so that one stays a copy.
"""
from __future__ import annotations

from typing import Any

import numpy as np

# Row v: the four sides (Up, Right, Down, Left) whose bits are set in the byte v.
_SIDES = np.array([[(v >> d) & 1 for d in range(4)] for v in range(256)], dtype=bool)


def wall_bytes(state: Any) -> np.ndarray:
    """``(M, M)`` uint8: bit d of cell (r, c) is the wall on side d. A read-only view of the state's memory
    (no copy; it keeps the state alive and follows it as moves are applied: copy it to keep a snapshot)."""
    return np.asarray(state.wall_view())


def chess_board(state: Any) -> np.ndarray:
    """The course engine's ``chess_board``: bool ``(M, M, 4)`` (Up, Right, Down, Left; border included),
    a fresh writable array (an agent may scribble on it, as under the course's ``deepcopy``)."""
    return np.take(_SIDES, wall_bytes(state), axis=0)  # one gather from the zero-copy bytes (2x unpackbits' speed)


def positions(state: Any) -> np.ndarray:
    """``(2, 2)`` int: ``[row, col]`` of seat 0 (A) and seat 1 (B)."""
    return np.array(state.positions(), dtype=np.int64)
