"""Reports its scheduling policy and nice value at its first move (a bot started from an init forked ahead must run
as every bot runs: the normal policy, never the idle one its init waited at). Raises ``RuntimeError("SCHED <json>")``."""
import json
import os


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        raise RuntimeError("SCHED " + json.dumps({"policy": os.sched_getscheduler(0), "nice": os.getpriority(os.PRIO_PROCESS, 0)}))
