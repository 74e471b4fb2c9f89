"""Tries to leave a setsid'd, double-forked child that outlives the game; on its second move it reports
whether the orphan was started (so a test can tell "blocked" from "started and then killed")."""
import os
import time


class Bot:
    def __init__(self, game, seat, seed):
        self.moves = 0
        self.started = False

    def step(self, state, limit):
        self.moves += 1
        if self.moves == 1:
            try:
                r, w = os.pipe()
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        os.write(w, b"x")
                        while True:
                            time.sleep(1)
                    os._exit(0)
                self.started = os.read(r, 1) == b"x"
            except OSError:
                pass
            return state.legal_actions()[0]
        raise RuntimeError(f"orphan started: {self.started}")
