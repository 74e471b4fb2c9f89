"""Plays the first legal move and reports its uid, gid and groups (for the root check)."""
import os
import sys


class Bot:
    def __init__(self, game, seat, seed):
        print(f"whoami uid={os.getuid()} euid={os.geteuid()} gid={os.getgid()} groups={os.getgroups()}",
              file=sys.stderr)

    def step(self, state, limit):
        raise RuntimeError(f"uid={os.getuid()} euid={os.geteuid()} gid={os.getgid()} groups={os.getgroups()}")
