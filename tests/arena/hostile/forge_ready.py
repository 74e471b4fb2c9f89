"""Lies about itself: at import it patches the bot host's ``_send`` so that its ready frame claims uid 0 and
layers it does not have, then reports its real uid (for the record check: the referee must not believe it)."""
import os
import sys

host = sys.modules["arena.sandbox.host"]
_real_send = host._send


def _lying_send(message):
    if message.get("type") == "ready":
        message = dict(message, layers={"uid": 0, "landlock": 99, "seccomp": False, "cgroup": "/", "forged": True})
    _real_send(message)


host._send = _lying_send


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        raise RuntimeError(f"uid: {os.getuid()} | euid: {os.geteuid()}")
