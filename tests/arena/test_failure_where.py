"""Every failure says where (issue 23 §2): every kind of bot (file, folder, COMP424 agent, OpenSpiel wrapper) gets the
traceback of its own code with paths relative to its snapshot; a bot that cannot start in `arena match` is one line
with the reason and exit 2; a COMP424 checkout given without `comp424:` is recognised; failure positions are the
replay's 1-based move numbers everywhere."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import arena as arena_pkg
from tests.leaderboards.support import arena, write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "comp424"
CHECKOUT = FIXTURES / "checkout"
INSTALL = os.path.dirname(os.path.dirname(os.path.abspath(arena_pkg.__file__)))

pytestmark = pytest.mark.xdist_group("failure_where")

HELPER_BOT = """
class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        return helper()


def helper():
    raise ValueError("boom in the helper")
"""

OPENSPIEL_BOT = """
from bots.openspiel_bots import wrap


class Broken:
    def step(self, state):
        return search(state)


def search(state):
    raise KeyError("no such node")


Bot = wrap(lambda game, seat, seed: Broken())
"""


def _failure(tmp_path: Path, game: str, bot: str) -> dict:
    out = arena(tmp_path, "match", game, bot, "random", "--games", "1", "--json", "-q")
    assert out.returncode == 0, out.stderr
    failures = json.loads(out.stdout)["games"][0]["failures"]
    assert failures, out.stdout
    return failures[0]


def _assert_own_traceback(detail: str, frames: list[str]) -> None:
    for frame in frames:
        assert frame in detail, detail
    assert INSTALL not in detail and "/bot/" not in detail and "arena/sandbox/host.py" not in detail, detail


def test_a_file_bots_traceback_names_its_own_file_relative_to_its_snapshot(tmp_path):
    write(tmp_path / "helperbot.py", HELPER_BOT)
    f = _failure(tmp_path, "hex(size=4)", "helperbot.py")
    assert f["reason"] == "crash"
    _assert_own_traceback(f["detail"], ['File "helperbot.py", line 6, in step', 'File "helperbot.py", line 10, in helper',
                                        "ValueError: boom in the helper"])


def test_a_folder_bots_traceback_names_its_helper_module(tmp_path):
    (tmp_path / "folder" / "lib").mkdir(parents=True)
    write(tmp_path / "folder" / "lib" / "__init__.py", "")
    write(tmp_path / "folder" / "lib" / "search.py", "def best(state):\n    return state.nothing_here\n")
    write(tmp_path / "folder" / "bot.py", """
        from lib.search import best

        class Bot:
            def __init__(self, game, seat, seed):
                pass

            def step(self, state, limit):
                return best(state)
        """)
    f = _failure(tmp_path, "hex(size=4)", "folder")
    _assert_own_traceback(f["detail"], ['File "bot.py", line 8, in step', 'File "lib/search.py", line 2, in best',
                                        "AttributeError"])


def test_a_comp424_agent_that_raises_has_its_traceback_in_the_detail(tmp_path):
    f = _failure(tmp_path, "colosseum(size=6)", f"comp424:{CHECKOUT}@raising_agent")
    assert f["reason"] == "illegal"
    _assert_own_traceback(f["detail"], ["the agent raised ValueError: my search has a bug",
                                        'File "agents/bad_agents.py", line 9, in step'])
    assert "comp424.py" not in f["detail"]


def test_an_openspiel_wrapped_bots_traceback_is_its_own_code(tmp_path):
    pytest.importorskip("pyspiel", reason="the OpenSpiel wrapper needs open_spiel")
    write(tmp_path / "osbot.py", OPENSPIEL_BOT)
    f = _failure(tmp_path, "hex(size=4)", "osbot.py")
    _assert_own_traceback(f["detail"], ['File "osbot.py", line 6, in step', 'File "osbot.py", line 10, in search',
                                        "KeyError: 'no such node'"])
    assert "openspiel_bots.py" not in f["detail"]


@pytest.mark.parametrize("bot, text, cause", [
    ("nobot.py", "x = 1\n", "defines no class Bot"),
    ("binary.py", "\x00\x01 not python", "SyntaxError"),
    ("comp424:{checkout}@studentagent", None, "no agent registered as 'studentagent'"),
])
def test_a_bot_that_cannot_start_in_a_match_is_one_line_and_exit_2(tmp_path, bot, text, cause):
    if text is not None:
        (tmp_path / bot).write_text(text)
    game = "colosseum(size=5)" if bot.startswith("comp424:") else "hex(size=4)"
    out = arena(tmp_path, "match", game, bot.format(checkout=CHECKOUT), "random", "--games", "2", "-q")
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot start" in lines[0] and cause in lines[0], out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


@pytest.mark.parametrize("folder", ["checkout", "handin"])
def test_a_comp424_folder_given_without_the_prefix_is_recognised(tmp_path, folder):
    path = FIXTURES / folder
    out = arena(tmp_path, "match", "colosseum(size=5)", str(path), "random", "--games", "1", "-q")
    assert out.returncode == 2
    line = out.stderr.strip()
    assert len(line.splitlines()) == 1 and f"comp424:{path}" in line and "bot.py" not in line, line


def test_a_league_bot_that_is_a_comp424_checkout_is_told_its_format(tmp_path):
    config = write(tmp_path / "league.toml", f"""
        name = "course"
        games = ["colosseum(size=5)"]
        [[bots]]
        name = "alice"
        file = "{CHECKOUT}"
        [[bots]]
        name = "r"
        spec = "random"
        """)
    out = arena(tmp_path, "league", "run", str(config), "-q")
    assert out.returncode == 2
    assert 'format = "comp424"' in out.stderr and "bot.py" not in out.stderr, out.stderr
