"""Tries to read files it must not see (paths written by the test in targets.txt beside this file)."""
import os


class Bot:
    def __init__(self, game, seat, seed):
        with open(os.path.join(os.path.dirname(__file__), "targets.txt")) as f:
            self.targets = f.read().split()

    def step(self, state, limit):
        out = []
        # Reported by index ([i]: outcome), short enough that every attempt fits in the recorded error.
        for i, path in enumerate(self.targets + ["/etc/passwd", "/root", "/proc/1/environ"]):
            try:
                if os.path.isdir(path):
                    out.append(f"[{i}]: listed {os.listdir(path)}")
                else:
                    with open(path, "rb") as f:
                        out.append(f"[{i}]: read {f.read()!r}")
            except OSError as exc:
                out.append(f"[{i}]: {exc.strerror}")
        raise RuntimeError(" | ".join(out))
