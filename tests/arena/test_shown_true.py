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

from arena.comp424 import ENTRY
from leaderboards.store import Store
from tests.leaderboards.support import arena, write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "comp424"

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
