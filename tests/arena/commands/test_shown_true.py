"""Nothing shown is untrue (issue 23 §3): a COMP424 bot is listed as what the user gave (comp424:FOLDER[@agent]),
never as arena's entry file; a bot without games claims no rating interval and ranks after the rated bots; pairs
that never met are blank; `arena league status` and the runner count the same games."""
from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from arena.adapters.comp424_names import ENTRY
from leaderboards.store import Store
from tests.leaderboards.support import arena, write

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "comp424"

pytestmark = pytest.mark.xdist_group("shown_true")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A COMP424 league (the checkout copied as team-quantum) run, and another agent of it submitted."""
    d = tmp_path_factory.mktemp("course")
    shutil.copytree(FIXTURES / "checkout", d / "team-quantum")
    config = write(d / "league.toml", """
        name = "course"
        games = ["colosseum(size=5)"]
        games_per_pairing = 2
        seed = 3
        database = "course.sqlite"
        [[bots]]
        name = "quantum"
        file = "team-quantum"
        format = "comp424"
        [[bots]]
        name = "r"
        spec = "random"
        """)
    run = arena(d, "league", "run", str(config), "-q")
    assert run.returncode == 0, run.stderr
    sub = arena(d, "submit", f"comp424:{d / 'team-quantum'}@random_agent", "--league", str(config), "--name", "walker")
    assert sub.returncode == 0, sub.stderr
    return d, config


@pytest.mark.slow
def test_a_comp424_bot_is_listed_as_the_user_gave_it(course):
    d, config = course
    want = {"quantum": "comp424:team-quantum", "walker": "comp424:team-quantum@random_agent"}
    board = arena(d, "leaderboard", "--league", str(config), "--csv")
    assert board.returncode == 0, board.stderr
    rows = {r["bot"]: r for r in csv.DictReader(io.StringIO(board.stdout))}
    for name, spec in want.items():
        assert rows[name]["spec"] == spec, rows[name]
    assert ENTRY not in board.stdout
    report = arena(d, "report", "--league", str(config), "--out", "site")
    assert report.returncode == 0, report.stderr
    pages = "".join(p.read_text() for p in (d / "site").rglob("*.html"))
    assert ENTRY not in pages and "comp424:team-quantum@random_agent" in pages
    from arena.tui.data import StoreReader
    with Store.open(d / "course.sqlite", readonly=True) as store:
        ids = {b.name: b.id for b in store.bots(store.find_league("course").id)}
    reader = StoreReader(d / "course.sqlite")
    try:
        for name, spec in want.items():
            assert reader.bot_detail(ids[name]).filename == spec
    finally:
        reader.close()


# -- a bot without games claims no rating ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def waiting(tmp_path_factory):
    """A league whose raising bot lost every game (its mu - 3 sigma is below a new bot's 0), and a bot submitted after
    the run: no games yet."""
    from tests.leaderboards.support import RAISING_BOT, RANDOM_BOT
    d = tmp_path_factory.mktemp("waiting")
    write(d / "raising.py", RAISING_BOT)
    write(d / "late.py", RANDOM_BOT)
    config = write(d / "league.toml", """
        name = "w"
        games = ["nim"]
        games_per_pairing = 4
        seed = 1
        database = "w.sqlite"
        probation_failures = 0
        [[bots]]
        spec = "random"
        [[bots]]
        spec = "greedy"
        [[bots]]
        name = "raising"
        file = "raising.py"
        """)
    run = arena(d, "league", "run", str(config), "-q")
    assert run.returncode == 0, run.stderr
    sub = arena(d, "submit", "late.py", "--league", str(config))
    assert sub.returncode == 0, sub.stderr
    return d, config


@pytest.mark.slow
def test_a_bot_without_games_is_unrated_and_ranked_after_the_rated(waiting):
    d, config = waiting
    out = arena(d, "leaderboard", "--league", str(config), "--json")
    assert out.returncode == 0, out.stderr
    bots = json.loads(out.stdout)["bots"]
    assert [b["bot"] for b in bots][-1] == "late", bots
    late = bots[-1]
    assert late["games"] == 0
    assert all(late[k] is None for k in ("elo", "elo_low", "elo_high", "rank_low", "rank_high", "group")), late
    raising = next(b for b in bots if b["bot"] == "raising")
    assert raising["games"] > 0 and raising["exposed"] < 0  # the prior's 0 would have ranked "late" above it
    for b in bots[:-1]:  # the rated bots' ranks are among themselves, and no -0.0 anywhere
        assert 1 <= b["rank_low"] <= b["rank_high"] <= len(bots) - 1, b
        assert all(str(b[k]) != "-0.0" for k in ("elo", "elo_low", "elo_high")), b
    table = arena(d, "leaderboard", "--league", str(config))
    row = next(line for line in table.stdout.splitlines() if " late " in line)
    assert "unrated" in row and "[" not in row, row
    report = arena(d, "report", "--league", str(config), "--out", "site")
    assert report.returncode == 0, report.stderr
    index = (d / "site" / "index.html").read_text()
    assert index.index(">late<") > index.index(">raising<")
    from arena.tui.data import StoreReader
    from leaderboards.ratings import ALL
    reader = StoreReader(d / "w.sqlite")
    try:
        rows = reader.poll(None, ALL).leaderboard
    finally:
        reader.close()
    late_row = rows[-1]  # (fitted, and unrated: no Elo, interval or group)
    assert late_row.label == "late" and late_row.fitted, late_row
    assert (late_row.elo, late_row.elo_low, late_row.elo_high, late_row.group) == (None, None, None, None), late_row


def test_pairs_that_never_met_are_blank_in_the_head_to_head(waiting):
    d, config = waiting
    out = arena(d, "leaderboard", "--league", str(config), "--h2h")
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("│ late "))
    cells = [c.strip() for c in row.strip("│").split("│")][1:]
    assert len(cells) == 4 and cells[:3] == ["", "", ""] and cells[3] == "-", row  # the last column is itself


# -- one count of a league's games while it runs ----------------------------------------------------------------------
SLOW_BOT = """
import time


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        time.sleep(0.15)
        return state.legal_actions()[0]
"""


@pytest.mark.slow
def test_status_and_the_runner_count_the_same_games_after_a_mid_run_submission(tmp_path):
    import subprocess
    import sys
    import time

    from tests.leaderboards.support import RANDOM_BOT
    write(tmp_path / "slow.py", SLOW_BOT)
    write(tmp_path / "late.py", RANDOM_BOT)
    config = write(tmp_path / "league.toml", """
        name = "mid"
        games = ["nim"]
        games_per_pairing = 8
        seed = 1
        database = "m.sqlite"
        [[bots]]
        name = "slow"
        file = "slow.py"
        [[bots]]
        spec = "random"
        """)
    runner = subprocess.Popen([sys.executable, "-m", "arena.cli", "league", "run", str(config), "-j", "1"],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while "games of the running league run played" not in (st := arena(tmp_path, "league", "status",
                                                                                str(config)).stdout):
            assert runner.poll() is None and time.monotonic() < deadline, st  # the run must still be going
            time.sleep(0.2)
        sub = arena(tmp_path, "submit", "late.py", "--league", str(config))
        assert sub.returncode == 0, sub.stderr
        status = arena(tmp_path, "league", "status", str(config)).stdout
        out, err = runner.communicate(timeout=300)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, err
    if "running league run" in status:  # (the run may have ended between the submission and this status)
        assert "/8 games of the running league run played" in status, status  # the runner's total, not 8 + 16
        assert "16 more scheduled games (bots submitted since the run started) wait for the next run" in status, status
    assert "8 scheduled" in out and "16 games of bots submitted during the run wait for the next run" in out, out
    after = arena(tmp_path, "league", "status", str(config)).stdout
    assert "8/24 scheduled games stored" in after, after
