"""Takes a long time where the opponent could compute: ``start.txt`` seconds of busy work in ``__init__``
and ``first.txt`` seconds in its first move (wall clock). Then plays the first legal move."""
import os
import time


def _spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


class Bot:
    def __init__(self, game, seat, seed):
        here = os.path.dirname(os.path.abspath(__file__))
        self.times = {}
        for name in ("start", "first"):
            with open(os.path.join(here, f"{name}.txt")) as f:
                self.times[name] = float(f.read())
        _spin(self.times["start"])
        self.first = True

    def step(self, state, limit):
        if self.first:
            self.first = False
            _spin(self.times["first"])
        return state.legal_actions()[0]
