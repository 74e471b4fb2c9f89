"""Issue 32: the dashboard's Bracket tab (the real Textual app over real stores): a tournament league's rounds and
matches as text, the Swiss table, the places, names shown literally (Rich markup in them never parsed), the tab
following a tournament being played by a real `arena league run`; no Bracket tab for a round robin."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.widgets import Static, TabbedContent

from arena.tui.app import ArenaApp
from tests.leaderboards.support import arena
from tests.league_files import league_toml
from tests.tui.pilot import wait_for

SIZE = (120, 40)
MARKUP = "[@x=(]"
BOLD = "[bold]b[/bold]"
BOTS = [{"name": MARKUP, "spec": "random"}, {"name": BOLD, "spec": "greedy"}, {"name": "mc", "spec": "mc(n=10)"}]
SLOW = '''import random, time
class Bot:
    def __init__(self, game, seat, seed):
        self.rng = random.Random(seed)
    def step(self, state, limit):
        time.sleep(0.3)
        return self.rng.choice(state.legal_actions())
'''


def tab_text(app: ArenaApp) -> str:
    return str(app.query_one("#bracket-text", Static).render())


def bracket_tab_shown(app: ArenaApp) -> bool:
    return app.query_one(TabbedContent).get_tab("bracket").display is not False


@pytest.mark.slow
async def test_a_swiss_tournament_has_a_bracket_tab_with_its_rounds_table_and_places(tmp_path: Path) -> None:
    (tmp_path / "sw.toml").write_text(league_toml("sw", seed=2, database="sw.sqlite", format="swiss", bots=BOTS))
    run = arena(tmp_path, "league", "run", "sw.toml", "-q")
    assert run.returncode == 0, run.stderr
    app = ArenaApp(tmp_path / "sw.sqlite", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        assert bracket_tab_shown(app)
        await pilot.press("4")
        assert app.query_one(TabbedContent).active == "bracket" and app.query_one("#bracket-view").has_focus
        text = tab_text(app)
        assert text.startswith("Swiss, 3 entrants: finished")
        assert "round 1" in text and "round 2" in text and "bye" in text  # three bots: a bye each round
        assert "standings" in text and "Buchholz" in text and "places" in text and "1. " in text
        assert MARKUP in text and BOLD in text  # literally: the markup in the names was not parsed
        await pilot.press("1")
        assert app.query_one(TabbedContent).active == "leaderboard"


async def test_no_bracket_tab_for_a_round_robin(store_file: Path) -> None:
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        assert not bracket_tab_shown(app) and app.snapshot.bracket is None
        await pilot.press("4")
        assert app.query_one(TabbedContent).active == "leaderboard"


@pytest.mark.slow
async def test_the_bracket_tab_follows_a_knockout_being_played(tmp_path: Path) -> None:
    """A knockout of three slow bots (0.3 s a move) played by `arena league run` while the dashboard is open: the tab
    shows the final to be played ('winner of R1-2'), then its result and the places, by itself."""
    (tmp_path / "slow.py").write_text(SLOW)
    bots = [{"name": "top", "spec": "random"}, {"name": MARKUP, "file": "slow.py"},
            {"name": "slow2", "file": "slow.py"}]
    (tmp_path / "ko.toml").write_text(league_toml("ko", seed=2, database="ko.sqlite", format="knockout", bots=bots,
                                                  games=("nim(n=9)",)))
    runner = subprocess.Popen([sys.executable, "-m", "arena.cli", "league", "run", "ko.toml", "-q"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "ko.sqlite").exists():  # the runner creates the store
            assert time.monotonic() < deadline and runner.poll() is None, runner.communicate()
            time.sleep(0.1)
        app = ArenaApp(tmp_path / "ko.sqlite", poll_interval=0.1)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.snapshot is not None and app.snapshot.bracket is not None, 60)
            await pilot.press("4")
            seen = [tab_text(app)]
            deadline = time.monotonic() + 120
            while "finished" not in seen[-1].splitlines()[0]:
                assert time.monotonic() < deadline, seen[-1]
                await pilot.pause(0.1)
                if tab_text(app) != seen[-1]:
                    seen.append(tab_text(app))
            final = seen[-1]
            assert "winner of R1-2" in " ".join(seen[:-1])  # the final, before its second entrant was known
            assert "1. " in final and "2. " in final and "3. " in final
            assert "\u2713" in final and "winner of" not in final
        assert runner.wait(60) == 0, runner.communicate()
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
