"""Tries to outlive its referee. In its first move it detaches itself from the referee's lifetime by the
means given in mode.txt, names its thread ``arena-detached`` (so a test can see it got that far) and
then waits forever:

- ``clear``: ``prctl(PR_SET_PDEATHSIG, 0)``, no death signal at all;
- ``harmless``: the death signal becomes SIGWINCH, which it ignores;
- ``thread``: clears it, starts a worker thread, and the main thread exits with ``pthread_exit``: the process
  lives on in the worker (``cgroup.kill`` misses such a process: its leader is gone).
"""
import ctypes
import os
import signal
import threading
import time

PR_SET_PDEATHSIG, PR_SET_NAME = 1, 15


def _prctl(option, arg):
    """Tries; a refusal (seccomp) does not stop the bot: it waits on regardless, so the test still checks that
    the bot dies with its referee, whatever layer holds."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0)


def _name(text):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_NAME, ctypes.c_char_p(text.encode()), 0, 0, 0)


def _forever():
    while True:
        time.sleep(0.05)


class Bot:
    def __init__(self, game, seat, seed):
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mode.txt")) as f:
            self.mode = f.read().strip()

    def step(self, state, limit):
        if self.mode == "clear":
            _prctl(PR_SET_PDEATHSIG, 0)
        elif self.mode == "harmless":
            signal.signal(signal.SIGWINCH, signal.SIG_IGN)
            _prctl(PR_SET_PDEATHSIG, signal.SIGWINCH)
        elif self.mode == "thread":
            _prctl(PR_SET_PDEATHSIG, 0)

            def worker():
                _prctl(PR_SET_PDEATHSIG, 0)
                _name("arena-detached")
                _forever()
            threading.Thread(target=worker).start()
            time.sleep(0.2)
            ctypes.CDLL(None).pthread_exit(None)  # the leader goes; the worker thread keeps the process
        _name("arena-detached")
        _forever()
