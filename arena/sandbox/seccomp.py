"""A seccomp-BPF filter for bot processes, built by hand (no libseccomp binding needed): an ALLOW-LIST.

Only the system calls a Python interpreter, numpy and the built-in bots use after start-up are allowed (found
with ``strace`` over every built-in bot and game, a numpy bot and the hostile suite; docs/sandbox.md). A few
are allowed with their arguments checked: ``clone`` only for threads (``CLONE_THREAD``, no namespace flag),
``prctl`` only for naming threads and reading state, ``ioctl`` only for the terminal/fd queries the standard
library makes, ``prlimit64`` only on the bot itself. ``clone3`` answers ENOSYS so glibc falls back to
``clone``, whose flags the filter can read; ``ioctl`` with another request answers ENOTTY.

The argument checks also keep two bots from meeting in kernel state that outlives a move (docs/sandbox.md,
"Shared kernel state"): ``fcntl`` only for descriptor flags and duplication (no locks, leases,
notifications or signal owners on files both bots can open), ``futex`` only process-private (a shared
futex key on a runtime file's page is the same key in every bot; a shared wait answers EAGAIN, which
glibc takes as a spurious wake-up), ``madvise`` only the advice allocators give (no read-ahead, page-out
or page merging), ``preadv2``/``pwritev2`` without flags (``RWF_NOWAIT`` tells whether a page is cached);
``sysinfo`` (machine-wide task and memory counters) is denied like any call not listed.

Every other call is denied with errno ``ERRNO_BASE + number``: no real errno is that large, so the referee
can name the call in the bot's failure reason (:func:`explain`, e.g. "system call listmount (458) is not
allowed in the sandbox") instead of a misleading "permission denied". A foreign architecture (i386 or x32
calls on x86_64) kills the process. Installed by the bot host after it has started and imported its game.
"""
from __future__ import annotations

import ctypes
import errno
import os
import re
from collections.abc import Sequence

from arena.sandbox import _sys
from arena.sandbox.syscalls import BY_ARCH

ERRNO_BASE = 3000
"""A denied call ``n`` fails with errno ``ERRNO_BASE + n`` (at most 4095, the kernel's largest errno)."""
_MAX_NAMED = 1024

# Both architectures (a name missing on one is skipped there).
ALLOWED = frozenset("""
read write readv writev pread64 pwrite64 preadv pwritev lseek close close_range dup dup2 dup3
openat open newfstatat fstat stat lstat fstatfs statfs getdents64 getdents readlink readlinkat
access faccessat faccessat2 getcwd chdir fchdir fsync fdatasync pipe pipe2 poll ppoll select pselect6
epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2 eventfd2
mmap munmap mprotect mremap msync brk mbind get_mempolicy
clock_gettime clock_getres clock_nanosleep nanosleep gettimeofday time times getrusage getitimer setitimer alarm pause
rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigsuspend rt_sigtimedwait sigaltstack
kill tgkill tkill restart_syscall
getpid getppid gettid getuid geteuid getgid getegid getgroups getresuid getresgid getpgid getpgrp getsid
getpriority getrlimit setrlimit uname getcpu getrandom
sched_yield sched_getaffinity sched_getparam sched_getscheduler sched_get_priority_max sched_get_priority_min
set_robust_list set_tid_address rseq arch_prctl exit exit_group
""".split())

CLONE_THREAD = 0x00010000
# CLONE_NEWTIME | NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NAMESPACES = 0x80 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
# PR_GET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_NAME, PR_GET_NAME, PR_GET_SECCOMP, PR_CAPBSET_READ, PR_GET_TIMERSLACK,
# PR_GET_NO_NEW_PRIVS, PR_GET_THP_DISABLE, PR_SET_VMA (glibc names its anonymous mappings)
PRCTL_ALLOWED = (2, 3, 15, 16, 21, 23, 30, 39, 42, 0x53564D41)
# TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO, FIONCLEX, FIOCLEX, FIOASYNC (the same numbers on both architectures)
IOCTL_ALLOWED = (0x5401, 0x5413, 0x541B, 0x5421, 0x5450, 0x5451, 0x5452)
# F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC, F_GETPIPE_SZ: a descriptor's own flags. Not the
# locks (F_SETLK, F_OFD_*), F_SETLEASE, F_NOTIFY, F_SETOWN/F_SETSIG: state of a file that every bot can open.
FCNTL_ALLOWED = (0, 1, 2, 3, 4, 1030, 1032)
FUTEX_PRIVATE_FLAG = 128
# FUTEX_WAIT and FUTEX_WAIT_BITSET, with and without FUTEX_CLOCK_REALTIME: shared waits answer EAGAIN (glibc's
# pthread_join waits "shared" on the thread id and then re-reads it: a busy wait, never a hang); every other
# shared operation answers EINVAL (glibc's wake accepts it).
FUTEX_SHARED_WAITS = (0, 9, 256, 265)
# MADV_NORMAL, DONTNEED, FREE, DONTFORK, DOFORK, HUGEPAGE, NOHUGEPAGE, DONTDUMP, DODUMP, WIPEONFORK, KEEPONFORK,
# DONTNEED_LOCKED: what allocators (glibc, numpy) give about their own anonymous memory. Not WILLNEED,
# RANDOM/SEQUENTIAL (read-ahead into the shared page cache), COLD/PAGEOUT, MERGEABLE (same-page merging
# across processes), POPULATE_*, COLLAPSE. Others answer EINVAL, the kernel's own answer to an unknown advice.
MADVISE_ALLOWED = (0, 4, 8, 10, 11, 14, 15, 16, 17, 18, 19, 24)

_LD_W_ABS, _JEQ, _JGE, _JSET, _JA, _RET_K, _RET_A, _ADD_K, _OR_K = 0x20, 0x15, 0x35, 0x45, 0x05, 0x06, 0x16, 0x04, 0x44
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
_OFF_NR, _OFF_ARCH = 0, 4
_SET_MODE_FILTER, _FLAG_TSYNC = 1, 1
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def _arg(i: int) -> int:
    """Offset of the low 32 bits of argument ``i`` in ``struct seccomp_data`` (little-endian machines)."""
    return 16 + 8 * i


class _Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Insn))]


def is_supported() -> bool:
    """True when this architecture has a syscall table here and the kernel has seccomp filters."""
    return _sys.MACHINE in _AUDIT_ARCH and os.path.exists("/proc/sys/kernel/seccomp/actions_avail")


def _numbers(machine: str) -> dict[str, int]:
    return {name: nr for nr, name in BY_ARCH[machine].items()}


def number(name: str, machine: str | None = None) -> int:
    """The system call number of ``name`` on ``machine`` (default: this one); KeyError when it has none."""
    return _numbers(machine or _sys.MACHINE)[name]


def allowed_names(machine: str | None = None) -> list[str]:
    """The calls allowed without an argument check on ``machine`` (default: this one)."""
    nrs = _numbers(machine or _sys.MACHINE)
    return sorted(name for name in ALLOWED if name in nrs)


def _denied(nr: int) -> int:
    return RET_ERRNO | (ERRNO_BASE + nr)


def build_filter(deny_affinity: bool = False, machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The BPF program as (code, jt, jf, k) tuples (exposed for tests).

    Args:
        deny_affinity: ``sched_setaffinity`` answers EPERM (when no cpuset cgroup holds the bot to its CPUs,
            a bot could otherwise widen its own affinity).
    """
    machine = machine or _sys.MACHINE
    nrs = _numbers(machine)
    prog: list[tuple[int, int, int, int]] = [
        (_LD_W_ABS, 0, 0, _OFF_ARCH),
        (_JEQ, 1, 0, _AUDIT_ARCH[machine]),
        (_RET_K, 0, 0, RET_KILL_PROCESS),
        (_LD_W_ABS, 0, 0, _OFF_NR),
    ]
    if machine == "x86_64":  # x32 ABI numbers alias the ones below
        prog += [(_JGE, 0, 1, 0x40000000), (_RET_K, 0, 0, RET_KILL_PROCESS)]
    # Allowed calls: "jeq nr; ret allow" pairs, so no jump is ever longer than one instruction. The kernel
    # caches every call whose answer does not depend on its arguments: allowed calls cost no filter run.
    for nr in sorted(nrs[name] for name in ALLOWED if name in nrs):
        prog += [(_JEQ, 0, 1, nr), (_RET_K, 0, 0, RET_ALLOW)]

    def special(name: str, block: list[tuple[int, int, int, int]]) -> None:
        if name in nrs:
            prog.append((_JEQ, 0, len(block), nrs[name]))
            prog.extend(block)

    def one_of(offset: int, values: Sequence[int], otherwise: int,
               then: int = RET_ALLOW) -> list[tuple[int, int, int, int]]:
        block = [(_LD_W_ABS, 0, 0, offset)]
        for v in values:
            block += [(_JEQ, 0, 1, v), (_RET_K, 0, 0, then)]
        return block + [(_RET_K, 0, 0, otherwise)]

    special("clone3", [(_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)])  # glibc falls back to clone
    # statx answers a mount's id (STATX_MNT_ID_UNIQUE: a machine-wide count of the mounts made since boot, each
    # bot's namespace adds its own; without it an id the kernel hands out smallest-free, which tells how many mounts
    # exist): ENOSYS, as on an old kernel, so callers fall back to fstatat (Python's os.stat uses fstatat anyway)
    special("statx", [(_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)])
    special("clone", [(_LD_W_ABS, 0, 0, _arg(0)),  # flags: threads only, no namespace
                      (_JSET, 1, 0, CLONE_THREAD), (_RET_K, 0, 0, _denied(nrs["clone"])),
                      (_JSET, 0, 1, CLONE_NAMESPACES), (_RET_K, 0, 0, _denied(nrs["clone"])),
                      (_RET_K, 0, 0, RET_ALLOW)])
    special("prctl", one_of(_arg(0), PRCTL_ALLOWED, _denied(nrs["prctl"])))
    special("ioctl", one_of(_arg(1), IOCTL_ALLOWED, RET_ERRNO | errno.ENOTTY))
    special("prlimit64", one_of(_arg(0), (0,), _denied(nrs["prlimit64"])))  # its own limits only
    special("fcntl", one_of(_arg(1), FCNTL_ALLOWED, _denied(nrs["fcntl"])))
    special("futex", [(_LD_W_ABS, 0, 0, _arg(1)), (_JSET, 0, 1, FUTEX_PRIVATE_FLAG), (_RET_K, 0, 0, RET_ALLOW)]
            + one_of(_arg(1), FUTEX_SHARED_WAITS, RET_ERRNO | errno.EINVAL, then=RET_ERRNO | errno.EAGAIN))
    special("madvise", one_of(_arg(2), MADVISE_ALLOWED, RET_ERRNO | errno.EINVAL))
    for name in ("preadv2", "pwritev2"):  # flags (RWF_NOWAIT answers EAGAIN for an uncached page) must be 0
        special(name, one_of(_arg(5), (0,), RET_ERRNO | errno.EOPNOTSUPP))
    special("sched_setaffinity", [(_RET_K, 0, 0, RET_ERRNO | errno.EPERM)] if deny_affinity
            else [(_RET_K, 0, 0, RET_ALLOW)])
    # Everything else: errno ERRNO_BASE + nr (numbers too large to name get ENOSYS).
    prog += [(_JGE, 0, 1, _MAX_NAMED), (_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),
             (_ADD_K, 0, 0, ERRNO_BASE), (_OR_K, 0, 0, RET_ERRNO), (_RET_A, 0, 0, 0)]
    assert len(prog) < 4096 and all(0 <= jt < 256 and 0 <= jf < 256 for _, jt, jf, _ in prog)
    return prog


def decide(program: Sequence[tuple[int, int, int, int]], nr: int, args: Sequence[int] = (),
           machine: str | None = None) -> int:
    """Runs ``program`` on one call like the kernel would and returns the action (exposed for tests)."""
    data = {_OFF_NR: nr, _OFF_ARCH: _AUDIT_ARCH[machine or _sys.MACHINE]}
    for i, value in enumerate(args):
        data[_arg(i)] = value & 0xFFFFFFFF
        data[_arg(i) + 4] = value >> 32
    a, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        pc += 1
        if code == _LD_W_ABS:
            a = data.get(k, 0)
        elif code in (_RET_K, _RET_A):
            return k if code == _RET_K else a
        elif code == _ADD_K:
            a = (a + k) & 0xFFFFFFFF
        elif code == _OR_K:
            a |= k
        elif code == _JA:
            pc += k
        else:
            taken = a == k if code == _JEQ else a >= k if code == _JGE else bool(a & k)
            pc += jt if taken else jf


def denied_call(err: int) -> str | None:
    """The name of the call a denial errno stands for ("listmount (458)"), None for an ordinary errno."""
    nr = err - ERRNO_BASE
    if not 0 <= nr < _MAX_NAMED:
        return None
    return f"{BY_ARCH.get(_sys.MACHINE, {}).get(nr, 'unknown')} ({nr})"


_UNKNOWN_ERROR = re.compile(r"\[Errno (\d+)\] Unknown error \1")


def explain(text: str) -> str:
    """Rewrites Python's "[Errno 3458] Unknown error 3458" in a bot's failure text to name the denied call."""
    def name(m: re.Match[str]) -> str:
        call = denied_call(int(m.group(1)))
        return m.group(0) if call is None else f"[Errno {m.group(1)}] system call {call} is not allowed in the sandbox"
    return _UNKNOWN_ERROR.sub(name, text)


_PROGRAMS: dict[bool, tuple[ctypes.Array[_Insn], _Prog]] = {}


def _program(deny_affinity: bool) -> _Prog:
    """The filter as the kernel takes it, built once per process: the fork server builds both variants when
    it imports this module, so a bot does not pay for it at start-up."""
    if deny_affinity not in _PROGRAMS:
        program = build_filter(deny_affinity)
        insns = (_Insn * len(program))(*[_Insn(*i) for i in program])
        _PROGRAMS[deny_affinity] = (insns, _Prog(len(program), insns))
    return _PROGRAMS[deny_affinity][1]


if is_supported():
    for _deny in (False, True):
        _program(_deny)


def install(deny_affinity: bool = False) -> None:
    """Installs the filter on every thread of the calling process (no new privileges is set first).

    Raises:
        OSError: the kernel refused the filter.
    """
    prog = _program(deny_affinity)
    _sys.prctl(_sys.PR_SET_NO_NEW_PRIVS, 1)
    _sys.syscall("seccomp", ctypes.c_uint(_SET_MODE_FILTER), ctypes.c_uint(_FLAG_TSYNC), ctypes.byref(prog))
