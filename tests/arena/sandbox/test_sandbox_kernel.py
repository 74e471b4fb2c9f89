"""The kernel surface a bot reaches (docs/sandbox.md, "Threat model"): seccomp is an allow-list (a call not on it
is denied and named in the failure reason) and every bot has a PID namespace of its own (host processes do
not exist for it). Real processes, real kernel."""
from __future__ import annotations

import errno
import os
import platform
import subprocess

import pytest

from arena.sandbox import check, seccomp
from tests.arena.sandbox_helpers import place, play

pytestmark = pytest.mark.xdist_group("sandbox")

if check.missing_mandatory():
    pytest.skip(f"mandatory sandbox layers missing on this machine: {check.missing_mandatory()}",
                allow_module_level=True)


def failure_detail(record) -> str:
    assert [f.seat for f in record.failures] == [0], record.failures
    return record.failures[0].detail


def test_mount_listing_ldt_and_mount_handles_are_denied(tmp_path):
    detail = failure_detail(play(place("kernel_surface", tmp_path)))
    assert "surface:" in detail, detail
    report = detail.split("surface:", 1)[1].split("\n", 1)[0]
    names = ["listmount", "statmount", "open_tree_attr"] + (["modify_ldt"] if platform.machine() == "x86_64" else [])
    for name in names:
        assert f"{name}=denied" in report, report
    assert "succeeded" not in report, report


def test_a_denied_call_is_named_in_the_failure_reason(tmp_path):
    detail = failure_detail(play(place("kernel_surface", tmp_path, {"raise.txt": "listmount"})))
    assert "listmount" in detail and "not allowed" in detail, detail


@pytest.mark.skipif(not check.active("pid_namespace"), reason="no PID namespace on this machine")
def test_host_processes_do_not_exist_for_a_bot(tmp_path):
    other = subprocess.Popen(["sleep", "60"])  # a host process of ours, and the referee (this process)
    try:
        detail = failure_detail(play(place("pid_probe", tmp_path, {"pids.txt": f"{os.getpid()} {other.pid}"})))
    finally:
        other.kill()
        other.wait()
    report = detail.split("pids:", 1)[1].split("\n", 1)[0]
    for pid in (os.getpid(), other.pid):
        assert f"{pid}:kill=ESRCH,getpgid=ESRCH,getsid=ESRCH" in report, report
    own = int(report.split("self=")[1].split()[0])
    assert own < 300, f"the bot sees its host pid {own}: {report}"


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_denies_by_default_on_both_architectures(machine):
    program = seccomp.build_filter(machine=machine)

    def decide(name, *args):
        return seccomp.decide(program, seccomp.number(name, machine), args, machine)
    denied = seccomp.RET_ERRNO | seccomp.ERRNO_BASE
    assert seccomp.decide(program, 9999, (), machine) != seccomp.RET_ALLOW  # an unknown number
    assert decide("read") == decide("write") == decide("futex", 0, 128) == seccomp.RET_ALLOW  # FUTEX_WAIT_PRIVATE
    assert decide("listmount") == denied + seccomp.number("listmount", machine)
    assert seccomp.denied_call(seccomp.ERRNO_BASE + 458) == "listmount (458)"
    assert decide("clone", 0x3D0F00) == seccomp.RET_ALLOW  # pthread_create's flags: a thread
    assert decide("clone", 0x11) != seccomp.RET_ALLOW  # fork: SIGCHLD only
    assert decide("clone", 0x3D0F00 | 0x20000000) != seccomp.RET_ALLOW  # a thread in a new PID namespace
    assert decide("clone3") == seccomp.RET_ERRNO | errno.ENOSYS  # glibc falls back to clone
    assert decide("prctl", 15) == seccomp.RET_ALLOW and decide("prctl", 1, 0) != seccomp.RET_ALLOW  # PDEATHSIG
    assert decide("ioctl", 1, 0x5401) == seccomp.RET_ALLOW
    assert decide("ioctl", 1, 0x5412) == seccomp.RET_ERRNO | errno.ENOTTY
    assert decide("prlimit64", 0) == seccomp.RET_ALLOW and decide("prlimit64", 1) != seccomp.RET_ALLOW
    assert decide("sched_setaffinity") == seccomp.RET_ALLOW
    # Kernel state two bots share (tests/arena/sandbox/test_covert_channels.py plays the attacks): locks, leases,
    # notifications, shared futex keys, read-ahead and residency probes, machine-wide counters.
    assert decide("fcntl", 3, 1) == decide("fcntl", 3, 4) == decide("fcntl", 3, 1030) == seccomp.RET_ALLOW
    for cmd in (5, 6, 7, 36, 37, 38, 1024, 1026, 8, 10):  # F_GETLK F_SETLK F_SETLKW F_OFD_* LEASE NOTIFY OWN SIG
        assert decide("fcntl", 3, cmd) == denied + seccomp.number("fcntl", machine), cmd
    assert decide("futex", 0, 0) == seccomp.RET_ERRNO | errno.EAGAIN  # a shared wait: a spurious wake-up
    assert decide("futex", 0, 1) == seccomp.RET_ERRNO | errno.EINVAL  # a shared wake
    assert decide("futex", 0, 9 | 128 | 256) == seccomp.RET_ALLOW  # private, whatever the clock
    assert decide("madvise", 0, 0, 4) == seccomp.RET_ALLOW
    assert decide("madvise", 0, 0, 3) == seccomp.RET_ERRNO | errno.EINVAL
    assert decide("preadv2", 3, 0, 1, 0, 0, 0) == seccomp.RET_ALLOW
    assert decide("preadv2", 3, 0, 1, 0, 0, 8) == seccomp.RET_ERRNO | errno.EOPNOTSUPP  # RWF_NOWAIT
    for name in ("flock", "sysinfo", "mincore", "inotify_init1", "fanotify_init", "shmget", "mq_open", "keyctl",
                 "add_key", "readahead", "fadvise64", "cachestat", "socket", "timer_create", "memfd_create"):
        assert decide(name) == denied + seccomp.number(name, machine), name
    fallback = seccomp.build_filter(deny_affinity=True, machine=machine)
    assert seccomp.decide(fallback, seccomp.number("sched_setaffinity", machine), (), machine) == \
        seccomp.RET_ERRNO | errno.EPERM
