"""The runner lock beside a store: held by a live process only, names its holder, and a planted symlink or
hard link at its name never makes a runner write another file."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from leaderboards import lock
from leaderboards.storefile import StoreError

HOLD = """
import sys, time
from leaderboards import lock
held = lock.acquire(sys.argv[1])
print("held", flush=True)
time.sleep(60)
"""


def _holder(db: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_held_lock_is_refused_with_its_holder_and_freed_when_the_holder_is_killed(tmp_path: Path):
    db = tmp_path / "s.sqlite"
    proc = _holder(db)
    try:
        with pytest.raises(lock.StoreBusy) as caught:
            lock.acquire(db)
        assert f"pid {proc.pid} on host {socket.gethostname()}" in str(caught.value)
        assert lock.holder(db) is not None and f"pid {proc.pid}" in lock.holder(db)
    finally:
        proc.kill()  # SIGKILL: the kernel drops the flock
        proc.wait()
    assert lock.holder(db) is None
    with lock.acquire(db) as held:
        assert f"pid={os.getpid()}" in lock.lock_path(db).read_text()
        assert held.fd >= 0
    assert lock.holder(db) is None  # released on exit


@pytest.mark.parametrize("plant", ["symlink", "hardlink"])
def test_a_planted_link_at_the_lock_name_is_refused_and_its_target_untouched(tmp_path: Path, plant: str):
    db = tmp_path / "s.sqlite"
    victim = tmp_path / "precious.txt"
    victim.write_text("do not truncate me\n")
    before = (victim.read_bytes(), victim.stat().st_mtime_ns)
    time.sleep(0.01)
    if plant == "symlink":
        lock.lock_path(db).symlink_to(victim)
    else:
        os.link(victim, lock.lock_path(db))
    with pytest.raises(StoreError) as caught:
        lock.acquire(db)
    assert "s.sqlite.lock" in str(caught.value)
    assert (victim.read_bytes(), victim.stat().st_mtime_ns) == before
