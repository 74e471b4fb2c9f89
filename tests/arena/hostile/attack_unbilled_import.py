"""Attack round: thinks at import time, before ``ready``, where no move's clock runs. The module spins for
``import.txt`` seconds (a file beside it), then the first move spins for the whole of its own ``limit.time``
(less a margin): start-up plus first move far past ``first_move_time``, which is meant to pay for start-up
(docs/bot-authors.md: "importing modules, building tables, loading weights")."""
import os
import time


def _spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "import.txt")) as _f:
    IMPORT_SECONDS = float(_f.read())
_spin(IMPORT_SECONDS)  # a precomputed table, an opening book, a search started before the clock


class Bot:
    def __init__(self, game, seat, seed):
        self.first = True

    def step(self, state, limit):
        if self.first:
            self.first = False
            _spin(max(0.0, limit.time - 0.25))
        return state.legal_actions()[0]
