"""How long a bot's first cgroup join takes on this machine: a cost every game pays where the kernel is not tuned.

Every bot joins its cgroups (a write to ``cgroup.procs``) before its code runs. The kernel serialises such a move
against every fork and exit on the machine with one lock whose writer, by default, first waits for an RCU grace
period unless another move happened within the last one. A league's games come tens of milliseconds apart, so each
game's first join waits: ~8 ms (up to 15 ms under load) on this project's 2-core VM, on the critical path of the
game's start. The ``favordynmods`` option of a cgroup hierarchy keeps that lock ready for writers (forks and exits
pay a little more, machine-wide), and the join takes ~0.6 ms. arena never changes the host's cgroup mounts itself;
``arena sandbox check`` measures the join and says what an organiser can do (docs/sandbox.md, "A cgroup join's
wait").
"""
from __future__ import annotations

import os
import statistics
import time

SLOW_MS = 2.0
"""A first join slower than this is the grace-period wait (measured: ~8 ms without the option, ~0.6 ms with it)."""

QUIET = 0.05
"""Seconds with no join before the one timed: about the gap between two games' starts in a league."""

ADVICE = ("each game's first bot start waits ~{ms:.1f} ms for the kernel's cgroup lock (an RCU grace period), "
          "and holds up other games' moves meanwhile when several are played at once; "
          "`mount -o remount,favordynmods /sys/fs/cgroup` (or the cgroup2 mount, e.g. /sys/fs/cgroup/unified) as "
          "root makes cgroup moves cheap machine-wide, at a small cost to every fork and exit")


def measure(tries: int = 3) -> float | None:
    """Milliseconds the first cgroup join of a fresh process takes after :data:`QUIET` seconds without one (the
    median of ``tries``), or None where arena has no cgroup of its own to join (not root, no cgroups)."""
    # start-up: only for `arena sandbox check`
    from arena.sandbox import cgroups
    group = cgroups.BotCgroup.acquire(None, None)
    try:
        paths = group.join_paths()
        if group.problems or not paths:
            return None
        return statistics.median(_one_join(paths[0]) for _ in range(tries))
    finally:
        group.destroy()


def _one_join(procs_file: str) -> float:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # waits to be moved, then exits
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    os.close(r)
    try:
        time.sleep(QUIET)
        fd = os.open(procs_file, os.O_WRONLY)
        try:
            start = time.perf_counter()
            os.write(fd, str(pid).encode())
            return (time.perf_counter() - start) * 1000
        finally:
            os.close(fd)
    finally:
        os.close(w)
        os.waitpid(pid, 0)


def advice(ms: float | None) -> str | None:
    """What an organiser can do about a first join of ``ms`` milliseconds, None when there is nothing to do."""
    return ADVICE.format(ms=ms) if ms is not None and ms > SLOW_MS else None
