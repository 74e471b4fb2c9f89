"""Allocates memory until something stops it (the cgroup OOM killer or RLIMIT_AS)."""
import os


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        hoard = []
        while True:
            block = bytearray(8 << 20)
            for i in range(0, len(block), 4096):  # touch every page so it is really resident
                block[i] = 1
            hoard.append(block)
