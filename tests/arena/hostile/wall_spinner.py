"""The victim of CPU theft: computes for half its move time (wall clock) on every move, so the share of a CPU it
got during a move is its CPU time over the move's wall time."""
import time


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        end = time.monotonic() + limit.time / 2
        while time.monotonic() < end:
            pass
        return state.legal_actions()[0]
