"""Attack round: thinks at import time, before ``ready``, where no move's clock runs. The module spins for
``import.txt`` seconds (a file beside it), then the first move spins ``first.txt`` seconds, whatever it is told
(the whole first-move limit less a margin): start-up plus first move far past ``first_move_time``, which is meant to pay for start-up
(docs/bot-authors.md: "importing modules, building tables, loading weights")."""
import os
import time


def _spin(seconds):
    """Spins ``seconds`` of CPU (not of wall time: on a busy machine the referee credits a bot's waits for a CPU,
    so a wall-clock spin would be partly forgiven and the test would measure the machine's load)."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "import.txt")) as _f:
    IMPORT_SECONDS = float(_f.read())
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "first.txt")) as _f:
    FIRST_SECONDS = float(_f.read())
_spin(IMPORT_SECONDS)  # a precomputed table, an opening book, a search started before the clock


class Bot:
    def __init__(self, game, seat, seed):
        self.first = True

    def step(self, state, limit):
        if self.first:
            self.first = False
            _spin(FIRST_SECONDS)
        return state.legal_actions()[0]
