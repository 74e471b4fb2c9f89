"""Tries to leave a setsid'd, double-forked child that outlives the game, then plays on normally."""
import os
import time


class Bot:
    def __init__(self, game, seat, seed):
        self.tried = False

    def step(self, state, limit):
        if not self.tried:
            self.tried = True
            try:
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        while True:
                            time.sleep(1)
                    os._exit(0)
            except OSError:
                pass
        return state.legal_actions()[0]
