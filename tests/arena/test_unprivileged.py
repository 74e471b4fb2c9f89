"""The sandbox without root: the sandbox's own tests, hostile bots included, run again as an unprivileged user.

Without root there are no per-bot uids or cgroups; what must hold is the mandatory layers (no_new_privs,
Landlock, seccomp, rlimits) plus what an unprivileged user namespace gives (mount, network and PID namespaces).
Course staff on a shared machine run arena exactly like this, so the same attacks are tried again here.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534
# The sandbox's tests: every hostile bot, lifetimes, kernel facts, snapshots, the referee.
SANDBOX_TESTS = ["tests/arena/test_sandbox_hostile.py", "tests/arena/test_sandbox_lifetime.py",
                 "tests/arena/test_sandbox_kernel.py", "tests/arena/test_sandbox_startup.py",
                 "tests/arena/test_bot_snapshots.py", "tests/arena/test_snapshot.py", "tests/arena/test_referee.py"]

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start processes as another user"),
              pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")]


def _as_nobody(argv: list[str], env: dict[str, str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv],
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def nobody(tmp_path_factory):
    """(python, env) that run this checkout as uid 65534: this interpreter if that user can start it, else the
    system's python of the same version with this environment's packages on PYTHONPATH (a pyenv or venv under
    /root cannot be entered by another user). Skips, saying why, when the user can read neither."""
    home = tempfile.mkdtemp(prefix="arena-unprivileged-", dir="/tmp")  # /tmp: pytest's tmp_path is root's, 0700
    os.chown(home, NOBODY, NOBODY)
    base = {"HOME": home, "TMPDIR": "/tmp", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    paths = [str(ROOT)] + [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    tried = []
    for python, env in ((sys.executable, dict(base)), (system, dict(base, PYTHONPATH=os.pathsep.join(paths)))):
        # The sandbox execs sys.executable again (bot hosts, the fork server): that must work as the user too.
        probe = _as_nobody([python, "-c", "import subprocess, sys, arena.cli, numpy, pytest, games._core; "
                            "subprocess.run([sys.executable, '-c', 'import arena.sandbox.host'], check=True)"],
                           env, ROOT, 120)
        if probe.returncode == 0:
            yield python, env
            break
        tried.append(f"{python}: {(probe.stderr.strip().splitlines() or ['exit ' + str(probe.returncode)])[-1]}")
    else:
        pytest.skip("uid 65534 cannot run this checkout (" + "; ".join(tried) + ")")
    shutil.rmtree(home, ignore_errors=True)


def test_an_unprivileged_user_gets_every_mandatory_layer_and_a_live_game(nobody):
    python, env = nobody
    out = _as_nobody([python, "-m", "arena.cli", "sandbox", "check", "--json"], env, ROOT, 300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["missing_mandatory"] == [] and report["bot_files_allowed"], report
    assert report["live"]["ok"] and set(report["live"]["bot_uids"]) == {NOBODY}, report["live"]
    active = {layer["name"] for layer in report["layers"] if layer["active"]}
    assert "uid" not in active  # no dedicated uids without root: the check must not claim them


def test_the_sandbox_tests_pass_as_an_unprivileged_user(nobody):
    """Every hostile bot, lifetime and snapshot test again, as uid 65534 (a failure names the test)."""
    python, env = nobody
    out = _as_nobody([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-rs",
                      *SANDBOX_TESTS], env, ROOT, 1200)
    summary = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    print(f"as uid {NOBODY}: {summary}")
    skipped = [line for line in out.stdout.splitlines() if line.startswith("SKIPPED")]
    print("\n".join(skipped))
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert " passed" in summary and "failed" not in summary, summary
    collected = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
                                *SANDBOX_TESTS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    total = sum(1 for line in collected.stdout.splitlines() if "::" in line)
    passed = int(summary.split(" passed")[0].split()[-1])
    assert total > 0 and passed + len(skipped) == total, f"{total} tests collected, as uid {NOBODY}: {summary}"
    # Without root a test may only skip for what root alone has: cgroups and other uids.
    assert all("no cgroup" in line or "only root" in line for line in skipped), skipped
