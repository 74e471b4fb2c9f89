"""Probes host processes whose pids the test wrote in pids.txt: ``kill(pid, 0)``, ``getpgid`` and ``getsid``.
In the host's PID namespace a process of another uid answers EPERM (it exists); in a namespace of its own
the bot gets ESRCH (no such process) for every host pid. Reports errno names, and its own view of pids."""
import errno
import os


def probe(fn, pid):
    try:
        fn(pid)
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))


class Bot:
    def __init__(self, game, seat, seed):
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pids.txt")) as f:
            self.pids = [int(p) for p in f.read().split()]

    def step(self, state, limit):
        out = [f"self={os.getpid()} parent={os.getppid()}"]
        for pid in self.pids:
            out.append(f"{pid}:kill={probe(lambda p: os.kill(p, 0), pid)},getpgid={probe(os.getpgid, pid)},"
                       f"getsid={probe(os.getsid, pid)}")
        raise RuntimeError("pids: " + " ".join(out))
