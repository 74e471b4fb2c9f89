"""``Sandbox``: starts bot processes with every layer this machine offers (see :mod:`arena.sandbox.check`)."""
from __future__ import annotations

import math
import os
import resource
import sys
import threading
from typing import Any

from arena.limits import MAX_DECISIONS, Limits
from arena.sandbox import cgroups, check, slots, spawn, zygote
from arena.sandbox.cgroups import BotCgroup

# Thread pools of numeric libraries would blow RLIMIT_AS and the process limit: one thread each.
BOT_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/bot", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}


def import_paths() -> list[str]:
    """sys.path for the bot host: arena's package roots, then the site-packages of this interpreter."""
    roots = []
    for package in spawn.package_dirs():  # this installation's packages, never a same-named folder in the cwd
        root = os.path.dirname(package)
        if root not in roots:
            roots.append(root)
    return roots + [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and p not in roots]


def bootstrap() -> str:
    """The ``-c`` program of the bot host. ``-S`` skips site.py and .pth processing (a faster start)."""
    return (f"import sys; sys.path[0:0] = {import_paths()!r}; "
            "from arena.sandbox.host import main; main(sys.argv[1:])")


def zygote_argv() -> list[str]:
    """The command of the fork server (same interpreter, flags and sys.path as an exec'd bot host)."""
    return [sys.executable, "-I", "-B", "-S", "-c",
            (f"import sys; sys.path[0:0] = {import_paths()!r}; "
             "from arena.sandbox.zygote import serve; serve(int(sys.argv[1]))")]


def warm_up() -> None:
    """Does this process's one-time sandbox set-up now (layer checks, the cgroup probe, the fork server), so a
    league worker's first game does not pay for it. Best effort: the first bot start retries what failed."""
    try:
        for layer in ("mount_namespace", "landlock", "seccomp"):
            check.active(layer)
        cgroups.probe()
        if zygote.enabled():
            zygote.get(zygote_argv(), dict(BOT_ENV))
    except Exception:  # noqa: BLE001, S110 - not fatal here: the first bot start retries it
        pass


def game_cpu() -> int | None:
    """The CPU a game's bots run on: the referee's own when it is pinned to one (a league worker), else the one
    its thread runs on now (the scheduler spreads referees over the CPUs). A game is a ping-pong between the
    referee and one bot at a time, so one CPU serves it. None where affinity cannot be read."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    allowed = os.sched_getaffinity(0)
    if len(allowed) == 1:
        return next(iter(allowed))
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/stat") as f:
            now = int(f.read().rsplit(")", 1)[1].split()[36])  # field 39, "processor": last CPU it ran on
    except (OSError, ValueError, IndexError):
        now = min(allowed)
    return now if now in allowed else min(allowed)


class Sandbox:
    """Per-game launcher: knows the active layers, derives rlimits from the Limits and starts bots."""

    def __init__(self, limits: Limits, game: Any, *, isolate: bool = True) -> None:
        """``isolate=False`` starts plain subprocesses with rlimits only (trusted code on a machine without the
        layers)."""
        self.limits = limits
        self.game = game
        root = os.geteuid() == 0
        self.use_namespaces = isolate and check.active("mount_namespace")
        self.mode = ("root" if root else "userns") if self.use_namespaces else "none"
        self.use_uid = isolate and root
        self.use_landlock = isolate and check.active("landlock")
        self.use_seccomp = isolate and check.active("seccomp")
        caps = cgroups.probe()
        self.use_cgroups = isolate and (caps.memory is not None or caps.kill or caps.freeze is not None)
        self.started = 0
        """Bots started so far (each tells the fork server to fork none ahead till :meth:`started_all`)."""
        self.cpu = game_cpu() if isolate else None
        """The one CPU every bot of this game runs on: what a bot sees of the machine's CPUs is the same in every
        game (a league's pinned workers, validation, a match), so it cannot tell them apart by it."""

    def active_layers(self) -> list[str]:
        """Names of the layers every bot of this sandbox gets."""
        names = ["no_new_privs", "rlimits"]
        if self.use_uid:
            names.append("uid")
        if self.use_namespaces:
            names += ["mount_namespace", "network_namespace"]
            if check.active("pid_namespace"):
                names.append("pid_namespace")
        if self.use_landlock:
            names.append("landlock")
        if self.use_seccomp:
            names.append("seccomp")
        if self.use_cgroups:
            names += [n for n in ("cgroup_memory", "cgroup_pids", "cgroup_kill", "freeze", "cpuset", "cpu_accounting")
                      if check.active(n)]
        return names

    def rlimits(self, memory_cgroup: bool) -> list[tuple[int, int]]:
        mb = 1 << 20
        mem = self.limits.memory_mb * mb
        # RLIMIT_AS counts address space, not memory: with a memory cgroup it is only a loose backstop.
        address_space = max(2 * mem, mem + 1024 * mb) if memory_cgroup else mem + 256 * mb
        cpu: float
        if self.limits.cpu_seconds is not None:
            cpu = self.limits.cpu_seconds
        else:
            try:
                moves = int(self.limits.max_moves or self.game.max_game_length())
            except (NotImplementedError, AttributeError):
                moves = 1000
            cpu = self.limits.bot_seconds(min(moves, MAX_DECISIONS)) + 10  # with a clock: at most the whole clock
        out = [(resource.RLIMIT_AS, address_space), (resource.RLIMIT_CPU, math.ceil(cpu)),
               (resource.RLIMIT_NOFILE, self.limits.max_open_files),
               (resource.RLIMIT_FSIZE, self.limits.max_file_size_mb * mb), (resource.RLIMIT_CORE, 0)]
        if self.use_uid:  # per uid: only meaningful with a dedicated uid
            out.append((resource.RLIMIT_NPROC, self.limits.max_processes))
        return out

    def started_all(self) -> None:
        """Every bot of the game has started (and loaded): the fork server may fork the next game's ahead now. Until
        then it forks none (a fork and a copy of the runtime's mounts compete with the bots' start for the kernel's
        locks)."""
        if self.started and zygote.enabled():
            server = zygote.current()
            if server is not None:
                server.fill()

    def start(self, bot: dict[str, Any], fds: tuple[int, int], stderr_fd: int) -> tuple[Any, Any, Any, spawn.Plan]:
        """Starts one bot process. Returns (Popen, BotCgroup or None, Slot or None, Plan).

        Raises:
            OSError: the process could not be set up.
        """
        slot = slots.acquire(start=os.getpid() % 64) if self.use_uid else None
        group = None
        try:
            if self.use_cgroups:  # (an emptied group of an earlier bot where one is pooled)
                group = BotCgroup.acquire(self.limits.memory_mb << 20, self.limits.max_processes,
                                          None if self.cpu is None else {self.cpu})
            bot_path = os.path.abspath(bot["path"]) if bot["kind"] == "file" else None
            plan = spawn.make_plan(self.mode, slot.uid if slot else os.getuid(), bot_path,
                                   group.join_paths() if group else [],
                                   self.rlimits(bool(group and group.memory)))
            plan.cpu = self.cpu
            proc: Any = None  # a Popen or a zygote.ZygoteChild (same interface)
            if zygote.enabled():
                try:
                    self.started += 1
                    proc = zygote.get(zygote_argv(), dict(BOT_ENV)).spawn(plan, (fds[0], fds[1], stderr_fd),
                                                                          hold=True)
                except OSError:
                    proc = None  # fall back to a fresh interpreter
            if proc is None:
                argv = [sys.executable, "-I", "-B", "-S", "-c", bootstrap(), str(fds[0]), str(fds[1])]
                proc = spawn.launch(plan, argv, dict(BOT_ENV), fds, stderr_fd)
        except BaseException:
            if group is not None:
                group.destroy()
            if slot is not None:
                slot.release()
            raise
        return proc, group, slot, plan
