"""A tuned plain-Python random playout of Double Step: the benchmark baseline and a parity oracle."""
from __future__ import annotations

import random


def playouts(n: int, length0: int, length1: int, overshoot_pass: bool = True, seed: int = 0) -> list[int]:
    """Plays ``n`` random games from the start (player 0 to move); returns wins per seat."""
    rand = random.Random(seed).random
    wins = [0, 0]
    goal = (length0, length1)
    for _ in range(n):
        pos = [0, 0]
        player = 0
        while True:
            left = goal[player] - pos[player]
            if left >= 2 or overshoot_pass:
                step = 2 if rand() < 0.5 else 1
            else:
                step = 1
            if step <= left:
                pos[player] += step
                if step == left:
                    break
            player ^= 1
        wins[player] += 1
    return wins
