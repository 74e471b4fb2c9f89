"""Thin ctypes wrappers over the Linux system calls the sandbox needs (x86_64 and aarch64 numbers).

Everything here is prepared at import time so that a freshly forked child only *calls* functions and
never imports or loads a library (which could deadlock after ``fork`` in a threaded referee).
"""
from __future__ import annotations

import ctypes
import os
import platform

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_prctl = _libc.prctl
_prctl.restype = ctypes.c_int
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_mount = _libc.mount
_mount.restype = ctypes.c_int
_mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_umount2 = _libc.umount2
_umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_unshare = _libc.unshare
_unshare.argtypes = [ctypes.c_int]
_setns = _libc.setns
_setns.argtypes = [ctypes.c_int, ctypes.c_int]

MACHINE = platform.machine()
# Syscall numbers used by the sandbox itself (the seccomp filter has its own table).
_NR = {
    "x86_64": {"pivot_root": 155, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
               "landlock_restrict_self": 446, "mount_setattr": 442, "seccomp": 317},
    "aarch64": {"pivot_root": 41, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
                "landlock_restrict_self": 446, "mount_setattr": 442, "seccomp": 277},
}.get(MACHINE, {})

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_GET_SECCOMP = 21

AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def nr(name: str) -> int:
    """The syscall number on this machine (KeyError on an unsupported architecture)."""
    return _NR[name]


def syscall(name: str, *args: object) -> int:
    """Calls a raw syscall by name; raises OSError on failure."""
    return _check(_syscall(ctypes.c_long(_NR[name]), *args), name)


def unshare(flags: int) -> None:
    _check(_unshare(flags), "unshare")


def setns(fd: int, nstype: int) -> None:
    _check(_setns(fd, nstype), "setns")


def child_pid(pid: int) -> int | None:
    """The (first) child of process ``pid``, or None: ``/proc/PID/task/PID/children`` where the kernel has
    it, else a look through every ``/proc/N/stat``."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            children = f.read().split()
        return int(children[0]) if children else None
    except OSError:
        pass
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    if int(f.read().rsplit(b")", 1)[1].split()[1]) == pid:
                        return int(entry)
            except (OSError, ValueError, IndexError):
                continue
    return None


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return None if s is None else s.encode()
    _check(_mount(enc(source), target.encode(), enc(fstype), flags, enc(data)), f"mount {target}")


def umount2(target: str, flags: int) -> None:
    _check(_umount2(target.encode(), flags), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    syscall("pivot_root", new_root.encode(), put_old.encode())


class MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def mount_setattr(path: str, flags: int, attr_set: int) -> None:
    attr = MountAttr(attr_set, 0, 0, 0)
    AT_FDCWD = -100
    syscall("mount_setattr", ctypes.c_int(AT_FDCWD), path.encode(), ctypes.c_uint(flags),
            ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)))


def prctl(option: int, arg: int = 0) -> int:
    return _check(_prctl(option, arg, 0, 0, 0), f"prctl({option})")
