"""Small things a newcomer tripped on (issue 18 §4): messages said once and with their line, tables that keep
their numbers at 80 columns, a leaderboard that says why a bot has fewer games."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest
from rich.console import Console

from arena.results.records import headline
from games.errors import GameSpecError
from tests.leaderboards.support import write

SYNTAX_DETAIL = """bot raised an exception: SyntaxError: expected ':' (bot.py, line 2)
  File "/work/arena/sandbox/host.py", line 109, in load_bot
    module_spec.loader.exec_module(module)
  File "<frozen importlib._bootstrap_external>", line 1004, in source_to_code
  File "/bot/bot.py", line 2
    def step(self, state, limit)
                                ^
SyntaxError: expected ':'"""


def test_a_failure_headline_keeps_where_it_happened():
    assert headline(SYNTAX_DETAIL) == "SyntaxError: expected ':' (at /bot/bot.py, line 2)"
    assert headline("bot timed out after 2.0 s") == "bot timed out after 2.0 s"
    assert headline("") == ""


def test_a_bad_spec_value_says_what_is_allowed_once():
    from bots.registry import parse_bot_spec
    with pytest.raises(GameSpecError) as exc:
        parse_bot_spec("uct(c=-1)")
    assert str(exc.value).count("must be annealed or a number >= 0") == 1, str(exc.value)


def _on_a_terminal(cmd: list[str], cwd, columns: int) -> tuple[int, str]:
    """Runs ``cmd`` with its stdout on a pseudo-terminal ``columns`` wide (as a user at such a terminal sees it)."""
    import fcntl
    import pty
    import struct
    import termios
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=follower, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's last writer has gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=300)
    os.close(leader)
    out = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode(errors="replace")).replace("\r", "")
    return proc.returncode, out


@pytest.mark.slow
def test_the_match_table_keeps_names_and_numbers_whole_at_80_columns(tmp_path):
    """On an 80-column terminal the table fits it and still keeps every name and number whole (off a terminal
    it is printed whole at any width: tests/arena/output/test_output_fits.py)."""
    write(tmp_path / "carol_the_long_named_bot.py", """
        class Bot:
            def __init__(self, game, seat, seed):
                pass

            def step(self, state, limit):
                return state.legal_actions()[0]
        """)
    code, out = _on_a_terminal([sys.executable, "-m", "arena.cli", "match", "nim", "carol_the_long_named_bot.py",
                                "uct(iterations=50)", "--games", "2", "-q"], tmp_path, 80)
    assert code == 0, out
    table = [line for line in out.splitlines() if line.startswith("│")]
    assert table and all(len(line) <= 80 for line in out.splitlines()), out
    assert "…" not in out
    names = "".join(line.split("│")[1].strip() for line in table)
    assert "carol_the_long_named_bot.py" in names and "uct(iterations=50)" in names
    times = [line.split("│")[6].strip() for line in table if line.split("│")[6].strip()]
    assert len(times) == 2 and all(t.count("/") == 2 for t in times)


def test_the_leaderboard_says_why_a_bot_has_fewer_games():
    from dataclasses import replace

    from arena.commands.leaderboard import print_leaderboard
    from arena.output.views import Standing
    row = Standing(rank=1, bot="greedy", bot_id=1, name="greedy", version=1, kind="builtin", origin="config",
                   spec="greedy", mu=30.0, sigma=2.0, exposed=24.0, games=24, wins=24, draws=0, losses=0, timeouts=0,
                   crashes=0, illegal=0, memory=0, protocol=0, failures=0, status="active", status_reason="",
                   plays=["nim"])
    other = replace(row, rank=2, bot="random", bot_id=2, games=40, plays=None)
    out = io.StringIO()
    print_leaderboard(Console(file=out, width=120), "demo", [row, other], 72)
    assert "greedy plays only nim" in out.getvalue() and "random plays only" not in out.getvalue()
