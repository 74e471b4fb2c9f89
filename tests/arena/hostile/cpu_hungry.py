"""A fixed amount of work: its first move needs the CPU seconds in need.txt (like a search with a fixed
iteration count; not a share of the time it is told, which its load, slowed by the test's hogs, shortens). It
pins itself to the CPU named in cpu.txt, where the test runs hogs."""
import os
import time


class Bot:
    def __init__(self, game, seat, seed):
        self.first = True
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "cpu.txt")) as f:
            try:
                os.sched_setaffinity(0, {int(f.read())})
            except PermissionError:  # no cpuset here: the referee already put it on its game's CPU, and holds it
                pass
        with open(os.path.join(here, "need.txt")) as f:
            self.need = float(f.read())

    def step(self, state, limit):
        if self.first:
            self.first = False
            end = time.process_time() + self.need
            while time.process_time() < end:
                pass
        return state.legal_actions()[0]
