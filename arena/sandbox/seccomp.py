"""A seccomp-BPF filter for bot processes, built by hand (no libseccomp binding needed).

Denied (EPERM): exec, process creation other than threads, sockets, ptrace and cross-process memory
access, namespaces and every mount API, io_uring, bpf/perf, keyrings, module and kexec loading.
``clone3`` answers ENOSYS so glibc falls back to ``clone``, whose flags the filter can inspect: only
``clone`` with ``CLONE_THREAD`` and no namespace flag is allowed. Installed by the bot host after it
has started and imported its game, so no later ``execve`` is possible.
"""
from __future__ import annotations

import ctypes
import errno

from arena.sandbox import _sys

# Syscall numbers per architecture; names missing on an architecture are simply skipped.
_X86_64 = {
    "execve": 59, "execveat": 322, "fork": 57, "vfork": 58, "clone": 56, "clone3": 435,
    "socket": 41, "socketpair": 53, "connect": 42, "bind": 49, "listen": 50, "accept": 43, "accept4": 288,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248,
    "request_key": 249, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
    "finit_module": 313, "delete_module": 176, "open_by_handle_at": 304, "name_to_handle_at": 303,
    "quotactl": 179, "acct": 163, "swapon": 167, "swapoff": 168, "reboot": 169, "syslog": 103,
    "iopl": 172, "ioperm": 173, "personality": 135, "mknod": 133, "mknodat": 259,
}
_AARCH64 = {
    "execve": 221, "execveat": 281, "clone": 220, "clone3": 435, "socket": 198, "socketpair": 199,
    "connect": 203, "bind": 200, "listen": 201, "accept": 202, "accept4": 242, "ptrace": 117,
    "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438, "unshare": 97, "setns": 268,
    "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "bpf": 280,
    "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217, "request_key": 218,
    "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
    "delete_module": 106, "open_by_handle_at": 265, "name_to_handle_at": 264, "quotactl": 60, "acct": 89,
    "swapon": 224, "swapoff": 225, "reboot": 142, "syslog": 116, "personality": 92, "mknodat": 33,
}
_ARCH = {"x86_64": (0xC000003E, _X86_64), "aarch64": (0xC00000B7, _AARCH64)}

CLONE_THREAD = 0x00010000
# CLONE_NEWTIME | NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NAMESPACES = 0x80 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
_OFF_NR, _OFF_ARCH, _OFF_ARG0 = 0, 4, 16
_SET_MODE_FILTER, _FLAG_TSYNC = 1, 1


class _Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Insn))]


def is_supported() -> bool:
    """True when this architecture has a syscall table here and the kernel has seccomp filters."""
    import os
    return _sys.MACHINE in _ARCH and os.path.exists("/proc/sys/kernel/seccomp/actions_avail")


def build_filter() -> list[tuple[int, int, int, int]]:
    """The BPF program as (code, jt, jf, k) tuples (exposed for tests)."""
    arch, table = _ARCH[_sys.MACHINE]
    denied = sorted(v for k, v in table.items() if k not in ("clone", "clone3"))
    deny = RET_ERRNO | errno.EPERM
    prog: list[tuple[int, int, int, int]] = [
        (_LD_W_ABS, 0, 0, _OFF_ARCH),
        (_JEQ, 1, 0, arch),
        (_RET, 0, 0, RET_KILL_PROCESS),
        (_LD_W_ABS, 0, 0, _OFF_NR),
    ]
    if _sys.MACHINE == "x86_64":  # x32 ABI syscalls would bypass the numbers above
        prog.append((_JGE, 0, 1, 0x40000000))
        prog.append((_RET, 0, 0, deny))
    # Each denied number jumps to a shared "deny" return placed after the allow; offsets patched below.
    checks_start = len(prog)
    n_checks = len(denied)
    # Layout: [checks...] [jeq clone3 -> ENOSYS] [jeq clone -> clone block] [ret allow] [ret deny]
    #         [ret enosys] [clone block: ld arg0, jset THREAD, ret deny, jset NS, ret allow, ret deny]
    total_before_allow = checks_start + n_checks + 2
    idx_allow = total_before_allow
    idx_deny = idx_allow + 1
    idx_enosys = idx_deny + 1
    idx_clone = idx_enosys + 1
    for i, number in enumerate(denied):
        here = checks_start + i
        prog.append((_JEQ, idx_deny - here - 1, 0, number))
    here = len(prog)
    prog.append((_JEQ, idx_enosys - here - 1, 0, table["clone3"]))
    here = len(prog)
    prog.append((_JEQ, idx_clone - here - 1, 0, table["clone"]))
    prog.append((_RET, 0, 0, RET_ALLOW))
    prog.append((_RET, 0, 0, deny))
    prog.append((_RET, 0, 0, RET_ERRNO | errno.ENOSYS))
    # clone block: flags are the first argument (low 32 bits on little-endian machines).
    prog.append((_LD_W_ABS, 0, 0, _OFF_ARG0))
    prog.append((_JSET, 1, 0, CLONE_THREAD))         # thread? go on, else deny
    prog.append((_RET, 0, 0, deny))
    prog.append((_JSET, 0, 1, CLONE_NAMESPACES))     # namespace flags? deny
    prog.append((_RET, 0, 0, deny))
    prog.append((_RET, 0, 0, RET_ALLOW))
    assert all(0 <= jt < 256 and 0 <= jf < 256 for _, jt, jf, _ in prog)
    return prog


def install() -> None:
    """Installs the filter on every thread of the calling process (no new privileges is set first).

    Raises:
        OSError: the kernel refused the filter.
    """
    program = build_filter()
    insns = (_Insn * len(program))(*[_Insn(*i) for i in program])
    prog = _Prog(len(program), insns)
    _sys.prctl(_sys.PR_SET_NO_NEW_PRIVS, 1)
    _sys.syscall("seccomp", ctypes.c_uint(_SET_MODE_FILTER), ctypes.c_uint(_FLAG_TSYNC), ctypes.byref(prog))
