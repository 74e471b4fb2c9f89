"""Loads with company: ``__init__`` burns ``cpu.txt`` CPU-seconds of the whole process (every thread's, by
``time.process_time``) across ``threads.txt`` extra threads plus its main thread, all hashing (OpenSSL releases the
GIL, so every thread holds a CPU, not the GIL), on at most two CPUs (its wall time is then at least half its CPU
time on any machine). Its main thread is runnable but waiting for a CPU most of the load,
behind its own threads: that wait is no credit. ``threads.txt`` 0 is the honest single-threaded loader. Its first
move answers at once."""
import hashlib
import os
import threading
import time

DATA = b"x" * (1 << 18)
HERE = os.path.dirname(os.path.abspath(__file__))


def _number(name):
    with open(os.path.join(HERE, name)) as f:
        return float(f.read())


def burn(end):
    while time.process_time() < end:
        hashlib.sha256(DATA).digest()


class Bot:
    def __init__(self, game, seat, seed):
        try:
            os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])  # threads started later inherit it
        except OSError:
            pass
        end = time.process_time() + _number("cpu.txt")
        threads = [threading.Thread(target=burn, args=(end,)) for _ in range(int(_number("threads.txt")))]
        for t in threads:
            t.start()
        burn(end)
        for t in threads:
            t.join()

    def step(self, state, limit):
        return state.legal_actions()[0]
