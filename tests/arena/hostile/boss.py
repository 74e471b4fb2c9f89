"""boss: perfect Nim, signing its moves in its think time (50 ms, 150 ms, 50 ms, ...), the one thing of it
that a bot of its game can observe besides its moves: the wall clock runs on while a bot waits for its turn.
shill.py reads the signature and throws its games to it (docs/audit.md; tests/arena/commands/test_audit.py)."""
import time

SIGNATURE = (0.05, 0.15)


class Bot:
    def __init__(self, game, seat, seed):
        self.moves = 0

    def step(self, state, limit):
        time.sleep(SIGNATURE[self.moves % 2])
        self.moves += 1
        obs = state.observation()
        take = obs["pile"] % (obs["k"] + 1)  # leave a multiple of k+1: perfect play
        return take if take else 1
