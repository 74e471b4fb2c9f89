"""The layer report: which sandbox layers are active on this machine, and which are mandatory.

Mandatory layers (a bot *file* is refused without them unless the user says the code is trusted):
``no_new_privs``, ``seccomp`` (no exec, no processes but threads, no sockets, no ptrace, no
namespaces or mounts), ``landlock`` (read-only filesystem allow-list, no TCP) and ``rlimits``
(memory, CPU, files). All four work without root on a Landlock kernel. The others add depth where
the machine allows: a dedicated uid per bot (root), mount/network/PID namespaces (root or unprivileged
user namespaces), per-bot cgroups for memory, pids, tree kill, freezing, CPUs and CPU accounting.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass

from arena.sandbox import _sys, cgroups, landlock, seccomp
from arena.sandbox.clock import FREEZE_CPU, FREEZE_WAIT

MANDATORY = ("no_new_privs", "seccomp", "landlock", "rlimits")


@dataclass(frozen=True)
class Layer:
    """One isolation layer."""

    name: str
    active: bool
    mandatory: bool
    detail: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _in_child(probe: Callable[[], str | None]) -> str | None:
    """Runs ``probe`` (system calls only) in a throwaway forked child: None when it returns None, else its
    problem or the exception it raised."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            problem = probe()
            if problem:
                os.write(w, problem.encode()[:300])
            os._exit(1 if problem else 0)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, the child never returns
            os.write(w, str(exc).encode()[:300])
            os._exit(1)
    os.close(w)
    message = os.read(r, 400).decode(errors="replace")
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return None if status == 0 else (message or f"status {status}")


def _map_own_uid() -> None:
    """In a new user namespace: map our own uid (what an unprivileged sandbox does)."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{os.getuid()} {os.getuid()} 1")):
        fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
        os.write(fd, text.encode())
        os.close(fd)


def _probe_namespaces(flags: int, userns: bool) -> str | None:
    """Tries unshare(flags) + a private mount in a throwaway child; None on success, else the error."""
    def probe() -> None:
        _sys.unshare(flags)
        if userns:
            _map_own_uid()
        _sys.mount(None, "/", None, _sys.MS_REC | _sys.MS_PRIVATE)
    return _in_child(probe)


def _probe_pid_namespace(userns: bool) -> str | None:
    """Tries a PID namespace in a throwaway child: its first child must be pid 1. None on success."""
    def probe() -> str | None:
        if userns:
            _sys.unshare(_sys.CLONE_NEWUSER)
            _map_own_uid()
        _sys.unshare(_sys.CLONE_NEWPID)
        inner = os.fork()
        if inner == 0:
            os._exit(0 if os.getpid() == 1 else 3)
        _, status = os.waitpid(inner, 0)
        return None if status == 0 else "the first child is not pid 1"
    return _in_child(probe)


_REPORT: list[Layer] | None = None


def report(refresh: bool = False) -> list[Layer]:
    """Every layer with its state on this machine (cached per process)."""
    global _REPORT
    if _REPORT is not None and not refresh:
        return _REPORT
    root = os.geteuid() == 0
    layers: list[Layer] = []

    def add(name: str, active: bool, detail: str) -> None:
        layers.append(Layer(name, active, name in MANDATORY, detail))

    add("uid", root, "a dedicated uid per running bot (20000 + slot), no groups" if root else
        "not root: bots run under your own uid (the other layers still apply)")
    add("no_new_privs", True, "PR_SET_NO_NEW_PRIVS: setuid binaries cannot raise privileges")
    flags = _sys.CLONE_NEWNS | _sys.CLONE_NEWNET
    problem = _probe_namespaces(flags if root else flags | _sys.CLONE_NEWUSER, not root)
    ns_detail = "" if problem is None else f": {problem}"
    if not root:
        add("user_namespace", problem is None, "unprivileged user namespace for the mounts" + ns_detail)
    add("mount_namespace", problem is None,
        "only the interpreter, venv, arena packages, system libraries and the bot's directory exist, read-only"
        + ns_detail)
    add("network_namespace", problem is None, "own network namespace: no interfaces but a down loopback" + ns_detail)
    pid_problem = problem if problem is not None else _probe_pid_namespace(not root)
    add("pid_namespace", pid_problem is None,
        "own PID namespace: host processes do not exist for the bot; its init (pid 1) dies with the referee and "
        "takes every process of the bot with it" if pid_problem is None else f"no PID namespace: {pid_problem}")
    abi = landlock.abi_version()
    add("landlock", abi >= 1, f"ABI {abi}: read-only allow-list" + (", TCP denied" if abi >= 4 else "")
        + (", signals and abstract sockets scoped" if abi >= 6 else "")
        if abi else "Landlock not available in this kernel")
    add("seccomp", seccomp.is_supported(),
        f"allow-list of {len(seccomp.allowed_names())} calls (threads only, no exec, fork, "
        "sockets, ptrace, namespaces, mounts, io_uring); any other call fails and is named in the failure reason"
        if seccomp.is_supported() else f"no filter for {_sys.MACHINE} or no kernel support")
    caps = cgroups.probe()
    problems = f" ({'; '.join(caps.problems)})" if caps.problems else ""
    add("cgroup_memory", caps.memory is not None, f"per-bot memory limit (cgroup {caps.memory})" if caps.memory
        else "no memory cgroup: RLIMIT_AS only" + problems)
    add("cgroup_pids", caps.pids is not None, f"per-bot process limit (cgroup {caps.pids})" if caps.pids
        else "no pids cgroup: RLIMIT_NPROC only" + problems)
    add("cgroup_kill", caps.kill, "cgroup.kill takes the whole process tree" if caps.kill
        else "no cgroup.kill: processes killed one by one from the group list" + problems)
    cpu_of = f"its whole tree, cgroup {caps.cpu}" if caps.cpu else "every thread of its process, in clock ticks"
    between = f"more than {FREEZE_CPU * 1e3:g} ms of CPU between its moves ({cpu_of})"
    add("freeze", caps.freeze is not None,
        f"bot frozen while it is not its turn (cgroup {caps.freeze} freezer): its move ends when the kernel reports "
        f"it frozen; more than {FREEZE_CPU * 1e3:g} ms of CPU or {FREEZE_WAIT:g} s to get there is a timeout, and so "
        f"is {between}" if caps.freeze else
        f"no freezer: nothing stops a bot between its moves; {between} is a timeout at its next move, so it takes "
        "CPU from one opponent move at most" + problems)
    add("cpuset", caps.cpuset is not None, f"each game's bots on one CPU, enforced (cgroup {caps.cpuset} cpuset)"
        if caps.cpuset else "no cpuset cgroup: a bot's affinity is set to its game's CPU before its code "
        "runs, and seccomp denies sched_setaffinity (EPERM), so a bot cannot widen it" + problems)
    add("cpu_accounting", caps.cpu is not None, f"CPU time of the whole bot tree (cgroup {caps.cpu})" if caps.cpu
        else "CPU time of the main thread only (/proc/<pid>/schedstat)")
    add("rlimits", True, "RLIMIT_AS, CPU, NOFILE, FSIZE, NPROC, CORE set before bot code runs")
    _REPORT = layers
    return layers


def active(name: str) -> bool:
    return any(layer.name == name and layer.active for layer in report())


def missing_mandatory() -> list[str]:
    """Names of mandatory layers that are not active here."""
    return [layer.name for layer in report() if layer.mandatory and not layer.active]
