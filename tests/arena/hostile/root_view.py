"""Reports, at its first move, what its root looks like: the tree below / to a few levels (names and types), /bot,
the root's file system (statvfs, device), and what became of writing there. Raises ``RuntimeError("ROOTVIEW
<json>")`` so the test reads it from the record."""
import errno
import hashlib
import json
import os
import stat
import sys

CANDIDATES = ["/bot", "/usr", "/lib", "/lib64", "/etc", "/dev", "/tmp", "/proc", "/sys", "/run", "/root", "/home",
              "/work", "/var", "/opt", "/x", "/newdir"]


def tree(top, depth):
    out = []
    try:
        names = sorted(os.listdir(top))
    except OSError as exc:
        return [f"{top}: {errno.errorcode.get(exc.errno, exc.errno)}"]
    for name in names:
        path = os.path.join(top, name)
        mode = os.lstat(path).st_mode
        out.append(f"{path}:{stat.filemode(mode)[0]}")
        if depth and stat.S_ISDIR(mode):
            out += tree(path, depth - 1)
    return out


def attempt(action, *args):
    try:
        action(*args)
        return "done"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        writes = {"/x": attempt(lambda: os.close(os.open("/x", os.O_CREAT | os.O_WRONLY))),
                  "/bot/x": attempt(lambda: os.close(os.open("/bot/x", os.O_CREAT | os.O_WRONLY))),
                  "mkdir /newdir": attempt(os.mkdir, "/newdir"),
                  "mkdir /usr/newdir": attempt(os.mkdir, "/usr/newdir")}
        # (Landlock lets no bot list / itself: what exists there is asked name by name)
        listing = tree("/", 0) + [f"{p}:{attempt(os.stat, p)}" for p in CANDIDATES]
        for top in ("/bot", "/dev", "/etc", sys.prefix, os.path.dirname(os.__file__)):
            listing += tree(top, 2)
        fs = os.statvfs("/")
        found = [p for p in CANDIDATES if attempt(os.stat, p) == "done"]
        raise RuntimeError("ROOTVIEW " + json.dumps({  # (short: a failure's detail keeps 500 characters)
            "top": hashlib.sha256(repr(found).encode()).hexdigest()[:8],
            "bot": sorted(os.listdir("/bot")), "tree": hashlib.sha256("\n".join(listing).encode()).hexdigest()[:12],
            "entries": len(listing), "statvfs": [fs.f_blocks, fs.f_bfree, fs.f_files, fs.f_ffree, bool(fs.f_flag & 1)],
            "dev": os.stat("/").st_dev, "writes": sorted(set(writes.values()))}))
