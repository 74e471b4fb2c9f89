"""The kernel surface a bot reaches (docs/sandbox.md, "Threat model"): seccomp is an allow-list (a call not on it
is denied and named in the failure reason) and every bot has a PID namespace of its own (host processes do
not exist for it). Real processes, real kernel."""
from __future__ import annotations

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


def test_the_filter_denies_by_default():
    program = seccomp.build_filter()
    # The last instruction a syscall with an unlisted number reaches is a deny, never an allow.
    assert seccomp.decide(program, 9999) != seccomp.RET_ALLOW
    assert seccomp.decide(program, seccomp.number("read")) == seccomp.RET_ALLOW
    assert seccomp.decide(program, seccomp.number("listmount")) & 0xFFFF0000 == seccomp.RET_ERRNO
