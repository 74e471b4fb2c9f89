"""Starts as many threads as its pids limit allows (up to CAP; a bot cannot fork: seccomp allows threads only), so
that the kernel's thaw (which wakes the group's threads one by one) takes long while the first-woken ones already run.
The threads hash a large buffer in a loop (hashlib releases the GIL: they run in parallel). MODE "spin": they run all
the time; "churn": each starts a new thread and exits, over and over (the thaw's task walk meets new tasks). NICE:
their niceness (0: they compete with the referee while it thaws). They start at the bot's first move."""
import hashlib
import os
import threading
import time

MODE = "spin"
NICE = 19
CAP = 16
BUF = b"x" * (16 << 20)  # ~40 ms a hash with the GIL released: the main thread gets the GIL at once
PIN = False
GO = threading.Event()


def _nice():
    if PIN:  # alternate threads over the bot's CPUs: every CPU, the referee's included, has woken threads to run
        cpus = sorted(os.sched_getaffinity(0))
        try:
            os.sched_setaffinity(0, {cpus[threading.get_ident() % 7 % len(cpus)]})
        except OSError:
            pass
    try:
        os.setpriority(os.PRIO_PROCESS, 0, NICE)  # this thread only (Linux)
    except OSError:
        pass


def spin():
    GO.wait()
    _nice()
    while True:
        hashlib.sha256(BUF).digest()


def churn():
    GO.wait()
    _nice()
    hashlib.sha256(BUF[:65536]).digest()
    while True:
        try:
            threading.Thread(target=churn, daemon=True).start()
            return
        except Exception:
            hashlib.sha256(BUF[:65536]).digest()


class Bot:
    def __init__(self, game, seat, seed):
        self.n = 0
        for _ in range(CAP):
            try:
                threading.Thread(target=spin if MODE == "spin" else churn, daemon=True).start()
            except Exception:
                break
            self.n += 1

    def step(self, state, limit):
        GO.set()
        time.sleep(0.05)
        return state.legal_actions()[0]
