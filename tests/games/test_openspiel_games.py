"""OpenSpiel games as arena games (``openspiel:NAME(params)``): the State API's promises, the refusals, a missing
open_spiel said in one line, and a sandboxed match with a bot file replayed and verified."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install 'arena[openspiel]')")

import games  # noqa: E402
from arena.tui import boards  # noqa: E402
from arena.tui.replay import Replay  # noqa: E402
from tests.games.conformance import random_sim_check  # noqa: E402
from tests.leaderboards.support import arena, write  # noqa: E402


@pytest.mark.parametrize("spec, n", [("openspiel:tic_tac_toe", 100), ("openspiel:connect_four", 20),
                                     ("openspiel:hex(board_size=4)", 40), ("openspiel:pig(winscore=10)", 20)])
def test_openspiel_games_keep_the_state_api_promises(spec, n):
    random_sim_check(games.load(spec), n_games=n, seed=2)


def test_facts_come_from_openspiels_game_type():
    pig = games.load("openspiel:pig(players=3,winscore=10)")
    assert pig.num_players() == 3 and pig.has_chance and str(pig) == "openspiel:pig(players=3,winscore=10)"
    ttt = games.load("openspiel: tic_tac_toe")
    assert not ttt.has_chance and ttt.min_utility() == -1 and ttt == games.load("openspiel:tic_tac_toe")
    assert ttt.max_game_length() == 9


@pytest.mark.parametrize("spec, words", [
    ("openspiel:kuhn_poker", "hidden information"),
    ("openspiel:matrix_rps", "simultaneous"),
    ("openspiel:no_such_game", "OpenSpiel has no game 'no_such_game'"),
    ("openspiel:tic_tac_toe(rows=4)", "OpenSpiel refuses it"),
    ("openspiel:", "needs a game name"),
])
def test_games_arena_cannot_referee_are_refused_in_one_line(spec, words):
    with pytest.raises(games.GameSpecError, match=words):
        games.load(spec)


def test_without_open_spiel_the_error_says_how_to_install_it(tmp_path):
    code = ("import sys; sys.modules['pyspiel'] = None\n"
            "import games\n"
            "try:\n    games.load('openspiel:tic_tac_toe')\n"
            "except games.GameSpecError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert 'pip install "arena[openspiel]"' in out.stdout
    cli = arena(tmp_path, "match", "openspiel:tic_tac_toe", "random", "random")  # the real CLI, pyspiel present
    assert cli.returncode == 0, cli.stderr


def test_the_tui_shows_the_text_board():
    replay = Replay("openspiel:tic_tac_toe", [4, 0])
    assert replay.move(1)[1] == "x(1,1)"
    assert boards.render(replay.game_name, replay.observation(2)).plain.startswith("o..\n.x.\n...")


def test_a_sandboxed_match_on_an_openspiel_game_with_chance_verifies(tmp_path):
    write(tmp_path / "first.py", """
        class Bot:
            def __init__(self, game, seat, seed):
                import pyspiel  # a bot may use OpenSpiel itself inside the sandbox
                self.game = game

            def step(self, state, limit):
                return state.legal_actions()[-1]
    """)
    out = arena(tmp_path, "match", "openspiel:pig(winscore=15)", "first.py", "random", "--games", "2", "--json", "-q")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert all(not g["failures"] and g["terminations"] == ["normal", "normal"] for g in data["games"]), data["games"]
    (tmp_path / "m.json").write_text(out.stdout)
    verified = arena(tmp_path, "replay", "--match", "m.json")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_league_game_matching_tells_openspiel_games_apart():
    from arena.league.config import match_game
    specs = ["openspiel:othello", "openspiel:tic_tac_toe", "openspiel:hex(board_size=5)"]
    assert match_game("openspiel:tic_tac_toe", specs) == "openspiel:tic_tac_toe"
    assert match_game("openspiel:hex(board_size=5)", specs) == "openspiel:hex(board_size=5)"
    assert match_game("openspiel:hex", specs) is None


@pytest.mark.slow
def test_a_league_of_openspiel_games_with_openspiel_and_generic_bots(tmp_path):
    from leaderboards.ratings import DRAW_PROBABILITY, env_for
    from leaderboards.store import Store
    config = write(tmp_path / "league.toml", """
        name = "os"
        games = ["openspiel:tic_tac_toe", "openspiel:pig(winscore=10)"]
        games_per_pairing = 2
        seed = 4
        database = "os.sqlite"
        [limits]
        move_time = 1.0
        [[bots]]
        spec = "openspiel:mcts(max_simulations=50)"
        [[bots]]
        spec = "uct(iterations=30)"
    """)
    run = arena(tmp_path, "league", "run", str(config))
    assert run.returncode == 0, run.stderr
    with Store.open(tmp_path / "os.sqlite") as store:
        played = store.games(store.find_league("os").id)
    assert {g.game for g in played} == {"openspiel:tic_tac_toe", "openspiel:pig(winscore=10)"} and len(played) == 4
    assert all(not g.failures for g in played)
    for g in played:
        verify = arena(tmp_path, "replay", str(g.id), "--db", "os.sqlite", "--verify")
        assert verify.returncode == 0, verify.stdout + verify.stderr
    assert env_for("openspiel:tic_tac_toe").draw_probability == DRAW_PROBABILITY


def test_without_open_spiel_openspiel_bots_are_refused_where_they_are_named():
    code = ("import sys; sys.modules['pyspiel'] = None\n"
            "import bots, games\n"
            "try:\n    bots.make('openspiel:mcts', games.load('hex'), 0, 1)\n"
            "except games.GameSpecError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert "OpenSpiel bots need open_spiel" in out.stdout and 'pip install "arena[openspiel]"' in out.stdout
