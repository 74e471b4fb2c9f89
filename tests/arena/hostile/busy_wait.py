"""Busy-waits for twice its move time, then answers (too late)."""
import time


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        end = time.perf_counter() + 2 * limit.time + 0.5
        while time.perf_counter() < end:
            pass
        return state.legal_actions()[0]
