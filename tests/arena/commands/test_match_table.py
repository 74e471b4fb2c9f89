"""`arena match`'s table (not only --json) says where a bot failed: the exception and its own file and line."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CRASHER = '''class Bot:
    def __init__(self, game, seat, seed):
        self.n = 0

    def step(self, state, limit):
        self.n += 1
        if self.n == 2:
            return helper(state)
        return state.legal_actions()[0]


def helper(state):
    return {}["missing"]
'''


@pytest.mark.slow
def test_the_match_table_shows_a_crashs_own_file_and_line(tmp_path: Path):
    (tmp_path / "crasher.py").write_text(CRASHER)
    arena = os.path.join(os.path.dirname(sys.executable), "arena")
    p = subprocess.run([arena, "match", "nim(n=15)", "crasher.py", "random", "--games", "2", "-q"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "crash 2" in p.stdout  # (the table's count, as before)
    assert "KeyError: 'missing' (at crasher.py, line 13, in helper)" in p.stdout, p.stdout
    assert "crasher.py" in p.stdout.split("KeyError")[0].splitlines()[-1]  # the line names the bot it is about
