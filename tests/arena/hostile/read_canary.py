"""Tries to read files it must not see (paths written by the test in targets.txt beside this file)."""
import os


class Bot:
    def __init__(self, game, seat, seed):
        with open(os.path.join(os.path.dirname(__file__), "targets.txt")) as f:
            self.targets = f.read().split()

    def step(self, state, limit):
        out = []
        for path in self.targets + ["/etc/passwd", "/root", "/proc/1/environ"]:
            try:
                if os.path.isdir(path):
                    out.append(f"{path}: listed {os.listdir(path)}")
                else:
                    with open(path, "rb") as f:
                        out.append(f"{path}: read {f.read()!r}")
            except OSError as exc:
                out.append(f"{path}: {exc.strerror}")
        raise RuntimeError(" | ".join(out))
