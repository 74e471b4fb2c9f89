"""Reports, at its first move, what it inherited from the process it was forked from: the modules loaded
(a digest, the ``bots.*`` ones by name: the fork server once imported an opponent's modules), the
environment, argv, the working directory, its open descriptors, and what the fork server's frames still
hold (each local's type and size: earlier bots' pids and exit statuses, the request that started it).
Raises ``RuntimeError("INHERITED <json>")`` so the test reads it from the record."""
import hashlib
import json
import os
import stat
import sys

FIRST = sorted(sys.modules)  # before this bot's own imports below (json, hashlib: the same in every game)


def digest(value):
    return hashlib.sha256(repr(value).encode()).hexdigest()[:12]


def open_fds():
    out = []
    for fd in range(256):
        try:
            out.append(f"{fd}:{stat.filemode(os.fstat(fd).st_mode)[0]}")
        except OSError:
            pass
    return out


def server_frames(frame):
    """Each fork-server frame below the bot: its function and its locals' types and sizes."""
    out = []
    while frame is not None:
        if frame.f_code.co_filename.endswith("zygote.py"):
            for name, value in sorted(frame.f_locals.items()):
                size = len(value) if isinstance(value, (dict, set, list, tuple, str, bytes)) else None
                out.append((frame.f_code.co_name, name, type(value).__name__, size))
        frame = frame.f_back
    zygote = sys.modules.get("arena.sandbox.zygote")
    for name, value in sorted(vars(zygote).items()) if zygote else ():
        if isinstance(value, (dict, set, list)):
            out.append(("module", name, type(value).__name__, len(value)))
    return out


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        seen = {
            "modules": f"{digest(FIRST)}/{len(FIRST)}",
            "bots": ",".join(m[5:] for m in FIRST if m.startswith("bots.")),
            "env": digest(sorted(os.environ.items())),
            "argv": sys.argv,
            "cwd": os.getcwd(),
            "fds": open_fds(),
            "server": digest(server_frames(sys._getframe())),
        }
        raise RuntimeError("INHERITED " + json.dumps(seen, separators=(",", ":")))
