"""Tries to write to /tmp, /dev/shm and its own directory (names from names.txt beside this file)."""
import os


class Bot:
    def __init__(self, game, seat, seed):
        with open(os.path.join(os.path.dirname(__file__), "names.txt")) as f:
            self.paths = f.read().split()

    def step(self, state, limit):
        out = []
        for path in self.paths + [os.path.join(os.path.dirname(__file__), "dropped.txt")]:
            try:
                with open(path, "w") as f:
                    f.write("written by a bot")
                out.append(f"{path}: WRITTEN")
            except OSError as exc:
                out.append(f"{path}: {exc.strerror}")
        raise RuntimeError(" | ".join(out))
