"""Slow, with company: its second move (its first answers at once: the load's CPU, which the first move's figure
counts, stays out of it) starts three threads hashing (OpenSSL releases the GIL, so they hold
the CPU, not the GIL) on its own CPU, then spins 1.5 move times by the wall clock. Its main thread waits
for a CPU most of the move, but behind its own threads: that wait must not be credited."""
import hashlib
import os
import threading
import time

DATA = b"x" * (1 << 20)


def burn(stop):
    while not stop.is_set():
        hashlib.sha256(DATA).digest()


class Bot:
    def __init__(self, game, seat, seed):
        self.moves = 0
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # threads started later inherit it

    def step(self, state, limit):
        self.moves += 1
        if self.moves == 2:
            stop = threading.Event()
            threads = [threading.Thread(target=burn, args=(stop,), daemon=True) for _ in range(3)]
            for t in threads:
                t.start()
            end = time.perf_counter() + 1.5 * limit.time
            while time.perf_counter() < end:
                pass
            stop.set()
        return state.legal_actions()[0]
