"""Per-bot cgroups on cgroup v1, v2 and hybrid hosts: memory and process limits, tree kill, freeze, CPU time.

Each bot gets its own group *under the referee's own cgroup path* (``/proc/self/cgroup``) in every
hierarchy that offers something useful:

- v2 (pure or the hybrid ``unified`` mount): ``cgroup.kill`` (kills the whole tree, setsid'd and
  double-forked children included), ``cgroup.freeze``, ``cpu.stat``, and ``memory.max``/``pids.max`` when
  those controllers are enabled for our subtree;
- v1: ``memory`` (limit, swap limit, OOM counter), ``pids``, ``freezer``, ``cpuacct`` and ``cpuset``;
- a cpuset (v2 ``cpuset.cpus`` when delegated, else v1 ``cpuset``) holding the bot to the CPUs the referee's
  thread may use when it starts the bot: ``sched_setaffinity`` inside can narrow them, never widen them.

The child joins its groups itself (``join_paths``) before it drops root, so nothing it starts escapes.
Groups are removed only once empty (``rmdir`` refuses otherwise); groups of referees that died are emptied
(every process killed) and removed by the next referee's ``probe``.
"""
from __future__ import annotations

import atexit
import itertools
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psutil

ROOT = "/sys/fs/cgroup"
PARENT = "arena-sandbox"


def _own_paths() -> tuple[str | None, dict[str, str]]:
    """(v2 path, {v1 controller: path}) from /proc/self/cgroup."""
    v2: str | None = None
    v1: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                hid, controllers, path = line.rstrip("\n").split(":", 2)
                if hid == "0":
                    v2 = path
                else:
                    for c in controllers.split(","):
                        v1[c] = path
    except OSError:
        pass
    return v2, v1


def _v2_mount() -> str | None:
    for candidate in (ROOT, os.path.join(ROOT, "unified")):
        if os.path.exists(os.path.join(candidate, "cgroup.controllers")):
            return candidate
    return None


def _mkdir_fresh(path: str) -> None:
    """Creates a bot's group; a stale one of the same name (a dead referee whose pid came back) is removed
    first when it is empty, and otherwise this fails (never share a group with unknown processes)."""
    try:
        os.mkdir(path)
    except FileExistsError:
        os.rmdir(path)
        os.mkdir(path)


def _inherit_cpuset(parent: str) -> None:
    for key in ("cpuset.cpus", "cpuset.mems"):
        path = os.path.join(parent, key)
        if not _read(path).strip():
            _write(path, _read(os.path.join(os.path.dirname(parent), key)).strip())


KERNEL_KEPT = 4 << 20
"""Kernel memory a bot's group may leave behind at the end of a game (reclaimable caches, reparented to the
referee's group); more is freed then (:meth:`BotCgroup.reclaim`). An ordinary bot leaves ~0.3 MB."""


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


@dataclass
class Capabilities:
    """What per-bot cgroups can do on this host (probed once by creating and removing a group)."""

    memory: str | None = None
    """"v1" or "v2" when a memory limit can be set."""
    pids: str | None = None
    kill: bool = False
    """cgroup.kill (v2)."""
    freeze: str | None = None
    cpu: str | None = None
    cpuset: str | None = None
    """"v1" or "v2" when the bot's CPUs are enforced."""
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GroupName:
    """A bot group's directory name, ``bot-<referee pid>-<n>`` (``probe-...`` for the capability probe): the
    referee's pid says whose it is, so groups of a referee that died can be told and removed."""

    kind: str
    """"bot" or "probe"."""
    pid: int
    n: int

    KINDS = ("bot", "probe")

    def __str__(self) -> str:
        return f"{self.kind}-{self.pid}-{self.n}"

    @classmethod
    def parse(cls, text: str) -> GroupName | None:
        """The name ``text`` spells, or None when it is no group of arena's."""
        parts = text.split("-")
        if len(parts) != 3 or parts[0] not in cls.KINDS or not parts[1].isdigit() or not parts[2].isdigit():
            return None
        return cls(parts[0], int(parts[1]), int(parts[2]))


class Group:
    """One directory of a bot's group in one hierarchy: what a bot's group does there, in that hierarchy's files.
    :class:`V2Group` (the unified hierarchy, pure or the hybrid ``unified`` mount) and :class:`V1Group` (one v1
    controller's hierarchy) answer the same questions; a bot's :class:`BotCgroup` asks whichever holds each role."""

    version = ""

    def __init__(self, path: str) -> None:
        self.path = path

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    # memory
    def set_memory(self, limit: int) -> None:
        """Sets a new group's memory limit, swap included (none)."""
        raise NotImplementedError

    def memory_used(self) -> int:
        raise NotImplementedError

    def reclaim_all(self) -> None:
        """Frees every reclaimable page and cache entry charged to the (empty) group."""
        raise NotImplementedError

    def kernel_bytes(self) -> int:
        raise NotImplementedError

    def oom_kills(self) -> int:
        """OOM kills the kernel has counted in the group since it was made."""
        for line in _read(self.file(self.OOM_FILE)).splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    OOM_FILE = ""

    def hit_limit(self) -> bool:
        """Whether the memory limit was reached (where the OOM counter may miss it)."""
        return False

    # pids, cpuset
    def set_pids(self, n: int) -> None:
        _write(self.file("pids.max"), str(n))

    def set_cpus(self, cpu_list: str) -> None:
        _write(self.file("cpuset.cpus"), cpu_list)

    # freezer, CPU time
    FREEZE_FILE = ""
    STATE_FILE = ""

    def freeze_value(self, frozen: bool) -> bytes:
        raise NotImplementedError

    def is_frozen(self, state: bytes) -> bool:
        raise NotImplementedError

    CPU_FILE = ""

    def cpu_from(self, text: bytes) -> float | None:
        raise NotImplementedError


class V2Group(Group):
    """A group in the unified hierarchy: ``memory.max``, ``pids.max``, ``cgroup.freeze``, ``cpu.stat``,
    ``cgroup.kill``."""

    version = "v2"
    OOM_FILE = "memory.events"
    FREEZE_FILE = "cgroup.freeze"
    STATE_FILE = "cgroup.events"
    CPU_FILE = "cpu.stat"

    def set_memory(self, limit: int) -> None:
        _write(self.file("memory.max"), str(limit))
        if os.path.exists(self.file("memory.swap.max")):  # no swapping, ever
            _write(self.file("memory.swap.max"), "0")

    def memory_used(self) -> int:
        return int(_read(self.file("memory.current")))

    def reclaim_all(self) -> None:
        try:
            _write(self.file("memory.reclaim"), str(1 << 40))
        except OSError:  # EAGAIN when it cannot reclaim it all (what it could is freed), or no such file
            pass

    def kernel_bytes(self) -> int:
        stat = dict(line.split() for line in _read(self.file("memory.stat")).splitlines())
        return int(stat.get("slab", 0))

    def freeze_value(self, frozen: bool) -> bytes:
        return b"1" if frozen else b"0"

    def is_frozen(self, state: bytes) -> bool:  # an empty group (a killed bot's) is thawed by the kill: nothing runs
        return b"frozen 1" in state or b"populated 0" in state

    def cpu_from(self, text: bytes) -> float | None:
        if text.startswith(b"usage_usec "):  # the first line on every kernel so far
            return int(text[11:text.index(b"\n")]) / 1e6
        for line in text.split(b"\n"):
            if line.startswith(b"usage_usec"):
                return int(line.split()[1]) / 1e6
        return None

    @property
    def can_kill(self) -> bool:
        return os.path.exists(self.file("cgroup.kill"))


class V1Group(Group):
    """A group in one v1 controller's hierarchy (``memory``, ``pids``, ``freezer``, ``cpuacct`` or ``cpuset``)."""

    version = "v1"
    OOM_FILE = "memory.oom_control"
    FREEZE_FILE = STATE_FILE = "freezer.state"
    CPU_FILE = "cpuacct.usage"

    def __init__(self, path: str, controller: str) -> None:
        super().__init__(path)
        self.controller = controller

    def set_memory(self, limit: int) -> None:
        # the limit first, then memsw (memory + swap: the same limit forbids swapping), which may never be below it
        _write(self.file("memory.limit_in_bytes"), str(limit))
        try:
            _write(self.file("memory.memsw.limit_in_bytes"), str(limit))
        except OSError:  # (a kernel without swap accounting)
            pass

    def memory_limit(self) -> int:
        return int(_read(self.file("memory.limit_in_bytes")))

    def memory_used(self) -> int:
        return int(_read(self.file("memory.usage_in_bytes")))

    def reclaim_all(self) -> None:
        try:
            _write(self.file("memory.force_empty"), "0")
        except OSError:
            pass

    def kernel_bytes(self) -> int:
        return int(_read(self.file("memory.kmem.usage_in_bytes")))

    def hit_limit(self) -> bool:
        return int(_read(self.file("memory.failcnt")) or 0) > 0 and \
            int(_read(self.file("memory.max_usage_in_bytes"))) >= self.memory_limit() - (1 << 20)

    def freeze_value(self, frozen: bool) -> bytes:
        return b"FROZEN" if frozen else b"THAWED"

    def is_frozen(self, state: bytes) -> bool:
        return state.startswith(b"FROZEN")

    def cpu_from(self, text: bytes) -> float | None:
        return int(text) / 1e9


class _Role:
    """The version ("v1", "v2" or None) of the group holding one of a bot's roles (the attribute ``attr``)."""

    def __init__(self, attr: str) -> None:
        self.attr = attr

    def __get__(self, obj: Any, owner: Any = None) -> str | None:
        group = getattr(obj, self.attr, None) if obj is not None else None
        return group.version if group is not None else None


@dataclass
class BotCgroup:
    """The cgroups of one running bot: a group in each hierarchy that offers something, and which of them holds
    each role (memory limit, process limit, freezer, CPU time, cpuset, tree kill)."""

    name: str
    groups: dict[str, Group] = field(default_factory=dict)
    """hierarchy key ("v2", "memory", "pids", "freezer", "cpuacct", "cpuset") -> its group."""
    problems: list[str] = field(default_factory=list)
    _memory: Group | None = None
    _pids: Group | None = None
    _freezer: Group | None = None
    _cpu: Group | None = None
    _cpuset: Group | None = None
    _freeze_fd: int = -1
    _state_fd: int = -1
    _cpu_fd: int = -1
    _limits: tuple[int | None, int | None, str] = (None, None, "")
    """(memory bytes, pids, CPU list) as written: a pooled group is rewritten only where the next bot's differ."""
    _memory_parent: str = ""
    """The v1 memory hierarchy's folder of bot groups: a pooled group gets a new memory group there for each bot."""
    _cpu_base: float = 0.0
    """CPU seconds the group had used before this bot (v2 ``cpu.stat`` cannot be reset)."""
    _kill_sent: bool = False
    """The kill went to the bot's whole tree (:meth:`signal_kill`): a later :meth:`kill` sends it again only when the
    groups are not empty (each send takes the kernel's cgroup lock, which every bot start and freeze also takes)."""

    @property
    def dirs(self) -> dict[str, str]:
        """hierarchy key -> directory."""
        return {key: group.path for key, group in self.groups.items()}

    # which version holds each role ("v1", "v2" or None): what the layer check and the failure texts say
    memory = _Role("_memory")
    pids = _Role("_pids")
    freeze_kind = _Role("_freezer")
    cpu_kind = _Role("_cpu")
    cpuset = _Role("_cpuset")

    @classmethod
    def create(cls, name: str, memory_bytes: int | None, max_pids: int | None,
               cpus: set[int] | None = None) -> BotCgroup:
        """Creates the groups it can; never raises (``problems`` says what failed).

        ``cpus``: the CPUs the bot may use (default: those of the calling thread, i.e. the referee's)."""
        group = cls(name)
        cpu_list = _cpu_list(cpus)
        v2path, v1paths = _own_paths()
        mount = _v2_mount()
        if mount is not None and v2path is not None:
            parent = os.path.join(mount, v2path.lstrip("/"), PARENT)
            try:
                os.makedirs(parent, exist_ok=True)
                v2 = V2Group(os.path.join(parent, name))
                _mkdir_fresh(v2.path)
                group.groups["v2"] = v2
                enabled = set(_read(os.path.join(parent, "cgroup.subtree_control")).split())
                wanted = {"memory", "pids", "cpuset"} & set(_read(os.path.join(parent, "cgroup.controllers")).split())
                if wanted - enabled:
                    try:
                        _write(os.path.join(parent, "cgroup.subtree_control"),
                               " ".join("+" + c for c in wanted - enabled))
                    except OSError as exc:
                        group.problems.append(f"v2 controllers {sorted(wanted)} not delegated: {exc.strerror}")
                if memory_bytes and os.path.exists(v2.file("memory.max")):
                    v2.set_memory(memory_bytes)
                    group._memory = v2
                if max_pids and os.path.exists(v2.file("pids.max")):
                    v2.set_pids(max_pids)
                    group._pids = v2
                if os.path.exists(v2.file("cgroup.freeze")):
                    group._freezer = v2
                if os.path.exists(v2.file("cpu.stat")):
                    group._cpu = v2
                if os.path.exists(v2.file("cpuset.cpus")):
                    v2.set_cpus(cpu_list)
                    group._cpuset = v2
            except OSError as exc:
                group.problems.append(f"v2 cgroup: {exc.strerror or exc}")
        roles = {"memory": "_memory", "pids": "_pids", "freezer": "_freezer", "cpuacct": "_cpu", "cpuset": "_cpuset"}
        for controller, role in roles.items():
            if getattr(group, role) is not None:  # (the unified hierarchy holds it)
                continue
            base = os.path.join(ROOT, controller)
            if controller not in v1paths or not os.path.exists(os.path.join(base, "tasks")):
                continue
            try:
                parent = os.path.join(base, v1paths[controller].lstrip("/"), PARENT)
                os.makedirs(parent, exist_ok=True)
                if controller == "cpuset":  # a v1 cpuset starts empty: give ours its parent's CPUs and nodes
                    _inherit_cpuset(parent)
                v1 = V1Group(os.path.join(parent, name), controller)
                if controller == "memory":
                    group._memory_parent = parent
                _mkdir_fresh(v1.path)
                group.groups[controller] = v1
                if controller == "memory" and memory_bytes:
                    v1.set_memory(memory_bytes)
                elif controller == "pids" and max_pids:
                    v1.set_pids(max_pids)
                elif controller == "cpuset":
                    v1.set_cpus(cpu_list)
                    _write(v1.file("cpuset.mems"), _read(os.path.join(parent, "cpuset.mems")).strip())
                if controller == "memory" and not memory_bytes or controller == "pids" and not max_pids:
                    continue
                setattr(group, role, v1)
            except OSError as exc:
                group.problems.append(f"v1 {controller}: {exc.strerror or exc}")
        group._limits = (memory_bytes, max_pids, cpu_list)
        group._open_fast_paths()
        return group

    @classmethod
    def acquire(cls, memory_bytes: int | None, max_pids: int | None, cpus: set[int] | None = None) -> BotCgroup:
        """A group for the next bot: an emptied one from this process's pool (:meth:`release`), with a new memory
        group and its limits and CPUs set for this bot, else a new one (:meth:`create`). Never raises
        (``problems`` says what failed)."""
        group = _pool.take()
        if group is not None:
            if group._reuse(memory_bytes, max_pids, cpus):
                return group
            group.destroy()
        return cls.create(_pool.new_name(), memory_bytes, max_pids, cpus)

    def release(self) -> bool:
        """Ends the bot's use of the group: kills what is left; then removes its memory group and keeps the rest for
        the next bot when they are empty and clean (:meth:`_clean`) and the pool has room, else removes them all
        (:meth:`destroy`). True when every process of the bot is gone.

        The memory group is never reused: the kernel frees part of a dead bot's memory (its threads' kernel objects)
        at times of its own, up to seconds later under load, so what a used group still has charged is not what stays
        (a reused group once granted the next bot up to 0.26 MB more than its limit, an amount the last bot chose).
        A new memory group starts at zero, as every bot's did before the pool; on a host whose memory controller is
        in the unified hierarchy, the one group holds memory with the rest, so nothing is pooled there."""
        if not self.kill():
            return self.destroy()
        if not self.problems and isinstance(self._memory, V1Group) and self._drop_memory_group() and self._clean() \
                and _pool.keep(self):
            return True
        return self.destroy()

    def _drop_memory_group(self) -> bool:
        """Removes the (empty) v1 memory group, freeing its kernel memory first (:meth:`reclaim`)."""
        self.reclaim()
        memory = self.groups.pop("memory", None)
        self._memory = None
        if memory is None:
            return True
        deadline = time.monotonic() + 3.0
        while True:
            try:
                os.rmdir(memory.path)
                return True
            except FileNotFoundError:
                return True
            except OSError:  # a dying process still counted: retry; a later clean_stale() gets the rest
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)

    def _clean(self) -> bool:
        """Makes an emptied group (without its memory group) as a new one looks to its next bot: thawed, its CPU time
        counted from now; False when it cannot (the group is then removed)."""
        self.freeze(False)
        self._cpu_base = 0.0
        self._cpu_base = self.cpu_seconds() or 0.0
        return self.frozen() and not self.pids_in_group()

    def _reuse(self, memory_bytes: int | None, max_pids: int | None, cpus: set[int] | None) -> bool:
        """Gives a pooled group a new memory group (a fresh name) and sets its limits and CPUs for its next bot; False
        when that fails."""
        cpu_list = _cpu_list(cpus)
        _, old_pids, old_cpus = self._limits
        self._kill_sent = False
        try:
            if memory_bytes and self._memory_parent:
                memory = V1Group(os.path.join(self._memory_parent, _pool.new_name()), "memory")
                _mkdir_fresh(memory.path)
                self.groups["memory"] = memory
                memory.set_memory(memory_bytes)
                self._memory = memory
            if max_pids != old_pids and max_pids and self._pids is not None:
                self._pids.set_pids(max_pids)
            if cpu_list != old_cpus and self._cpuset is not None:
                self._cpuset.set_cpus(cpu_list)
        except OSError:
            return False
        self._limits = (memory_bytes, max_pids, cpu_list)
        return True

    def _open_fast_paths(self) -> None:
        # Keep the freeze, frozen-state and CPU files open: a write/pread per move instead of open+close.
        try:
            if self._freezer is not None:
                self._freeze_fd = os.open(self._freezer.file(self._freezer.FREEZE_FILE), os.O_WRONLY | os.O_CLOEXEC)
                self._state_fd = os.open(self._freezer.file(self._freezer.STATE_FILE), os.O_RDONLY | os.O_CLOEXEC)
            if self._cpu is not None:
                self._cpu_fd = os.open(self._cpu.file(self._cpu.CPU_FILE), os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            self.problems.append(f"cgroup files: {exc.strerror}")

    @property
    def can_kill(self) -> bool:
        v2 = self.groups.get("v2")
        return isinstance(v2, V2Group) and v2.can_kill

    def join_paths(self) -> list[str]:
        """The ``cgroup.procs`` files a child writes ``0`` to in order to join every group."""
        return [group.file("cgroup.procs") for group in self.groups.values()]

    def freeze(self, frozen: bool = True) -> None:
        """Asks the kernel to freeze (or thaw) every process of the bot and returns at once: a thread inside a
        system call that only fatal signals stop (a long page-cache read) runs on until the call ends, so the
        bot is stopped only once :meth:`frozen` says so (:meth:`wait_frozen`). A dead group is ignored."""
        if self._freeze_fd < 0 or self._freezer is None:
            return
        try:
            os.write(self._freeze_fd, self._freezer.freeze_value(frozen))
        except OSError:
            pass

    def frozen(self) -> bool:
        """True when the kernel reports every process of the bot frozen (v2 ``frozen 1`` in ``cgroup.events``, v1
        ``FROZEN`` in ``freezer.state``); also when there is no freezer to ask, or the group is empty or gone
        (nothing of the bot can run then)."""
        if self._state_fd < 0 or self._freezer is None:
            return True
        try:
            return self._freezer.is_frozen(os.pread(self._state_fd, 256, 0))
        except OSError:
            return True

    def wait_frozen(self, cpu_allowance: float, timeout: float) -> str | None:
        """Waits, after ``freeze(True)``, until the kernel reports the bot frozen. None once it is; else why it is
        not: it used more than ``cpu_allowance`` seconds of CPU since the wait began, or ``timeout`` seconds passed.

        The usual freeze is done by the time this is called (one read says so); otherwise a few yields (the bot's
        threads reach the freezer's trap within microseconds once they run), then sleeps from 20 us doubling to
        1 ms (the kernel spaces ``cgroup.events`` notifications 10 ms apart: too slow to wait on alone)."""
        if self.frozen():
            return None
        start = time.monotonic()
        cpu0 = self.cpu_seconds()
        for tries in itertools.count():
            if self.frozen():
                return None
            waited = time.monotonic() - start
            cpu = self.cpu_seconds() if tries >= 4 else None  # the yields take microseconds: no CPU to check yet
            if cpu is not None and cpu0 is not None and cpu - cpu0 > cpu_allowance:
                return (f"kept running {cpu - cpu0:.3f} s of CPU after its move ended (at most {cpu_allowance:g} s "
                        f"while it stops; a thread inside a long system call?)")
            if waited > timeout:
                return f"did not stop within {timeout:g} s of the end of its move"
            if tries < 4:
                os.sched_yield()
            else:
                time.sleep(min(0.00002 * 2 ** (tries - 4), 0.001))
        return None  # unreachable: the loop returns

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process of the bot so far (None when not measurable): of this bot only, in a
        reused group."""
        if self._cpu_fd < 0 or self._cpu is None:
            return None
        try:
            used = self._cpu.cpu_from(os.pread(self._cpu_fd, 4096, 0))
        except OSError:
            return None
        return None if used is None else used - self._cpu_base

    def _oom_count(self) -> int:
        """OOM kills the kernel has counted in the group (v2 ``memory.events``, v1 ``memory.oom_control``)."""
        return self._memory.oom_kills() if self._memory is not None else 0

    def oom_killed(self) -> bool:
        """True when the kernel OOM-killed a process of this group (the memory limit was hit)."""
        try:
            return self._oom_count() > 0 or (self._memory is not None and self._memory.hit_limit())
        except (OSError, ValueError):
            return False

    def pids_in_group(self) -> list[int]:
        """Every process still in any of the bot's groups."""
        found: set[int] = set()
        for group in self.groups.values():
            try:
                found.update(int(p) for p in _read(group.file("cgroup.procs")).split())
            except OSError:
                pass
        return sorted(found)

    def signal_kill(self) -> None:
        """Sends the kill to every process of the bot (the whole tree) without waiting for them to die; once (a game's
        end, a later close and the release all end the bot: :meth:`kill` sends it again only to what is left)."""
        if not self._kill_sent:
            self._send_kill()

    def _send_kill(self) -> None:
        if self.can_kill:
            try:
                _write(self.groups["v2"].file("cgroup.kill"), "1")
            except OSError:  # (a group removed under us: nothing to kill; a later kill() tries again)
                self.freeze(False)
                return
        else:  # v1: freeze so nothing forks while we kill, SIGKILL everyone, thaw so the kills land
            self.freeze(True)
            for pid in self.pids_in_group():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        self.freeze(False)
        self._kill_sent = True

    def kill(self, timeout: float = 2.0, pause: Callable[[float], object] = time.sleep) -> bool:
        """Kills every process of the bot (the whole tree) and waits until the groups are empty.

        ``pause(seconds)`` waits between looks at the groups: by default a sleep; the referee's handle waits on the
        bot's process instead, which wakes as soon as it exits."""
        self.signal_kill()
        deadline = time.monotonic() + timeout
        delay = 0.0001  # a killed bot is usually gone within a millisecond: back off from 0.1 ms to 2 ms
        looks = 0
        while self.pids_in_group():
            if time.monotonic() > deadline:
                return False
            if looks == 1:  # still there after a wait: joined after the kill (an init joins its groups itself) or
                self._send_kill()  # forking while it dies; the kill takes the whole tree at once
            looks += 1
            for pid in self.pids_in_group():  # stragglers (v1 race with a fork)
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            pause(delay)
            delay = min(delay * 2, 0.002)
        return True

    def kernel_bytes(self) -> int:
        """Kernel memory still charged to the group (v1 ``memory.kmem.usage_in_bytes``, v2 ``memory.stat``'s slab):
        after the bot's processes are gone, mostly the dentries and inodes its look-ups left in the caches."""
        try:
            return self._memory.kernel_bytes() if self._memory is not None else 0
        except (OSError, ValueError):
            return 0

    def reclaim(self) -> None:
        """Frees the kernel memory charged to the (empty) group before it goes, when there is more than
        :data:`KERNEL_KEPT`: the dentries and inodes a bot's look-ups made (150,000 stats of missing names: ~30 MB of
        negative dentries) would otherwise outlive the game, reparented to the referee's group. v1
        ``memory.force_empty``, v2 ``memory.reclaim`` (both shrink the group's slab caches; ~50 ms, so not for the
        ~0.3 MB an ordinary bot leaves). Best effort: a kernel without them keeps the reparenting."""
        if self._memory is not None and self.kernel_bytes() > KERNEL_KEPT:
            self._memory.reclaim_all()

    def destroy(self) -> bool:
        """Kills what is left, frees its kernel memory (:meth:`reclaim`) and removes the groups; True when every
        group was emptied and removed."""
        emptied = self.kill()
        if emptied:
            self.reclaim()
        for fd in (self._freeze_fd, self._state_fd, self._cpu_fd):
            if fd >= 0:
                os.close(fd)
        self._freeze_fd = self._state_fd = self._cpu_fd = -1
        deadline = time.monotonic() + 3.0
        for group in self.groups.values():
            while True:
                try:
                    os.rmdir(group.path)
                    break
                except FileNotFoundError:
                    break
                except OSError:  # a dying process still counted: retry; a later clean_stale() gets the rest
                    if time.monotonic() > deadline:
                        emptied = False
                        break
                    time.sleep(0.005)
        self.groups.clear()
        return emptied


def _cpu_list(cpus: set[int] | None) -> str:
    """``cpuset.cpus``'s text for ``cpus`` (default: those of the calling thread)."""
    return ",".join(str(c) for c in sorted(cpus if cpus is not None else os.sched_getaffinity(0)))


POOL_SIZE = 16
"""Emptied bot groups one referee process keeps for its next bots (a league worker's game holds 2-4 at once). A
group made and removed per bot cost two machine-wide cgroup operations per hierarchy (``mkdir``/``rmdir`` serialise
on the kernel's cgroup mutex: the many-core measurement's 0.6x from 1 to 16 workers); a pooled one costs a few writes
and its memory group (:meth:`BotCgroup._reuse`)."""


class _Pool:
    """This process's emptied bot groups, oldest first (a forked child starts with none: they are its parent's)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.groups: list[BotCgroup] = []
        self.owner = os.getpid()
        self.counter = itertools.count()

    def _mine(self) -> None:
        if self.owner != os.getpid():  # (with the lock held) a fork's copy: the parent's groups are not ours
            self.groups, self.owner, self.counter = [], os.getpid(), itertools.count()

    def new_name(self) -> str:
        with self.lock:
            self._mine()
            return str(GroupName("bot", os.getpid(), next(self.counter)))

    def take(self) -> BotCgroup | None:
        """The group that waited longest, if any."""
        with self.lock:
            self._mine()
            return self.groups.pop(0) if self.groups else None

    def keep(self, group: BotCgroup) -> bool:
        with self.lock:
            self._mine()
            if len(self.groups) >= POOL_SIZE:
                return False
            self.groups.append(group)
            return True

    def dirs(self) -> list[str]:
        """The directories of the pooled groups (empty, kept for the next bots)."""
        with self.lock:
            self._mine()
            return [group.path for g in self.groups for group in g.groups.values()]

    def drain(self) -> None:
        """Removes every pooled group (at exit: a referee's groups are not left for the next one to clean)."""
        with self.lock:
            self._mine()
            groups, self.groups = self.groups, []
        for group in groups:
            group.destroy()


_pool = _Pool()
atexit.register(_pool.drain)


def pooled() -> list[str]:
    """The directories of this process's pooled (empty, reusable) bot groups: every other group of
    :func:`groups_of` this process is a bot's now."""
    return _pool.dirs()


_CAPS: Capabilities | None = None
_ONLINE: set[int] | None = None


def online_cpus() -> set[int]:
    """The CPUs of the machine that are online (``/sys/devices/system/cpu/online``, e.g. ``0-3,6``)."""
    global _ONLINE
    if _ONLINE is None:
        cpus: set[int] = set()
        try:
            for part in _read("/sys/devices/system/cpu/online").strip().split(","):
                first, _, last = part.partition("-")
                cpus.update(range(int(first), int(last or first) + 1))
        except (OSError, ValueError):
            cpus = set(range(os.cpu_count() or 1))
        _ONLINE = cpus
    return _ONLINE


def pinned() -> bool:
    """True when the calling thread may use fewer CPUs than the machine has online (a bot it starts could
    widen its own affinity beyond them unless a cpuset holds it)."""
    return not online_cpus() <= os.sched_getaffinity(0)


def parent_dirs() -> list[str]:
    """The ``arena-sandbox`` directories under this process's own cgroups (where bot groups are made)."""
    v2path, v1paths = _own_paths()
    parents = []
    mount = _v2_mount()
    if mount is not None and v2path is not None:
        parents.append(os.path.join(mount, v2path.lstrip("/"), PARENT))
    for controller, path in v1paths.items():
        parents.append(os.path.join(ROOT, controller, path.lstrip("/"), PARENT))
    return [p for p in parents if os.path.isdir(p)]


def groups_of(pid: int) -> list[str]:
    """Bot groups created by the referee process ``pid`` that still exist."""
    return [os.path.join(parent, name) for parent in parent_dirs() for name in os.listdir(parent)
            if (parsed := GroupName.parse(name)) is not None and parsed.pid == pid]


def clean_stale() -> int:
    """Removes empty groups left by referees that died (``bot-<pid>-<n>`` with a dead pid); returns how many."""
    removed = 0
    for parent in parent_dirs():
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            parsed = GroupName.parse(name)
            if parsed is None or psutil.pid_exists(parsed.pid):
                continue
            path = os.path.join(parent, name)
            _empty(path)  # its referee is dead: nothing in it may live on (a bot that escaped its death signal)
            try:
                os.rmdir(path)
                removed += 1
            except OSError:
                pass
    return removed


def _empty(path: str) -> None:
    """Kills every process of a dead referee's group (``cgroup.kill`` where it exists, and each listed process:
    ``cgroup.kill`` misses a process whose main thread has exited while another thread runs)."""
    try:
        _write(os.path.join(path, "cgroup.kill"), "1")
    except OSError:
        pass
    try:
        pids = [int(p) for p in _read(os.path.join(path, "cgroup.procs")).split()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def probe() -> Capabilities:
    """What per-bot cgroups can do here (cached). Also removes groups left behind by dead referees."""
    global _CAPS
    if _CAPS is None:
        try:
            clean_stale()
        except OSError:
            pass
        g = BotCgroup.create(str(GroupName("probe", os.getpid(), time.monotonic_ns())), 64 << 20, 8)
        _CAPS = Capabilities(g.memory, g.pids, g.can_kill, g.freeze_kind, g.cpu_kind, g.cpuset, list(g.problems))
        g.destroy()
    return _CAPS
