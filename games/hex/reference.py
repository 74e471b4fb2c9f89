"""Tuned plain-Python random Hex playouts: the benchmark baseline and a parity oracle for tests.

Same conventions as the compiled engine (and OpenSpiel): cell ``r*N + c``; neighbours
``(r-1,c) (r-1,c+1) (r,c-1) (r,c+1) (r+1,c-1) (r+1,c)``; player 0 joins the top and bottom rows,
player 1 the left and right columns; player 0 moves first.
"""
from __future__ import annotations

import random
from functools import cache


@cache
def neighbours(size: int) -> tuple[tuple[int, ...], ...]:
    """The neighbour cells of every cell, in action order."""
    out = []
    for r in range(size):
        for c in range(size):
            cells = [(r - 1, c), (r - 1, c + 1), (r, c - 1), (r, c + 1), (r + 1, c - 1), (r + 1, c)]
            out.append(tuple(rr * size + cc for rr, cc in cells if 0 <= rr < size and 0 <= cc < size))
    return tuple(out)


def full_board_winner(board: list[int], size: int) -> int:
    """The winner of a board with no empty cell: 0 if player 0's stones join top and bottom, else 1."""
    nbrs = neighbours(size)
    last_row = size * size - size
    stack = [c for c in range(size) if board[c] == 0]
    seen = set(stack)
    while stack:
        cell = stack.pop()
        if cell >= last_row:
            return 0
        for nb in nbrs[cell]:
            if board[nb] == 0 and nb not in seen:
                seen.add(nb)
                stack.append(nb)
    return 1


def playouts_fill(n: int, size: int, seed: int = 0) -> list[int]:
    """``n`` random games from the empty board by the fill trick; returns wins per seat.

    A random permutation of the cells, the first ceil(N*N/2) to player 0 (the mover), the rest to
    player 1, then one depth-first search: the same outcome distribution as playing move by move.
    """
    rand = random.Random(seed).random
    nbrs = neighbours(size)
    total = size * size
    ones = total // 2                  # the player not to move gets the smaller half
    last_row = total - size
    top = range(size)
    cells = list(range(total))
    wins = [0, 0]
    for _ in range(n):
        # Sorting by random keys is a uniform shuffle, twice as fast as random.shuffle in CPython.
        order = sorted(cells, key=lambda _: rand())
        board = [0] * total
        for c in order[:ones]:
            board[c] = 1
        stack = [c for c in top if not board[c]]
        for c in stack:
            board[c] = 2               # visited
        winner = 1
        while stack:
            cell = stack.pop()
            if cell >= last_row:
                winner = 0
                break
            for nb in nbrs[cell]:
                if not board[nb]:
                    board[nb] = 2
                    stack.append(nb)
        wins[winner] += 1
    return wins


def _find(parent: list[int], x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def play(actions: list[int], size: int) -> tuple[int, int]:
    """Plays cell actions from the empty board (no swap) until someone connects.

    Returns ``(moves, winner)``: the number of actions applied when the game ended and its winner,
    or ``(len(actions), -1)`` if it has not ended. Raises ValueError on an occupied or bad cell.
    """
    total = size * size
    nbrs = neighbours(size)
    # Union-find over the cells plus four side nodes: top, bottom (player 0), left, right (player 1).
    parent = list(range(total + 4))
    board = [-1] * total
    player = 0
    for i, cell in enumerate(actions):
        if not 0 <= cell < total or board[cell] != -1:
            raise ValueError(f"action {cell} is not an empty cell")
        board[cell] = player
        r, c = divmod(cell, size)
        sides = (r == 0 and total, r == size - 1 and total + 1) if player == 0 else \
                (c == 0 and total + 2, c == size - 1 and total + 3)
        for s in sides:
            if s:
                parent[_find(parent, cell)] = _find(parent, s)
        for nb in nbrs[cell]:
            if board[nb] == player:
                parent[_find(parent, cell)] = _find(parent, nb)
        a = total + 2 * player
        if _find(parent, a) == _find(parent, a + 1):
            return i + 1, player
        player ^= 1
    return len(actions), -1


def playouts_move_by_move(n: int, size: int, seed: int = 0) -> tuple[list[int], int]:
    """``n`` random games from the empty board played move by move with union-find.

    Returns ``(wins, total_moves)``.
    """
    rng = random.Random(seed)
    cells = list(range(size * size))
    wins = [0, 0]
    moves = 0
    for _ in range(n):
        rng.shuffle(cells)            # a random order of the empty cells = a random move each turn
        length, winner = play(cells, size)
        wins[winner] += 1
        moves += length
    return wins, moves
