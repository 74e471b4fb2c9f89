"""Reads every path in TARGETS (filled in by the test) and reports what it saw in its crash report.

Unlike read_canary.py it needs no file beside it: a single-file bot sees nothing but itself."""
import os

TARGETS = "__TARGETS__".split("|")


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        out = []
        for path in TARGETS:
            try:
                if os.path.isdir(path):
                    out.append(f"{path}: listed {os.listdir(path)}")
                else:
                    with open(path, "rb") as f:
                        out.append(f"{path}: read {f.read()[-200:]!r}")
            except OSError as exc:
                out.append(f"{path}: {exc.strerror}")
        raise RuntimeError(" | ".join(out))
