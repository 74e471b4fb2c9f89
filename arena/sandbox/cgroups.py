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


@dataclass
class BotCgroup:
    """The cgroups of one running bot."""

    name: str
    dirs: dict[str, str] = field(default_factory=dict)
    """hierarchy key ("v2", "memory", "pids", "freezer", "cpuacct") -> directory."""
    memory: str | None = None
    pids: str | None = None
    freeze_kind: str | None = None
    cpu_kind: str | None = None
    cpuset: str | None = None
    problems: list[str] = field(default_factory=list)
    _freeze_fd: int = -1
    _state_fd: int = -1
    _cpu_fd: int = -1
    _limits: tuple[int | None, int | None, str] = (None, None, "")
    """(memory bytes, pids, CPU list) as written: a pooled group is rewritten only where the next bot's differ."""
    _oom_base: int = 0
    """OOM kills counted in the group before this bot (a reused group's counter never goes back to 0)."""
    _cpu_base: float = 0.0
    """CPU seconds the group had used before this bot (v2 ``cpu.stat`` cannot be reset)."""

    @classmethod
    def create(cls, name: str, memory_bytes: int | None, max_pids: int | None,
               cpus: set[int] | None = None) -> BotCgroup:
        """Creates the groups it can; never raises (``problems`` says what failed).

        ``cpus``: the CPUs the bot may use (default: those of the calling thread, i.e. the referee's)."""
        group = cls(name)
        cpu_list = ",".join(str(c) for c in sorted(cpus if cpus is not None else os.sched_getaffinity(0)))
        v2path, v1paths = _own_paths()
        mount = _v2_mount()
        if mount is not None and v2path is not None:
            parent = os.path.join(mount, v2path.lstrip("/"), PARENT)
            try:
                os.makedirs(parent, exist_ok=True)
                d = os.path.join(parent, name)
                _mkdir_fresh(d)
                group.dirs["v2"] = d
                enabled = set(_read(os.path.join(parent, "cgroup.subtree_control")).split())
                wanted = {"memory", "pids", "cpuset"} & set(_read(os.path.join(parent, "cgroup.controllers")).split())
                if wanted - enabled:
                    try:
                        _write(os.path.join(parent, "cgroup.subtree_control"),
                               " ".join("+" + c for c in wanted - enabled))
                    except OSError as exc:
                        group.problems.append(f"v2 controllers {sorted(wanted)} not delegated: {exc.strerror}")
                if memory_bytes and os.path.exists(os.path.join(d, "memory.max")):
                    _write(os.path.join(d, "memory.max"), str(memory_bytes))
                    if os.path.exists(os.path.join(d, "memory.swap.max")):
                        _write(os.path.join(d, "memory.swap.max"), "0")
                    group.memory = "v2"
                if max_pids and os.path.exists(os.path.join(d, "pids.max")):
                    _write(os.path.join(d, "pids.max"), str(max_pids))
                    group.pids = "v2"
                if os.path.exists(os.path.join(d, "cgroup.freeze")):
                    group.freeze_kind = "v2"
                if os.path.exists(os.path.join(d, "cpu.stat")):
                    group.cpu_kind = "v2"
                if os.path.exists(os.path.join(d, "cpuset.cpus")):
                    _write(os.path.join(d, "cpuset.cpus"), cpu_list)
                    group.cpuset = "v2"
            except OSError as exc:
                group.problems.append(f"v2 cgroup: {exc.strerror or exc}")
        for controller in ("memory", "pids", "freezer", "cpuacct", "cpuset"):
            if controller == "memory" and group.memory or controller == "pids" and group.pids:
                continue
            if controller == "freezer" and group.freeze_kind or controller == "cpuacct" and group.cpu_kind:
                continue
            if controller == "cpuset" and group.cpuset:
                continue
            base = os.path.join(ROOT, controller)
            if controller not in v1paths or not os.path.exists(os.path.join(base, "tasks")):
                continue
            try:
                parent = os.path.join(base, v1paths[controller].lstrip("/"), PARENT)
                os.makedirs(parent, exist_ok=True)
                if controller == "cpuset":  # a v1 cpuset starts empty: give ours its parent's CPUs and nodes
                    _inherit_cpuset(parent)
                d = os.path.join(parent, name)
                _mkdir_fresh(d)
                group.dirs[controller] = d
                if controller == "memory" and memory_bytes:
                    _write(os.path.join(d, "memory.limit_in_bytes"), str(memory_bytes))
                    try:  # also forbid swapping (memsw counts memory + swap)
                        _write(os.path.join(d, "memory.memsw.limit_in_bytes"), str(memory_bytes))
                    except OSError:
                        pass
                    group.memory = "v1"
                elif controller == "pids" and max_pids:
                    _write(os.path.join(d, "pids.max"), str(max_pids))
                    group.pids = "v1"
                elif controller == "freezer":
                    group.freeze_kind = "v1"
                elif controller == "cpuacct":
                    group.cpu_kind = "v1"
                elif controller == "cpuset":
                    _write(os.path.join(d, "cpuset.cpus"), cpu_list)
                    _write(os.path.join(d, "cpuset.mems"), _read(os.path.join(parent, "cpuset.mems")).strip())
                    group.cpuset = "v1"
            except OSError as exc:
                group.problems.append(f"v1 {controller}: {exc.strerror or exc}")
        group._limits = (memory_bytes, max_pids, cpu_list)
        group._open_fast_paths()
        return group

    @classmethod
    def acquire(cls, memory_bytes: int | None, max_pids: int | None, cpus: set[int] | None = None) -> BotCgroup:
        """A group for the next bot: an emptied one from this process's pool (:func:`release`), its limits and
        CPUs set for this bot, else a new one (:meth:`create`). Never raises (``problems`` says what failed)."""
        group = _pool.take()
        if group is not None:
            if group._reuse(memory_bytes, max_pids, cpus):
                return group
            group.destroy()
        return cls.create(_pool.new_name(), memory_bytes, max_pids, cpus)

    def release(self) -> bool:
        """Ends the bot's use of the group: kills what is left, and keeps the group for the next bot when it is
        empty and clean (:meth:`_clean`) and the pool has room, else removes it (:meth:`destroy`). True when
        every process of the bot is gone."""
        if not self.kill():
            return self.destroy()
        if self._clean() and _pool.keep(self):
            return True
        return self.destroy()

    def _clean(self) -> bool:
        """Makes an emptied group as a new one looks to its next bot: thawed, every reclaimable page and cache
        entry the last bot left freed (v1 ``memory.force_empty``, v2 ``memory.reclaim``: ~0.4 ms), at most
        :data:`POOL_KEPT` still charged (the next bot's limit is raised by that much: :meth:`_reuse`), its peak and
        failure counters reset; False when it cannot (the group is then removed)."""
        if self.problems:
            return False
        self.freeze(False)
        try:
            if self.memory == "v1":
                d = self.dirs["memory"]
                if int(_read(os.path.join(d, "memory.usage_in_bytes"))) > 0:
                    _write(os.path.join(d, "memory.force_empty"), "0")
                if int(_read(os.path.join(d, "memory.usage_in_bytes"))) > POOL_KEPT:
                    return False
                _write(os.path.join(d, "memory.failcnt"), "0")
                _write(os.path.join(d, "memory.max_usage_in_bytes"), "0")
            elif self.memory == "v2":
                d = self.dirs["v2"]
                if _memory_current(d) > 0:
                    try:
                        _write(os.path.join(d, "memory.reclaim"), str(1 << 40))
                    except OSError:  # EAGAIN: not all of it; the check below says whether enough went
                        pass
                if _memory_current(d) > POOL_KEPT:
                    return False
            self._oom_base = self._oom_count()
            self._cpu_base = 0.0
            self._cpu_base = self.cpu_seconds() or 0.0
        except (OSError, ValueError, KeyError):
            return False
        return self.frozen() and not self.pids_in_group()

    def _reuse(self, memory_bytes: int | None, max_pids: int | None, cpus: set[int] | None) -> bool:
        """Sets a pooled group's limits and CPUs for its next bot; False when a write fails. The memory limit is
        the bot's plus what is still charged to the group (:meth:`_clean` freed all it could; the rest, ~0.4 MB
        that varies with what the last bot did, is kernel memory that stays put): every bot can charge exactly
        its limit, so how much the last one left tells the next one nothing."""
        cpu_list = ",".join(str(c) for c in sorted(cpus if cpus is not None else os.sched_getaffinity(0)))
        old_memory, old_pids, old_cpus = self._limits
        try:
            if memory_bytes and self.memory == "v2":
                d = self.dirs["v2"]
                _write(os.path.join(d, "memory.max"), str(memory_bytes + _memory_current(d)))
            elif memory_bytes and self.memory == "v1":  # memsw may never be below the limit: raise it first
                d = self.dirs["memory"]
                limit = memory_bytes + int(_read(os.path.join(d, "memory.usage_in_bytes")))
                order = ("memory.memsw.limit_in_bytes", "memory.limit_in_bytes")
                current = int(_read(os.path.join(d, "memory.limit_in_bytes")))
                for name in order if limit > current else order[::-1]:
                    if name == "memory.limit_in_bytes" or os.path.exists(os.path.join(d, name)):
                        _write(os.path.join(d, name), str(limit))
            if max_pids != old_pids and max_pids and self.pids is not None:
                _write(os.path.join(self.dirs["v2" if self.pids == "v2" else "pids"], "pids.max"), str(max_pids))
            if cpu_list != old_cpus and self.cpuset is not None:
                _write(os.path.join(self.dirs["v2" if self.cpuset == "v2" else "cpuset"], "cpuset.cpus"), cpu_list)
        except (OSError, ValueError):
            return False
        self._limits = (memory_bytes, max_pids, cpu_list)
        return True

    def _open_fast_paths(self) -> None:
        # Keep the freeze, frozen-state and CPU files open: a write/pread per move instead of open+close.
        try:
            if self.freeze_kind == "v2":
                self._freeze_fd = os.open(os.path.join(self.dirs["v2"], "cgroup.freeze"), os.O_WRONLY | os.O_CLOEXEC)
                self._state_fd = os.open(os.path.join(self.dirs["v2"], "cgroup.events"), os.O_RDONLY | os.O_CLOEXEC)
            elif self.freeze_kind == "v1":
                state = os.path.join(self.dirs["freezer"], "freezer.state")
                self._freeze_fd = os.open(state, os.O_WRONLY | os.O_CLOEXEC)
                self._state_fd = os.open(state, os.O_RDONLY | os.O_CLOEXEC)
            if self.cpu_kind == "v2":
                self._cpu_fd = os.open(os.path.join(self.dirs["v2"], "cpu.stat"), os.O_RDONLY | os.O_CLOEXEC)
            elif self.cpu_kind == "v1":
                self._cpu_fd = os.open(os.path.join(self.dirs["cpuacct"], "cpuacct.usage"), os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            self.problems.append(f"cgroup files: {exc.strerror}")

    @property
    def can_kill(self) -> bool:
        return "v2" in self.dirs and os.path.exists(os.path.join(self.dirs["v2"], "cgroup.kill"))

    def join_paths(self) -> list[str]:
        """The ``cgroup.procs`` files a child writes ``0`` to in order to join every group."""
        return [os.path.join(d, "cgroup.procs") for d in self.dirs.values()]

    def freeze(self, frozen: bool = True) -> None:
        """Asks the kernel to freeze (or thaw) every process of the bot and returns at once: a thread inside a
        system call that only fatal signals stop (a long page-cache read) runs on until the call ends, so the
        bot is stopped only once :meth:`frozen` says so (:meth:`wait_frozen`). A dead group is ignored."""
        if self._freeze_fd < 0:
            return
        value = (b"1" if frozen else b"0") if self.freeze_kind == "v2" else (b"FROZEN" if frozen else b"THAWED")
        try:
            os.write(self._freeze_fd, value)
        except OSError:
            pass

    def frozen(self) -> bool:
        """True when the kernel reports every process of the bot frozen (v2 ``frozen 1`` in ``cgroup.events``, v1
        ``FROZEN`` in ``freezer.state``); also when there is no freezer to ask, or the group is empty or gone
        (nothing of the bot can run then)."""
        if self._state_fd < 0:
            return True
        try:
            text = os.pread(self._state_fd, 256, 0)
        except OSError:
            return True
        if self.freeze_kind == "v2":  # an empty group (a killed bot's) is thawed by the kill: nothing runs in it
            return b"frozen 1" in text or b"populated 0" in text
        return text.startswith(b"FROZEN")

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
        if self._cpu_fd < 0:
            return None
        try:
            text = os.pread(self._cpu_fd, 4096, 0)
        except OSError:
            return None
        if self.cpu_kind == "v2":
            if text.startswith(b"usage_usec "):  # the first line on every kernel so far
                return int(text[11:text.index(b"\n")]) / 1e6 - self._cpu_base
            for line in text.split(b"\n"):
                if line.startswith(b"usage_usec"):
                    return int(line.split()[1]) / 1e6 - self._cpu_base
            return None
        return int(text) / 1e9 - self._cpu_base

    def _oom_count(self) -> int:
        """OOM kills the kernel has counted in the group (v2 ``memory.events``, v1 ``memory.oom_control``)."""
        name = os.path.join(self.dirs["v2"], "memory.events") if self.memory == "v2" else \
            os.path.join(self.dirs["memory"], "memory.oom_control") if self.memory == "v1" else None
        if name is None:
            return 0
        for line in _read(name).splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def oom_killed(self) -> bool:
        """True when the kernel OOM-killed a process of this group (the memory limit was hit) since this bot got it."""
        try:
            if self._oom_count() > self._oom_base:
                return True
            if self.memory == "v1":
                d = self.dirs["memory"]
                return int(_read(os.path.join(d, "memory.failcnt")) or 0) > 0 and \
                    int(_read(os.path.join(d, "memory.max_usage_in_bytes"))) >= \
                    int(_read(os.path.join(d, "memory.limit_in_bytes"))) - (1 << 20)
        except (OSError, ValueError, KeyError):
            pass
        return False

    def pids_in_group(self) -> list[int]:
        """Every process still in any of the bot's groups."""
        found: set[int] = set()
        for d in self.dirs.values():
            try:
                found.update(int(p) for p in _read(os.path.join(d, "cgroup.procs")).split())
            except OSError:
                pass
        return sorted(found)

    def signal_kill(self) -> None:
        """Sends the kill to every process of the bot (the whole tree) without waiting for them to die."""
        if self.can_kill:
            try:
                _write(os.path.join(self.dirs["v2"], "cgroup.kill"), "1")
            except OSError:
                pass
        else:  # v1: freeze so nothing forks while we kill, SIGKILL everyone, thaw so the kills land
            self.freeze(True)
            for pid in self.pids_in_group():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        self.freeze(False)

    def kill(self, timeout: float = 2.0, pause: Callable[[float], object] = time.sleep) -> bool:
        """Kills every process of the bot (the whole tree) and waits until the groups are empty.

        ``pause(seconds)`` waits between looks at the groups: by default a sleep; the referee's handle waits on the
        bot's process instead, which wakes as soon as it exits."""
        self.signal_kill()
        deadline = time.monotonic() + timeout
        delay = 0.0001  # a killed bot is usually gone within a millisecond: back off from 0.1 ms to 2 ms
        while self.pids_in_group():
            if time.monotonic() > deadline:
                return False
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
            if self.memory == "v1" and "memory" in self.dirs:
                return int(_read(os.path.join(self.dirs["memory"], "memory.kmem.usage_in_bytes")))
            if self.memory == "v2" and "v2" in self.dirs:
                stat = dict(line.split() for line in _read(os.path.join(self.dirs["v2"], "memory.stat")).splitlines())
                return int(stat.get("slab", 0))
        except (OSError, ValueError):
            pass
        return 0

    def reclaim(self) -> None:
        """Frees the kernel memory charged to the (empty) group before it goes, when there is more than
        :data:`KERNEL_KEPT`: the dentries and inodes a bot's look-ups made (150,000 stats of missing names: ~30 MB of
        negative dentries) would otherwise outlive the game, reparented to the referee's group. v1
        ``memory.force_empty``, v2 ``memory.reclaim`` (both shrink the group's slab caches; ~50 ms, so not for the
        ~0.3 MB an ordinary bot leaves). Best effort: a kernel without them keeps the reparenting."""
        if self.kernel_bytes() <= KERNEL_KEPT:
            return
        try:
            if self.memory == "v1" and "memory" in self.dirs:
                _write(os.path.join(self.dirs["memory"], "memory.force_empty"), "0")
            elif self.memory == "v2" and "v2" in self.dirs:
                _write(os.path.join(self.dirs["v2"], "memory.reclaim"), str(1 << 40))
        except OSError:  # EAGAIN when v2 cannot reclaim it all (fine: what it could is freed), or no such file
            pass

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
        for d in self.dirs.values():
            while True:
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:  # a dying process still counted: retry; a later clean_stale() gets the rest
                    if time.monotonic() > deadline:
                        emptied = False
                        break
                    time.sleep(0.005)
        self.dirs.clear()
        return emptied


POOL_KEPT = 1 << 20
"""Memory a pooled group may still have charged when its next bot gets it, after the clean-up reclaimed all it
could (kernel objects that stay put: 0.36-0.55 MB after 60 bots of Hex games on this project's machine); a group
with more is removed."""


def _memory_current(d: str) -> int:
    return int(_read(os.path.join(d, "memory.current")))


POOL_SIZE = 8
"""Emptied bot groups one referee process keeps for its next bots (a league worker's game holds 2-4 at once).
A group made and removed per bot cost two machine-wide cgroup operations per hierarchy (``mkdir``/``rmdir``
serialise on the kernel's cgroup mutex: the many-core measurement's 0.6x from 1 to 16 workers); a pooled one
costs a few writes (:meth:`BotCgroup._reuse`)."""


class _Pool:
    """This process's emptied bot groups (a forked child starts with none: they are its parent's)."""

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
            return f"bot-{os.getpid()}-{next(self.counter)}"

    def take(self) -> BotCgroup | None:
        with self.lock:
            self._mine()
            return self.groups.pop() if self.groups else None

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
            return [d for g in self.groups for d in g.dirs.values()]

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
            if name.startswith((f"bot-{pid}-", f"probe-{pid}-"))]


def clean_stale() -> int:
    """Removes empty groups left by referees that died (``bot-<pid>-<n>`` with a dead pid); returns how many."""
    removed = 0
    for parent in parent_dirs():
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            parts = name.split("-")
            if len(parts) < 3 or parts[0] not in ("bot", "probe") or not parts[1].isdigit():
                continue
            if psutil.pid_exists(int(parts[1])):
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
        g = BotCgroup.create(f"probe-{os.getpid()}-{time.monotonic_ns()}", 64 << 20, 8)
        _CAPS = Capabilities(g.memory, g.pids, g.can_kill, g.freeze_kind, g.cpu_kind, g.cpuset, list(g.problems))
        g.destroy()
    return _CAPS
