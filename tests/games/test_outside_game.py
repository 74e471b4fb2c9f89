"""A game from outside the repository (examples/tictactoe, an installed package with an ``arena.games`` entry
point) runs through every tool without a line of arena changed: the registry, ``arena match`` with a sandboxed
bot file, a league, ``arena replay`` (board and --verify), ratings, the TUI's board and replay model, and the
referee's substitute move, which the game declares."""
from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import games
from arena.referee.loop import play
from arena.tui import boards
from arena.tui.replay import Replay
from leaderboards.ratings import DRAW_PROBABILITY, env_for
from leaderboards.store import Store
from tests.games.conformance import random_sim_check
from tests.leaderboards.support import arena, write

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tictactoe"

pytestmark = pytest.mark.xdist_group("outside_game")

FIRST_LEGAL_BOT = """
class Bot:
    def __init__(self, game, seat, seed):
        self.seat = seat

    def step(self, state, limit):
        return state.legal_actions()[0]
"""


@pytest.fixture(scope="module", autouse=True)
def installed():
    """The example installed as a user installs it (a real wheel in site-packages, where a sandboxed bot
    process can read it); reinstalled when the installed copy differs from examples/."""
    def current() -> bool:
        found = {ep.name: ep for ep in entry_points(group="arena.games")}
        if "tictactoe" not in found:
            return False
        import importlib
        module = importlib.import_module("arena_tictactoe")
        return Path(module.__file__).read_text() == (EXAMPLE / "arena_tictactoe" / "__init__.py").read_text()
    if not current():
        # Offline, with this venv's setuptools and wheel (the test extra brings both: a new venv's
        # setuptools 65 has no bdist_wheel without wheel).
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                              "--force-reinstall", str(EXAMPLE)], capture_output=True, text=True, timeout=300)
        if pip.returncode:
            pytest.fail(f"pip could not install examples/tictactoe:\n{pip.stderr[-2000:]}", pytrace=False)
        games.registry._entry_points.cache_clear()
        sys.modules.pop("arena_tictactoe", None)
    assert current(), "examples/tictactoe did not install"


def test_the_registry_finds_the_installed_game_by_its_entry_point():
    assert "tictactoe" in games.game_names()
    game = games.load("tictactoe(first=o)")
    assert str(game) == "tictactoe(first=o)" and game.new_initial_state().current_player() == 1
    with pytest.raises(games.GameSpecError, match="valid games: .*tictactoe"):
        games.load("tictac")


def test_it_keeps_the_state_api_promises():
    random_sim_check(games.load("tictactoe"), n_games=200, seed=3)


def test_ratings_ask_the_game_whether_it_has_draws():
    assert env_for("tictactoe").draw_probability == DRAW_PROBABILITY
    assert env_for("hex").draw_probability == 0 and env_for("colosseum").draw_probability == DRAW_PROBABILITY


def test_the_referee_plays_the_games_own_substitute_move():
    class Raising:
        def step(self, state, limit):
            raise RuntimeError("no move")

    class First:
        def step(self, state, limit):
            return state.legal_actions()[0]

    record = play("tictactoe", [Raising(), First()], seed=1, on_failure="random_move")
    assert record.history[0] == 4, "the example's rule: the centre while it is free"
    assert record.failures[0].substituted == 4


def test_the_tui_draws_the_games_own_board_and_replays_it():
    replay = Replay("tictactoe", [4, 0, 8])
    assert replay.move(1) == (0, "b2")
    text = boards.render(replay.game_name, replay.observation(3), ["ann", "bob"]).plain
    assert text.splitlines()[:3] == [" o  ·  · ", " ·  x  · ", " ·  ·  x "]
    assert "bob to move" in text


def test_match_with_a_sandboxed_bot_file_then_replay_verifies_it(tmp_path):
    write(tmp_path / "first.py", FIRST_LEGAL_BOT)
    out = arena(tmp_path, "match", "tictactoe", "first.py", "random", "--games", "4", "--json", "-q")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert len(data["games"]) == 4 and all(g["game"] == "tictactoe" for g in data["games"])
    assert all(len(g["history"]) >= 5 and not g["failures"] for g in data["games"])
    (tmp_path / "match.json").write_text(out.stdout)
    verified = arena(tmp_path, "replay", "--match", "match.json")
    assert verified.returncode == 0 and "4 games verified" in verified.stdout, verified.stdout + verified.stderr


@pytest.mark.slow
def test_a_league_plays_it_rates_it_and_replays_it(tmp_path):
    write(tmp_path / "first.py", FIRST_LEGAL_BOT)
    config = write(tmp_path / "league.toml", """
        name = "ttt"
        games = ["tictactoe", "tictactoe(first=o)"]
        games_per_pairing = 2
        seed = 5
        database = "ttt.sqlite"
        [[bots]]
        spec = "random"
        [[bots]]
        name = "first"
        file = "first.py"
    """)
    run = arena(tmp_path, "league", "run", str(config))
    assert run.returncode == 0, run.stderr
    with Store.open(tmp_path / "ttt.sqlite") as store:
        played = store.games(store.find_league("ttt").id)
    assert {g.game for g in played} == {"tictactoe", "tictactoe(first=o)"} and len(played) == 4
    shown = arena(tmp_path, "replay", str(played[0].id), "--db", "ttt.sqlite")
    assert shown.returncode == 0, shown.stderr
    assert "result:" in shown.stdout and "..." in shown.stdout  # the game's text board, move names
    verify = arena(tmp_path, "replay", str(played[0].id), "--db", "ttt.sqlite", "--verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    board = arena(tmp_path, "leaderboard", "--db", "ttt.sqlite")
    assert board.returncode == 0 and "first" in board.stdout


@pytest.mark.slow
async def test_the_dashboard_replays_it_with_the_games_own_board(tmp_path):
    from textual.widgets import Static

    from arena.tui.app import ArenaApp
    from arena.tui.screens import ReplayScreen
    from tests.tui.pilot import wait_for
    config = write(tmp_path / "league.toml", """
        name = "ttt"
        games = ["tictactoe"]
        games_per_pairing = 2
        seed = 8
        database = "ttt.sqlite"
        bots = ["random", "mc(n=5)"]
    """)
    run = arena(tmp_path, "league", "run", str(config))
    assert run.returncode == 0, run.stderr
    app = ArenaApp(tmp_path / "ttt.sqlite", poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("3", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        board = app.screen.query_one("#board", Static)
        assert str(board.render()).splitlines()[:3] == [" ·  ·  · "] * 3
        await pilot.press("end")
        text = str(board.render())
        assert "game over" in text and text.count("x") >= 3  # TicTacToeGame.render_board drew it
