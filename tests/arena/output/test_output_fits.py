"""Output that fits where it goes (issue 23, section 5): off a terminal a table is printed whole; the SPRT's
verdict says in words who is stronger; the demo leaves nothing untracked in a checkout."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.leaderboards.support import arena, write

ROOT = Path(__file__).resolve().parents[3]
FIRST_LEGAL = """
class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        return state.legal_actions()[0]
"""


def table_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]


def test_a_piped_match_prints_its_whole_table(tmp_path):
    """Piped, rich would cut the table at 80 columns: long names folded, headers wrapped, columns lost."""
    write(tmp_path / "a_bot_with_a_rather_long_file_name_for_its_table.py", FIRST_LEGAL)
    out = arena(tmp_path, "match", "nim(n=9)", "a_bot_with_a_rather_long_file_name_for_its_table.py",
                "mc(n=5,tie_break=first)", "--games", "2", "-q")
    assert out.returncode == 0, out.stderr
    lines = table_lines(out.stdout)
    assert len(lines) == 6, out.stdout  # top, one header line, rule, two bots, bottom: nothing wrapped
    header = lines[1]
    for column in ("bot", "W/D/L", "points", "failures", "moves", "move ms p50/p90/p99", "cpu ms p50"):
        assert f" {column} " in header, header
    assert "a_bot_with_a_rather_long_file_name_for_its_table" in out.stdout
    assert len({len(line) for line in lines}) == 1, "every line of the table as wide as the others"
    assert re.search(r"^sandbox layers: .*cpu_accounting|^sandbox layers: .*\S$", out.stdout, re.M)


def test_every_stdout_console_is_the_one_that_is_whole_off_a_terminal():
    """The class of the problem: a bare rich ``Console()`` on stdout is 80 columns when piped."""
    bare = []
    for path in sorted((ROOT / "arena").rglob("*.py")):
        if "tui" in path.parts:  # the dashboard draws on its own screen
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bConsole\((?!.*(stderr=True|file=))", line) and "def " not in line:
                bare.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    allowed = {"arena/text.py"}
    assert [b for b in bare if b.split(":")[0] not in allowed] == [], "\n".join(bare)


def sprt_result(decision: str, llr: float, elo0: float = 0, elo1: float = 50):
    from leaderboards.sprt import Sprt, SprtResult
    s = Sprt(elo0, elo1)
    return SprtResult(llr, s.lower, s.upper, decision, "pentanomial", (0, 0, 0, 0, 20), 40, elo0, elo1, 0.05, 0.05,
                      "logistic")


@pytest.mark.parametrize("decision, llr, elo0, elo1, words", [
    ("H1", 3.08, 0, 50, "H1: greedy is stronger than random (elo1=50 accepted, LLR 3.08 >= 2.94)"),
    ("H0", -2.95, 0, 50, "H0: greedy is not 50 Elo stronger than random (elo0=0 accepted, LLR -2.95 <= -2.94)"),
    ("H1", 3.0, -10, 10, "H1: greedy is not weaker than random (elo1=10 accepted, LLR 3.00 >= 2.94)"),
    ("H0", -3.0, -10, 10, "H0: greedy is not stronger than random (elo0=-10 accepted, LLR -3.00 <= -2.94)"),
    ("H0", -3.0, -50, -10, "H0: greedy is weaker than random (elo0=-50 accepted, LLR -3.00 <= -2.94)"),
    ("inconclusive", 0.5, 0, 50, "inconclusive: 40 games did not decide between elo0=0 and elo1=50 "
                                 "(LLR 0.50, bounds -2.94 and 2.94); more --games would"),
])
def test_the_sprt_verdict_says_in_words_who_is_stronger(decision, llr, elo0, elo1, words):
    assert sprt_result(decision, llr, elo0, elo1).verdict("greedy", "random") == words


def test_a_match_prints_the_sprt_verdict_in_words(tmp_path):
    out = arena(tmp_path, "match", "nim", "greedy", "random", "--games", "400", "--sprt", "elo0=0,elo1=50", "-q")
    assert out.returncode == 0, out.stderr
    line = out.stdout.splitlines()[-1]
    assert re.search(r"after \d+ games: H1: greedy is stronger than random "
                     r"\(elo1=50 accepted, LLR \d+\.\d\d >= 2\.94\)$",
                     line), line
    assert "alpha 0.05" in line


def test_a_league_run_in_a_checkout_leaves_nothing_untracked(tmp_path):
    """`arena demo` in the checkout left arena.sqlite-shm, -wal and .lock as untracked files: every file a run
    leaves beside its store is ignored by the repository's .gitignore."""
    import shutil
    import subprocess
    shutil.copy(ROOT / ".gitignore", tmp_path / ".gitignore")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path / "league.toml", """
        name = "checkout"
        games = ["nim(n=7)"]
        games_per_pairing = 2
        bots = ["random", "greedy"]
    """)
    out = arena(tmp_path, "league", "run", "league.toml", "-q")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "arena.sqlite").exists()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path, check=True,
                            capture_output=True, text=True).stdout.split()
    assert sorted(status[1::2]) == [".gitignore", "league.toml"], status
    for leftover in ("arena.sqlite-wal", "arena.sqlite-shm", "arena.sqlite.lock", "arena.sqlite-journal"):
        (tmp_path / leftover).write_text("")  # whether or not this run left it, a run may
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path, check=True,
                            capture_output=True, text=True).stdout.split()
    assert sorted(status[1::2]) == [".gitignore", "league.toml"], status


def stored_hex_game():
    from leaderboards.store import StoredGame
    return StoredGame(id=1, league_id=1, schedule_key="k", base_game="hex(size=5)", game="hex(size=5)", round=0,
                      seed=1, seats=[0, 1], players=["alice", "bob\x1b[2J"], history=[12, 7, 3], returns=[0, 0],
                      terminations=["normal", "normal"], move_seats=[0, 1, 0], wall_times=[0.01, 0.02, 0.03],
                      cpu_times=[0.01, 0.02, 0.03], failures=[], duration=0.1)


def test_the_html_hex_board_has_coordinates_and_edge_colours():
    """The report's replay page drew Hex as str(state): no column letters, no row numbers, no colours; it
    draws the game's own board (as the dashboard does), as runs of text with their colours."""
    from arena.output.replays import frames
    out = frames(stored_hex_game(), {})
    assert out is not None and len(out) == 4
    runs = out[-1]["board"]
    assert isinstance(runs, list), runs
    text = "".join(t for t, _ in runs)
    lines = text.splitlines()
    assert lines[0].split() == list("abcde") and lines[1].split()[0] == "1" and lines[5].split()[-1] == "5", text
    classes = [cls for t, cls in runs for _ in t]  # the css classes of each character
    first_edge, first_letter = text.index("\\"), text.index("a")
    assert "fg-blue" in classes[first_edge] and "fg-red" in classes[first_letter], runs  # the two sides' colours
    stone = text.index("x", first_edge)  # the last move (x at c3) is highlighted as the dashboard does
    assert "fg-red" in classes[stone]
    assert any("bg-yellow" in cls for _, cls in runs)
    assert "bob\\x1b[2J" in text and "\x1b" not in text  # names shown escaped


def test_both_replay_viewers_read_odd_stored_clocks_alike():
    """A store edited by hand: readings that are not finite numbers are none, a move never charged (None) keeps its
    seat's clock, and the HTML viewer's frames and the dashboard's panel show the same clocks. (NaN ended the
    dashboard, 10**400 lost the HTML replay, and None read "not started" on the web after the seat had moved.)"""
    from dataclasses import replace

    from arena.output.replays import frames
    from arena.results.moves import clocks_after
    from arena.tui.replay import Replay
    g = stored_hex_game()
    for odd in (float("nan"), 10 ** 400, "1.5", True, None):
        clocked = replace(g, info={"time_control": "30", "clock_left": [29.5, 28.04, odd]})
        assert clocked.clock_readings == [29.5, 28.04, None]
        out = frames(clocked, {})
        assert out is not None, odd
        assert [f["clocks"] for f in out] == [[None, None], [29.5, None], [29.5, 28.0], [29.5, 28.0]], odd
        replay = Replay(g.game, g.history)
        shown = [clocks_after(clocked.clock_readings, replay.bot_moves_before(step), [None, None])
                 for step in range(len(replay))]
        assert [[None if c is None else round(c, 1) for c in row] for row in shown] == [f["clocks"] for f in out]
    assert replace(g, info={"clock_left": [1.0, 2.0, 3.0]}).clock_readings == []  # no time control: no clocks
