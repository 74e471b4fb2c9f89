"""Prints one byte per write to stderr for 2 s in its first move (each write can wake the referee), then plays on."""
import os
import time


class Bot:
    def __init__(self, game, seat, seed):
        self.first = True

    def step(self, state, limit):
        if self.first:
            self.first = False
            end = time.monotonic() + 2.0
            while time.monotonic() < end:
                os.write(2, b"x")
        return state.legal_actions()[0]
