"""Never becomes ready: its constructor sleeps forever (issue 12 §7)."""
import time


class Bot:
    def __init__(self, game, seat, seed):
        while True:
            time.sleep(3600)

    def step(self, state, limit):
        return state.legal_actions()[0]
