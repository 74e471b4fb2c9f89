"""Issue 33b attack round: what a bot forked ahead (a waiting init's pre-forked bot) can learn of its own start and
of what came before it. Ends its first move with ``FACTS <json>``: its own and its init's start times (clock ticks
since boot) against the time since boot at ``__init__``, its CPU counters and fault counts at ``__init__``, its
scheduling policy, namespaces, descriptors, status lines. A ``mode.txt`` beside it (folder bot) may say ``spin`` to
burn CPU in ``__init__`` (0.3 s) before reporting."""
import json
import os
import resource
import time


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        return f"ERR {exc.errno}"


def _stat(path):
    text = _read(path)
    if text.startswith("ERR"):
        return None
    fields = text[text.rindex(")") + 2:].split()
    # (fields[0] is field 3: state) utime 14, stime 15, starttime 22
    return {"utime": int(fields[11]), "stime": int(fields[12]), "start": int(fields[19]), "minflt": int(fields[7])}


def _is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def facts():
    tick = os.sysconf("SC_CLK_TCK")
    now = time.clock_gettime(time.CLOCK_BOOTTIME)
    me, init = _stat("/proc/self/stat"), _stat("/proc/1/stat")
    ru = resource.getrusage(resource.RUSAGE_SELF)
    out = {
        "boottime": now,
        "self": me,
        "init": init,
        "age": None if me is None else now - me["start"] / tick,
        "init_age": None if init is None else now - init["start"] / tick,
        "tick": tick,
        "ru_utime": ru.ru_utime, "ru_stime": ru.ru_stime, "ru_minflt": ru.ru_minflt, "ru_maxrss": ru.ru_maxrss,
        "ru_nvcsw": ru.ru_nvcsw, "ru_nivcsw": ru.ru_nivcsw,
        "thread_cpu": time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID),
        "proc_cpu": time.clock_gettime(time.CLOCK_PROCESS_CPUTIME_ID),
        "policy": os.sched_getscheduler(0),
        "pid": os.getpid(), "ppid": os.getppid(), "uid": os.getuid(),
        "fds": sorted(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None,
        "open_fds": [fd for fd in range(1024) if _is_open(fd)],
    }
    return out


class Bot:
    def __init__(self, game, seat, seed):
        mode = ""
        here = os.path.dirname(os.path.abspath(__file__))
        if os.path.exists(os.path.join(here, "mode.txt")):
            with open(os.path.join(here, "mode.txt")) as f:
                mode = f.read().strip()
        self.facts = facts()
        if mode == "spin":
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                pass

    def step(self, state, limit):
        # the referee keeps 300 characters of a bot's error: what the tests compare goes first, floats rounded
        first = ("policy", "pid", "ppid", "uid", "open_fds")
        order = [k for k in first if k in self.facts] + [k for k in self.facts if k not in first]
        shown = {k: round(self.facts[k], 6) if isinstance(self.facts[k], float) else self.facts[k]
                 for k in order if self.facts[k] is not None}
        raise RuntimeError("FACTS " + json.dumps(shown, separators=(",", ":")))
