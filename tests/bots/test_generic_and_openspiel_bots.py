"""arena's search bots on games without compiled states (the generic path: bots/generic.py), and OpenSpiel's bots
as contestants (bots/openspiel_bots.py) on openspiel: games and on Hex, whose OpenSpiel twin numbers actions
as arena does."""
from __future__ import annotations

import json
import random

import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install 'arena[openspiel]')")

import bots  # noqa: E402
import games  # noqa: E402
from arena.referee.loop import play  # noqa: E402
from bots.base import Limit  # noqa: E402
from tests.leaderboards.support import arena, write  # noqa: E402


def test_hex_equals_openspiels_hex_move_for_move():
    for pie in (False, True):
        for trial in range(150):
            rng = random.Random(trial)
            game = games.load(f"hex(size={rng.randint(2, 6)},pie={str(pie).lower()})")
            mine, theirs = game.new_initial_state(), pyspiel.load_game(game.openspiel_twin()).new_initial_state()
            while not mine.is_terminal():
                assert mine.legal_actions() == list(theirs.legal_actions())
                assert mine.current_player() == theirs.current_player()
                action = rng.choice(mine.legal_actions())
                mine.apply_action(action)
                theirs.apply_action(action)
            assert theirs.is_terminal() and mine.returns() == list(theirs.returns())


@pytest.mark.parametrize("game", ["openspiel:tic_tac_toe", "openspiel:connect_four"])
def test_generic_uct_takes_an_immediate_win(game):
    g = games.load(game)
    state = g.new_initial_state()
    moves = [4, 0, 3, 1] if "tic" in game else [0, 1, 0, 1, 0, 1]  # x/first player wins with 5 / column 0
    state.apply_actions(moves)
    bot = bots.make("uct(iterations=300)", g, 0, 7)
    assert type(bot).__module__ == "bots.generic"
    assert bot.step(state.clone(), Limit()) == (5 if "tic" in game else 0)


def test_generic_bots_beat_random_on_a_game_from_outside():
    g = games.load("openspiel:tic_tac_toe")
    for spec in ("uct(iterations=200)", "mc(n=30)"):
        results = [play(g, [bots.make(spec, g, 0, s), bots.make("random", g, 1, s)], seed=s).returns[0]
                   for s in range(8)]
        assert min(results) >= 0, f"{spec} lost a game of tic-tac-toe to random as first player: {results}"


def test_mcts_reuse_keeps_its_tree_between_moves():
    g = games.load("openspiel:connect_four")
    bot = bots.make("mcts_reuse(iterations=50,c=annealed,expand=all)", g, 0, 1)
    state = g.new_initial_state()
    first = bot.step(state.clone(), Limit())
    kept = bot._root.children[first].children[3]  # expand=all: every grandchild of a visited child exists
    before = kept.visits
    state.apply_actions([first, 3])
    bot.step(state.clone(), Limit())
    assert bot._root is kept and kept.visits > before, "the second search went on from the first one's subtree"


def test_bots_without_a_generic_path_say_what_to_use():
    for spec, words in (("hmc", "try mc or uct"), ("determinized", "try uct"), ("uct(rollout=greedy)", "heuristic")):
        with pytest.raises(games.GameSpecError, match=words):
            bots.make(spec, games.load("openspiel:tic_tac_toe"), 0, 1)


def test_openspiel_bots_play_twins_and_openspiel_games_only():
    for game in ("hex(size=4,pie=true)", "openspiel:pig(winscore=10)"):
        g = games.load(game)
        record = play(g, [bots.make("openspiel:mcts(max_simulations=50)", g, 0, 1),
                          bots.make("openspiel:random", g, 1, 2)], seed=3)
        assert record.returns[0] != record.returns[1]
    with pytest.raises(games.GameSpecError, match="no OpenSpiel twin"):
        bots.make("openspiel:random", games.load("nim"), 0, 1)
    with pytest.raises(games.GameSpecError, match="unknown parameter 'sims'"):
        bots.make("openspiel:mcts(sims=3)", games.load("hex"), 0, 1)


def test_mcts_beats_random_on_hex():
    g = games.load("hex(size=4)")
    wins = sum(play(g, [bots.make("openspiel:mcts(max_simulations=300)", g, 0, s), bots.make("random", g, 1, s)],
                    seed=s).returns[0] > 0 for s in range(6))
    assert wins >= 5


@pytest.mark.slow
def test_sandboxed_openspiel_bots_and_a_wrapped_bot_file(tmp_path):
    write(tmp_path / "wrapped.py", """
        import numpy as np
        from open_spiel.python.algorithms import mcts
        from bots.openspiel_bots import wrap

        Bot = wrap(lambda game, seat, seed: mcts.MCTSBot(
            game, 2.0, 30, mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed)),
            random_state=np.random.RandomState(seed)))
    """)
    for game, bots_ in (("hex(size=4,pie=true)", ["openspiel:mcts(max_simulations=100)", "wrapped.py"]),
                        ("openspiel:connect_four", ["openspiel:random", "uct(iterations=20)"])):
        out = arena(tmp_path, "match", game, *bots_, "--games", "2", "--json", "-q")
        assert out.returncode == 0, out.stderr
        for g in json.loads(out.stdout)["games"]:
            assert not g["failures"] and g["terminations"] == ["normal", "normal"], (game, g["failures"])
