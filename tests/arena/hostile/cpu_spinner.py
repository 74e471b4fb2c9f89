"""Genuinely slow: its first move burns three move times of CPU (by its own CPU clock), then answers."""
import time


class Bot:
    def __init__(self, game, seat, seed):
        self.first = True

    def step(self, state, limit):
        if self.first:
            self.first = False
            end = time.process_time() + 3 * limit.time
            while time.process_time() < end:
                pass
        return state.legal_actions()[0]
