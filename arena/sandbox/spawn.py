"""Starting a bot process: a namespace + mount allow-list + uid drop + rlimits, then a fresh interpreter.

The referee forks (``subprocess.Popen``); the child, still privileged, runs :func:`_child_setup`:

1. joins its per-bot cgroups (before anything else, so everything it starts is counted and killable);
2. ``unshare``s a mount, network, IPC and UTS namespace (plus a user namespace when not root);
3. builds a new root on a small tmpfs holding only read-only bind mounts of the interpreter prefix,
   the venv, the ``games``/``bots``/``arena`` packages, the system libraries, four ``/dev`` nodes and
   the bot's own directory (as ``/bot``), ``pivot_root``s into it, detaches the old root and makes
   everything read-only recursively;
4. drops to the slot's uid/gid with no supplementary groups, sets ``PR_SET_PDEATHSIG`` (after the
   drop, which clears it) and no-new-privs, and sets every rlimit.

Then ``exec`` starts ``python -m arena.sandbox.host``, which applies Landlock and seccomp to itself
before loading bot code. Root's ``/root`` (where pyenv lives) stays hidden: only the interpreter's
own prefix is bound back at its original path.
"""
from __future__ import annotations

import functools
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from arena.sandbox import _sys, bot_files, runtime
from arena.sandbox.bot_files import private_dir

NEW_ROOT = "/run/arena-sandbox/root" if os.geteuid() == 0 else None
DEV_NODES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")
BOT_INSIDE = "/bot"
"""Where a bot's own snapshot is mounted in its new root."""


@dataclass
class Plan:
    """Everything the child does, computed in the parent (the child only makes system calls)."""

    mode: str = "none"
    """"root" (uid drop + namespaces), "userns" (unprivileged user namespace) or "none"."""
    uid: int = -1
    gid: int = -1
    mount_ns: bool = False
    net_ns: bool = False
    new_root: str = ""
    binds: list[tuple[str, str, bool]] = field(default_factory=list)
    """(source on the host, path inside the sandbox, is a directory)."""
    symlinks: list[tuple[str, str]] = field(default_factory=list)
    cgroup_procs: list[str] = field(default_factory=list)
    rlimits: list[tuple[int, int]] = field(default_factory=list)
    read_paths: list[str] = field(default_factory=list)
    """What the bot may read, as seen from inside (for Landlock)."""
    bot_dir_inside: str = ""
    pid_ns: bool = False
    """A PID namespace of its own, with a small init as pid 1 (see :func:`_child_setup`)."""
    cpu: int | None = None
    """The one CPU the bot runs on (:func:`arena.sandbox.launcher.game_cpu`), set before its code runs."""


def _real(path: str) -> str:
    return os.path.realpath(path)


def package_dirs() -> list[str]:
    """The directories of the ``games``, ``bots`` and ``arena`` packages of *this* installation.

    Found from arena's own ``__file__`` (the three are one distribution, installed side by side), never through
    the import system: with the current directory first on ``sys.path`` (``python -m``, a Ray worker started
    from the driver's directory) a ``bots/`` folder there would otherwise be taken for the package, and the
    whole current directory shown to every bot.

    Raises:
        RuntimeError: a package directory is missing beside arena.
    """
    here = _real(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # .../arena
    parent = os.path.dirname(here)
    dirs = [os.path.join(parent, name) for name in ("games", "bots")] + [here]
    for d in dirs:
        if not os.path.isfile(os.path.join(d, "__init__.py")):
            raise RuntimeError(f"arena's package {os.path.basename(d)!r} is not installed beside {here}")
    return dirs


def runtime_trees() -> list[str]:
    """Host directories a bot host needs to run: interpreter prefix, venv, and arena's own packages (nothing
    derived from the current directory or ``sys.path``)."""
    trees = {_real(sys.base_prefix), _real(sys.prefix), _real(sys.exec_prefix), os.path.abspath(sys.prefix)}
    trees.update(package_dirs())
    if "/" in trees:  # would expose the whole machine: never
        raise RuntimeError("the interpreter's prefix is /; arena cannot build a bot's read-only runtime from it")
    return sorted(trees)


def system_trees() -> tuple[list[tuple[str, bool]], list[tuple[str, str]]]:
    """System libraries the interpreter and extensions load: (paths, symlinks to recreate)."""
    paths: list[tuple[str, bool]] = []
    links: list[tuple[str, str]] = []
    for p in ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32"):
        if os.path.islink(p):
            links.append((os.readlink(p), p))
        elif os.path.isdir(p):
            paths.append((p, True))
    for f in ("/etc/ld.so.cache", "/etc/localtime") + DEV_NODES:
        if os.path.exists(f):
            paths.append((f, False))
    return paths, links


def bot_runtime(hold: bool = False) -> runtime.View:
    """The narrowed read-only runtime every bot of this process sees (:mod:`arena.sandbox.runtime`); with
    ``hold``, every page of it is made resident and locked first (once per process, then what changed)."""
    packages = tuple(package_dirs())
    view = runtime.view(packages, os.path.dirname(NEW_ROOT) if NEW_ROOT else _user_runtime_dir())
    if hold:
        runtime.hold(view, packages)
    return view


def make_plan(mode: str, uid: int, bot_path: str | None, cgroup_procs: list[str],
              rlimits: list[tuple[int, int]]) -> Plan:
    """The launch plan for one bot (``mode`` from the layer probe).

    ``bot_path`` is the entry file of a snapshot this process wrote (:mod:`arena.sandbox.bot_files`): the bot sees
    that snapshot's directory as ``/bot`` (read-only) and nothing else of the host but the read-only runtime.

    Raises:
        OSError: ``bot_path`` is not inside a snapshot written by this process (never shown to a bot).
    """
    bot_dir: str | None = None
    if bot_path:
        bot_dir = os.path.dirname(os.path.abspath(bot_path))
        if not bot_files.is_materialized(bot_dir):
            raise OSError(f"{bot_path} is not in a bot snapshot; a bot is shown only its own snapshot")
    plan = Plan(mode=mode, uid=uid, gid=uid, cgroup_procs=cgroup_procs, rlimits=rlimits)
    if mode in ("root", "userns"):
        plan.mount_ns = plan.net_ns = True
        plan.new_root = NEW_ROOT or os.path.join(_user_runtime_dir(), "root")
        os.makedirs(plan.new_root, mode=0o755, exist_ok=True)
        # The narrowed runtime (arena.sandbox.runtime: only what bots load, every page held in the page
        # cache by this process), plus the four /dev nodes; Landlock keeps the coarse trees as a second wall.
        binds, read_paths, symlinks = _runtime_plan(bot_runtime(hold=True))
        plan.binds, plan.read_paths, plan.symlinks = list(binds), list(read_paths), list(symlinks)
        if bot_dir:
            plan.binds.append((bot_dir, BOT_INSIDE, True))
            plan.bot_dir_inside = BOT_INSIDE
            plan.read_paths.append(BOT_INSIDE)
    else:
        trees = runtime_trees()
        sys_paths, links = system_trees()
        plan.read_paths = trees + [p for p, _ in sys_paths]
        plan.read_paths += [os.path.join(os.path.dirname(l), t) for t, l in links]
        if bot_dir:
            plan.read_paths.append(bot_dir)
            plan.bot_dir_inside = bot_dir
    return plan


@functools.lru_cache(maxsize=4)
def _runtime_plan(view: runtime.View) -> tuple[tuple[tuple[str, str, bool], ...], tuple[str, ...],
                                              tuple[tuple[str, str], ...]]:
    """The part of every bot's plan that comes from the runtime view: (binds, read paths, symlinks), worked out
    once per view (worked out at each bot's start it would cost the referee ~1 ms of CPU: the read paths are a
    quadratic walk)."""
    trees = runtime_trees()
    sys_paths, links = system_trees()
    kept = list(view.binds) + [(p, p, False) for p, d in sys_paths if p in DEV_NODES]
    read_paths = [p for p, _ in sys_paths] + trees
    for _, t, _ in view.binds:  # and what lies outside those (parents come first)
        if not any(t == c or t.startswith(c.rstrip("/") + "/") for c in read_paths):
            read_paths.append(t)
    return tuple(kept), tuple(read_paths), tuple(links)


def _user_runtime_dir() -> str:
    return private_dir(os.path.join(tempfile.gettempdir(), f"arena-sandbox-{os.geteuid()}"))


def build_root(root: str, binds: list[tuple[str, str, bool]], symlinks: list[tuple[str, str]]) -> None:
    """Mounts a bot's new root at ``root``: a small tmpfs holding a read-only bind of each of ``binds`` (or an
    empty tmpfs over a masked part of the runtime) and ``symlinks``; the empty folder ``/bot`` is made for the
    bot's own snapshot whether or not ``binds`` name it (a template's bots bind theirs later)."""
    _sys.mount("tmpfs", root, "tmpfs", _sys.MS_NOSUID | _sys.MS_NODEV, "mode=0755,size=1m")
    os.makedirs(root + BOT_INSIDE, exist_ok=True)
    for source, target, is_dir in binds:
        inside = root + target
        if source == runtime.MASK:  # an empty folder over a part of the runtime no bot needs
            os.makedirs(inside, exist_ok=True)
            _sys.mount("tmpfs", inside, "tmpfs", _sys.MS_NOSUID | _sys.MS_NODEV, "mode=0755,size=4k")
            continue
        if is_dir:
            os.makedirs(inside, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(inside), exist_ok=True)
            os.close(os.open(inside, os.O_CREAT | os.O_WRONLY, 0o644))
        try:
            _sys.mount(source, inside, None, _sys.MS_BIND | _sys.MS_REC)
        except OSError as exc:
            raise OSError(exc.errno, f"bind {source}: {exc.strerror}") from None
    for target, link in symlinks:
        os.symlink(target, root + link)


def enter_namespaces(plan: Plan, outer_uid: int, outer_gid: int, template_fd: int = -1) -> None:
    """``unshare``s the bot's mount, network, IPC and UTS namespaces (and a user namespace for ``userns``); with
    ``template_fd`` (the fork server's :mod:`arena.sandbox.template`) the new mount namespace is a copy of the
    template's, which is left as it is. Nothing here depends on which bot will run: a fork server's waiting init
    (:mod:`arena.sandbox.zygote`, ``Stock``) does it before its bot is known."""
    if template_fd >= 0:
        _sys.setns(template_fd, _sys.CLONE_NEWNS)  # (the unshare below copies it: the template stays as it is)
        os.close(template_fd)
    flags = _sys.CLONE_NEWNS | _sys.CLONE_NEWNET | _sys.CLONE_NEWIPC | _sys.CLONE_NEWUTS
    if plan.mode == "userns":
        flags |= _sys.CLONE_NEWUSER
    _sys.unshare(flags)
    if plan.mode == "userns":
        for name, text in (("setgroups", "deny"), ("uid_map", f"{outer_uid} {outer_uid} 1"),
                           ("gid_map", f"{outer_gid} {outer_gid} 1")):
            fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)


def _child_setup(plan: Plan, outer_uid: int, outer_gid: int, parent_fd: int = -1, status_fd: int = -1,
                 template_fd: int = -1, entered: bool = False,
                 bot_ahead: Callable[[list[int]], int] | None = None) -> None:
    """Runs in the forked child before the bot host starts. Only system calls: no imports, no allocation-heavy work.

    With ``plan.pid_ns`` the bot gets a PID namespace of its own whose pid 1 is a small init that runs no bot
    code (:func:`_init`): it stays root outside the bot's reach, dies with its parent (``PR_SET_PDEATHSIG``, which
    the bot cannot touch), and the kernel kills everything in the namespace when it dies, so no bot outlives its
    referee however it detaches itself. The process calling this is either already that pid 1 (the fork
    server creates the namespace as it forks) or it creates the namespace and stays outside as a relay
    (:func:`_relay`) that ends as the bot ended. ``parent_fd``: a pidfd of the parent (the fork server),
    readable once it has exited. ``status_fd``: where the init writes the bot's exact wait status (the write end of
    a pipe whose read end the fork server holds), for a process that is already that pid 1; the relay makes its own.
    ``template_fd``: a mount namespace holding the runtime already mounted at ``plan.new_root`` (the fork server's
    :mod:`arena.sandbox.template`): the bot's namespace is a copy of it, and only ``/bot`` is mounted here.
    ``entered``: this process entered its namespaces already (:func:`enter_namespaces`, from a template) before its
    plan came. ``bot_ahead(groups)``: the bot was forked before the plan came too (the pid 1 of a waiting init); this
    hands it its plan, pipes and the descriptors of its cgroups' ``cgroup.procs`` once the root is mounted, and
    returns its pid (:func:`bot_setup` is the bot's side).
    """
    step = "start"
    try:
        os.umask(0o022)
        step = "join cgroups"
        # With a PID namespace the init stays out of the freezer's group: freezing and thawing a group wakes
        # every task in it, and an init woken twice per move costs the referee's round trip ~4 us.
        # (a bot forked ahead joins every group itself: it was forked before this process joined any)
        bot_groups = [os.open(p, os.O_WRONLY) for p in plan.cgroup_procs
                      if plan.pid_ns and (bot_ahead is not None or _freezer_group(p))]
        _join([p for p in plan.cgroup_procs if not (plan.pid_ns and _freezer_group(p))])
        if plan.cpu is not None and bot_ahead is None:  # after the cgroups: joining a cpuset resets the affinity
            step = "cpu"
            os.sched_setaffinity(0, {plan.cpu})
        if plan.mount_ns and not entered:
            step = "namespaces"
            enter_namespaces(plan, outer_uid, outer_gid, template_fd)
        if plan.pid_ns and os.getpid() != 1:
            step = "pid namespace"
            _sys.prctl(_sys.PR_SET_PDEATHSIG, signal.SIGKILL)  # the relay dies with the referee's thread
            _sys.unshare(_sys.CLONE_NEWPID)  # for the children of this process
            if parent_fd >= 0:  # the fork server's pidfd: the bot's init watches this relay instead
                os.close(parent_fd)
            parent_fd = os.pidfd_open(os.getpid())
            status_r, status_fd = os.pipe()
            init = os.fork()
            if init:
                os.close(status_fd)
                _relay(init, status_r)
            os.close(status_r)
        if plan.pid_ns:
            step = "init"
            _sys.prctl(_sys.PR_SET_PDEATHSIG, signal.SIGKILL)
            if parent_fd >= 0 and select.select([parent_fd], [], [], 0)[0]:
                os._exit(1)  # the parent died before the death signal was set
        if plan.mount_ns:
            step = "private mounts"
            _sys.mount(None, "/", None, _sys.MS_REC | _sys.MS_PRIVATE)
            root = plan.new_root
            if template_fd >= 0 or entered:  # the runtime is mounted (a copy of the template): only /bot
                step = "bind /bot"
                for source, target, _is_dir in plan.binds:
                    if target == BOT_INSIDE:
                        _sys.mount(source, root + target, None, _sys.MS_BIND | _sys.MS_REC)
            else:
                step = "tmpfs root"
                build_root(root, plan.binds, plan.symlinks)
            step = "pivot_root"
            os.chdir(root)
            _sys.pivot_root(".", ".")
            _sys.umount2(".", _sys.MNT_DETACH)
            os.chdir("/")
            step = "read-only"
            try:
                _sys.mount_setattr("/", _sys.AT_RECURSIVE, _sys.MOUNT_ATTR_RDONLY | _sys.MOUNT_ATTR_NOSUID)
            except OSError:  # kernels before 5.12: remount each mount read-only
                for _, target, _is_dir in plan.binds:
                    flags = os.statvfs(target).f_flag & (_sys.MS_NODEV | 8)  # keep nodev/noexec (locked flags)
                    _sys.mount(None, target, None,
                               _sys.MS_BIND | _sys.MS_REMOUNT | _sys.MS_RDONLY | _sys.MS_NOSUID | flags)
                _sys.mount(None, "/", None, _sys.MS_REMOUNT | _sys.MS_RDONLY | _sys.MS_NOSUID | _sys.MS_NODEV)
        if plan.pid_ns:
            step = "start the bot"
            if bot_ahead is not None:  # forked already: it gets its plan, pipes and groups now, and goes on alone
                _init(bot_ahead(bot_groups), status_fd)
            bot = os.fork()
            if bot:
                _init(bot, status_fd)
            if parent_fd >= 0:
                os.close(parent_fd)
            if status_fd >= 0:  # the init's alone: the bot cannot write a status of its own choosing
                os.close(status_fd)
            step = "join cgroups"
            _join_fds(bot_groups)
        step = "drop privileges"
        limit_self(plan)
    except BaseException as exc:
        os.write(2, f"arena sandbox: setup failed at {step}: {exc}\n".encode())
        raise


def bot_setup(plan: Plan, groups: list[int]) -> None:
    """In a bot forked before its plan came (:mod:`arena.sandbox.stock`), once its init has mounted its root: joins
    its cgroups (``groups``: their ``cgroup.procs``, opened by the init before the pivot), takes its one CPU and
    drops every privilege (:func:`limit_self`), as a bot forked by its init does."""
    step = "join cgroups"
    try:
        _join_fds(groups)
        if plan.cpu is not None:  # after the cgroups: joining a cpuset resets the affinity to the set's CPUs
            step = "cpu"
            os.sched_setaffinity(0, {plan.cpu})
        step = "drop privileges"
        limit_self(plan)
    except BaseException as exc:
        os.write(2, f"arena sandbox: setup failed at {step}: {exc}\n".encode())
        raise


def limit_self(plan: Plan) -> None:
    """The last steps of every bot's start: the slot's uid with no groups, its death signal, no new privileges and
    every rlimit."""
    if plan.mode == "root":
        os.setgroups([])
        os.setresgid(plan.gid, plan.gid, plan.gid)
        os.setresuid(plan.uid, plan.uid, plan.uid)
    _sys.prctl(_sys.PR_SET_PDEATHSIG, signal.SIGKILL)  # after the uid change, which clears it
    _sys.prctl(_sys.PR_SET_NO_NEW_PRIVS, 1)
    for res, value in plan.rlimits:
        soft, hard = (value, value + 1) if res == resource.RLIMIT_CPU else (value, value)
        _, cur_hard = resource.getrlimit(res)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(res, (soft, hard))


def _join_fds(groups: list[int]) -> None:
    for fd in groups:  # opened before the pivot: the paths do not exist inside
        os.write(fd, b"0")
        os.close(fd)


_MAX_FD = 1 << 16


def _join(procs_files: list[str]) -> None:
    for path in procs_files:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)


def _freezer_group(procs_file: str) -> bool:
    """True for the ``cgroup.procs`` of a group that freezes (v2 ``cgroup.freeze`` or the v1 freezer)."""
    directory = os.path.dirname(procs_file)
    return os.path.exists(os.path.join(directory, "cgroup.freeze")) or \
        os.path.exists(os.path.join(directory, "freezer.state"))


def _init(bot: int, status_fd: int = -1) -> NoReturn:
    """Pid 1 of the bot's namespace: holds no descriptor but ``status_fd`` (the bot's pipes close when the bot
    dies), reaps, and exits when the bot does. Its exit status is the bot's (a signal N as status 128 + N: a
    namespace's init cannot die by a signal it sends itself), which cannot tell ``os._exit(152)`` from SIGXCPU:
    the bot's exact wait status goes first to ``status_fd`` (:func:`read_status`). The kernel then kills whatever
    is left in the namespace."""
    if status_fd >= 0:
        os.closerange(0, status_fd)
        os.closerange(status_fd + 1, _MAX_FD)
    else:
        os.closerange(0, _MAX_FD)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if pid == bot:
            if status_fd >= 0:
                try:
                    os.write(status_fd, b"%d\n" % status)
                except OSError:
                    pass
            code = os.waitstatus_to_exitcode(status)
            os._exit(code if code >= 0 else 128 - code)


def _relay(init: int, status_r: int = -1) -> NoReturn:
    """Outside the bot's namespace (the exec path): waits for its init and ends as the bot ended, by the same
    signal, so the referee's ``Popen`` sees the bot's own status (read from the init's ``status_r`` pipe). Holds no
    descriptor but that one (the referee's ``Popen`` waits for its error pipe to close)."""
    if status_r >= 0:
        os.closerange(0, status_r)
        os.closerange(status_r + 1, _MAX_FD)
    else:
        os.closerange(0, _MAX_FD)
    while True:
        try:
            _, status = os.waitpid(init, 0)
            break
        except ChildProcessError:
            os._exit(1)
    exact = read_status(status_r) if status_r >= 0 else None
    code = exact if exact is not None else init_status(os.waitstatus_to_exitcode(status))
    if code < 0:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [-code])
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


def init_status(code: int) -> int:
    """The bot's status (Popen convention) from its init's exit status alone, when its exact one (``read_status``)
    is missing: 128 + N is taken for signal N (the bot may have exited with that status instead)."""
    return 128 - code if 128 < code <= 128 + 64 else code


def read_status(fd: int) -> int | None:
    """The bot's exact exit status (Popen convention: -N for signal N) that its init wrote to the pipe ``fd``
    before exiting, or None; closes ``fd``. Called once the init is reaped: what it wrote is there, and nothing
    blocks (the bot closed its copy of the write end before any of its code ran)."""
    try:
        os.set_blocking(fd, False)
        data = os.read(fd, 64)
        return os.waitstatus_to_exitcode(int(data)) if data else None
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def launch(plan: Plan, argv: list[str], env: dict[str, str], pass_fds: tuple[int, ...],
           stderr_fd: int) -> subprocess.Popen:
    """Forks, hardens the child by ``plan`` and execs ``argv``.

    Raises:
        OSError: the child could not be set up (the reason is in its stderr pipe).
    """
    uid, gid = os.getuid(), os.getgid()
    choose_pid_ns(plan)
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stderr_fd, stderr=stderr_fd,
                                pass_fds=pass_fds, env=env, close_fds=True,
                                preexec_fn=lambda: _child_setup(plan, uid, gid))
    except subprocess.SubprocessError as exc:
        raise OSError(f"sandbox setup failed: {exc}") from None
    proc.bot_depth = 2 if plan.pid_ns else 0  # type: ignore[attr-defined]  # relay, init, bot
    return proc


def choose_pid_ns(plan: Plan) -> None:
    """A PID namespace for every bot that gets the other namespaces, where the kernel allows it."""
    # start-up: the layer checks only in the referee (a bot's own start never loads them)
    from arena.sandbox import check
    plan.pid_ns = plan.mount_ns and check.active("pid_namespace")


RUNTIME_FIELDS = ("mode", "mount_ns", "net_ns", "pid_ns", "new_root", "binds", "symlinks")
"""The fields of a plan that are the same for every bot of one referee: its mode, namespaces and the runtime mounted
in its root."""


def runtime_part(plan: Plan) -> dict[str, Any]:
    """What the fork server is told of a bot's plan (:mod:`arena.sandbox.zygote`): :data:`RUNTIME_FIELDS`, with the
    bot's own ``/bot`` taken out of its binds. Never what names a bot: its snapshot folder (named by the snapshot's
    digest), uid, cgroups, limits or CPU. Whatever the server decodes, a bot forked from it later may find in the
    memory it inherits; the rest of the plan goes from the referee straight to the bot's init."""
    part = {name: getattr(plan, name) for name in RUNTIME_FIELDS}
    part["binds"] = [bind for bind in plan.binds if bind[1] != BOT_INSIDE]
    return part
