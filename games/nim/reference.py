"""A tuned plain-Python random playout of Nim: the benchmark baseline and a parity oracle for tests."""
from __future__ import annotations

import random


def playouts(n: int, pile: int, k: int, seed: int = 0) -> list[int]:
    """Plays ``n`` random games of plain Nim from ``pile`` (player 0 to move); returns wins per seat."""
    rand = random.Random(seed).random
    wins = [0, 0]
    for _ in range(n):
        p, player = pile, 0
        while True:
            p -= 1 + int(rand() * (k if k < p else p))
            if p == 0:
                break
            player ^= 1
        wins[player] += 1
    return wins
