"""A fixed amount of work: its first move needs 0.6 of the move time in CPU seconds (like a search with a
fixed iteration count). It pins itself to the CPU named in cpu.txt next to it, where the test runs hogs."""
import os
import time


class Bot:
    def __init__(self, game, seat, seed):
        self.first = True
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu.txt")) as f:
            os.sched_setaffinity(0, {int(f.read())})

    def step(self, state, limit):
        if self.first:
            self.first = False
            end = time.process_time() + 0.6 * limit.time
            while time.process_time() < end:
                pass
        return state.legal_actions()[0]
