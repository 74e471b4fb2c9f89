"""Prints megabytes to stdout and stderr, then plays normally."""
import sys


class Bot:
    def __init__(self, game, seat, seed):
        sys.stdout.write("x" * (4 << 20))
        sys.stdout.flush()

    def step(self, state, limit):
        print("y" * (256 << 10))
        sys.stderr.write("z" * (256 << 10))
        return state.legal_actions()[0]
