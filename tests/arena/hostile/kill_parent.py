"""Tries to kill its parent (the referee) and everyone else it can, then plays on as if nothing happened."""
import os
import signal


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        for target in (os.getppid(), 1):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.kill(-1, signal.SIGKILL)  # every process this uid may signal (none but itself, by design)
        except OSError:
            pass
        return state.legal_actions()[0]
