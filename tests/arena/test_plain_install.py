"""What README command 1 installs runs every bot a student writes (issue 30 §1).

The test venv has the test extras (OpenSpiel among them), and OpenSpiel's own libraries once hid a sandbox
runtime that lacked what numpy loads: on a plain ``pip install .`` no bot importing numpy could start, nor any
COMP424 agent. So this test makes a venv exactly as README command 1 does, in a copy of this checkout, and plays
a numpy bot and a COMP424 checkout in it, and runs ``arena sandbox check`` there. It compiles arena (minutes):
marked slow, run by CI.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.sandbox import check
from tests.arena.commands.test_readme_commands import readme_commands

ROOT = Path(__file__).resolve().parents[2]
NUMPY_BOT = '''import numpy as np


class Bot:
    def __init__(self, game, seat, seed):
        self.rng = np.random.default_rng(seed)
        self.scores = np.linalg.eigvalsh(np.eye(3))  # linalg's own extension module

    def step(self, state, limit):
        legal = np.asarray(state.legal_actions())
        return int(legal[self.rng.integers(len(legal))])
'''

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bool(check.missing_mandatory()),
                                 reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}"),
              pytest.mark.skipif(not shutil.which("git"), reason="copies the checkout with git ls-files")]


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Path:
    """A copy of this checkout (its tracked and unignored files, nothing built) installed by README command 1's
    install part, run as written (without its `arena demo`, run below)."""
    install = readme_commands()[0]
    assert install.endswith(" && arena demo"), install
    copy = tmp_path_factory.mktemp("plain") / "arena"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if not p.startswith(str(ROOT / ".venv")))  # the README's python3, not the test venv's
    done = subprocess.run(["bash", "-c", install.removesuffix(" && arena demo")], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return copy


def arena(plain: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(plain / ".venv" / "bin" / "arena"), *args], cwd=plain, capture_output=True,
                          text=True, timeout=timeout)


def test_the_plain_install_has_no_test_extras(plain):
    """The point of this test: nothing but arena's own requirements (no OpenSpiel, whose libraries hid the
    fault)."""
    python = plain / ".venv" / "bin" / "python"
    out = subprocess.run([str(python), "-c", "import importlib.util as u; print(u.find_spec('pyspiel') is None, "
                          "u.find_spec('numpy') is not None)"], capture_output=True, text=True)
    assert out.stdout.split() == ["True", "True"], out.stdout + out.stderr


def test_a_numpy_bot_plays_in_the_plain_install(plain, tmp_path):
    bot = tmp_path / "np_bot.py"
    bot.write_text(NUMPY_BOT)
    done = arena(plain, "match", "colosseum(size=8)", str(bot), "random", "--games", "2", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    games = json.loads(done.stdout)["games"]
    assert len(games) == 2 and all(t == "normal" for g in games for t in g["terminations"]), games


def test_a_comp424_checkout_plays_in_the_plain_install(plain):
    checkout = ROOT / "tests" / "fixtures" / "comp424" / "checkout"
    done = arena(plain, "match", "colosseum(size=6)", f"comp424:{checkout}", "random", "--games", "2", "--json",
                 "--move-time", "2", "--first-move-time", "30")
    assert done.returncode == 0, done.stderr[-2000:]
    games = json.loads(done.stdout)["games"]
    assert len(games) == 2 and all(t == "normal" for g in games for t in g["terminations"]), games


def test_sandbox_check_imports_the_bot_packages_in_the_plain_install(plain):
    done = arena(plain, "sandbox", "check", "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["imports"]["ok"] and report["imports"]["modules"] >= 10, report["imports"]


def test_the_readmes_main_job_runs_in_the_plain_install(plain):
    done = arena(plain, "demo")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "leaderboard" in (done.stdout + done.stderr).lower()
