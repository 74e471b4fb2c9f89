"""Tries to run a shell command (marker path from marker.txt beside this file)."""
import os
import subprocess


class Bot:
    def __init__(self, game, seat, seed):
        with open(os.path.join(os.path.dirname(__file__), "marker.txt")) as f:
            self.marker = f.read().strip()

    def step(self, state, limit):
        out = []
        try:
            out.append(f"system: {os.system(f'touch {self.marker}')}")
        except Exception as exc:  # noqa: BLE001
            out.append(f"system: {type(exc).__name__}: {exc}")
        try:
            subprocess.run(["/bin/sh", "-c", f"touch {self.marker}"], check=False)
            out.append("subprocess ran")
        except Exception as exc:  # noqa: BLE001
            out.append(f"subprocess: {type(exc).__name__}: {exc}")
        try:
            os.execv("/bin/sh", ["sh", "-c", f"touch {self.marker}"])
        except Exception as exc:  # noqa: BLE001
            out.append(f"execv: {type(exc).__name__}: {exc}")
        raise RuntimeError(" | ".join(out))
