"""Tries to use more CPUs than it was given: widens its affinity to every CPU there could be and reports
what it got (and the error, if the call was refused)."""
import os


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        before = sorted(os.sched_getaffinity(0))
        error = "none"
        try:
            os.sched_setaffinity(0, set(range(64)))  # os.cpu_count() may not see /sys
        except OSError as exc:
            error = type(exc).__name__
        raise RuntimeError(f"affinity before={before} after={sorted(os.sched_getaffinity(0))} error={error}")
