"""Fakes the reason of its own failure on its first move, by ``mode.txt``: ``exit152`` exits with status 152
(128 + SIGXCPU, which the PID namespace's init reported as a CPU-limit kill), ``print_memoryerror`` prints
"MemoryError" and exits 1, ``raise_memoryerror`` raises MemoryError without allocating anything, ``sigxcpu`` and
``sigkill`` send those signals to itself. It uses almost no CPU and memory: none of these is a timeout or memory."""
import os
import signal
import sys

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mode.txt")) as _f:
    MODE = _f.read().strip()


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        if MODE == "exit152":
            os._exit(152)
        if MODE == "print_memoryerror":
            print("Traceback (most recent call last):\nMemoryError", file=sys.stderr, flush=True)
            os._exit(1)
        if MODE == "raise_memoryerror":
            raise MemoryError("faked: nothing was allocated")
        if MODE in ("sigxcpu", "sigkill"):
            os.kill(os.getpid(), signal.SIGXCPU if MODE == "sigxcpu" else signal.SIGKILL)
        raise RuntimeError(f"unknown mode {MODE!r}")
