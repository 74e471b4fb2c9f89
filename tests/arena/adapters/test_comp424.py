"""COMP424 agents run unchanged (issue 16 §1): course-style agents written for these tests (tests/fixtures/comp424:
a checkout with helper modules, numpy, deepcopy and a slow first move; a lone hand-in) in a sandboxed match, a
league and arena submit; the translation against the course's rules; wrong answers are illegal, and
on_failure = random_move plays the course engine's random walk and asks the agent again."""
from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import numpy as np
import pytest

import games
from arena.adapters.comp424 import take_agent, to_action
from arena.adapters.comp424_names import ENTRY
from games.colosseum import reference as ref
from games.colosseum.arrays import chess_board
from leaderboards.store import Store
from tests.leaderboards.support import arena, write

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "comp424"
CHECKOUT, HANDIN = FIXTURES / "checkout", FIXTURES / "handin"

pytestmark = pytest.mark.xdist_group("comp424")


def _course_moves_module():
    spec = importlib.util.spec_from_file_location("fixture_moves", CHECKOUT / "agents" / "MCTS" / "moves.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _random_states(n: int, seed: int):
    rng = random.Random(seed)
    for i in range(n):
        state = games.load(f"colosseum(size={rng.randint(3, 12)},seed={i})").new_initial_state()
        for _ in range(rng.randint(0, 12)):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            yield state


def test_the_course_view_of_a_state_is_the_course_engines():
    for state in _random_states(60, 1):
        board = chess_board(state)
        assert board.dtype == bool and board.shape == (state.size, state.size, 4) and board.flags.writeable
        assert board.tolist() == state.wall_array()
        # every wall on both sides and the border closed, as the course's set_barrier keeps it
        assert board[0, :, 0].all() and board[:, -1, 1].all() and board[-1, :, 2].all() and board[:, 0, 3].all()


def test_every_move_the_course_rules_allow_is_the_arena_action_it_names():
    moves = _course_moves_module()
    for state in _random_states(80, 2):
        me, opp = (tuple(p) for p in state.positions()[::1 if state.current_player() == 0 else -1])
        course = moves.all_moves(chess_board(state), me, opp, state.max_step)
        actions = sorted(to_action(m, state.size) for m in course)
        assert actions == state.legal_actions()
        board = [[[bool(x) for x in cell] for cell in row] for row in chess_board(state)]
        assert actions == sorted(ref.legal_actions(board, me, opp, state.max_step))


@pytest.mark.parametrize("answer, words", [
    (((0, 6), 0), "off the 6x6 board"),      # would alias cell (1, 0) if encoded blindly
    (((-1, 2), 1), "off the 6x6 board"),
    (((1, 2), 4), "dir should be in [0, 3]"),
    (((1, 2), True), "integers"),
    (((1.0, 2), 1), "integers"),
    ((1, 2, 3), "not ((row, col), dir)"),
    (None, "not ((row, col), dir)"),
])
def test_malformed_answers_are_named_not_encoded(answer, words):
    assert words in to_action(answer, 6)


def test_numpy_integers_are_answers():
    assert to_action(((np.int64(1), np.int32(2)), np.int8(3)), 6) == (1 * 6 + 2) * 4 + 3


def test_the_snapshot_is_the_folder_plus_arenas_entry(tmp_path):
    snap = take_agent(CHECKOUT)
    assert snap.entry == ENTRY and "agents/MCTS/moves.py" in snap.files and "store.py" in snap.files
    assert take_agent(CHECKOUT, "random_agent").digest != snap.digest, "the agent's name is part of the bot"
    lone = take_agent(HANDIN / "student_agent.py")
    assert set(lone.files) == {"student_agent.py", ENTRY}
    (tmp_path / ENTRY).write_text("")
    with pytest.raises(Exception, match="arena writes itself"):
        take_agent(tmp_path)


def test_match_checkout_against_handin_sandboxed_with_a_slow_first_move(tmp_path):
    out = arena(tmp_path, "match", "colosseum(size=6)", f"comp424:{CHECKOUT}", f"comp424:{HANDIN}",
                "--games", "2", "--json", "-q", "--first-move-time", "30", "--move-time", "2")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    for g in data["games"]:
        assert not g["failures"] and g["terminations"] == ["normal", "normal"], g
        first = g["seats"].index(0)  # the checkout's first move thinks for a second, its later moves do not
        checkout_moves = [w for s, w in zip(g["move_seats"], g["wall_times"]) if s == first]
        assert checkout_moves[0] >= 0.9 and all(w < 0.9 for w in checkout_moves[1:])
    assert data["totals"]["checkout"]["wins"] == 2, "the greedy agent beats a random wall-builder"


@pytest.mark.slow
def test_wrong_answers_are_illegal_and_random_move_plays_the_course_walk(tmp_path):
    for agent in ("raising_agent", "offboard_agent", "wall_agent"):
        lose = arena(tmp_path, "match", "colosseum(size=6)", f"comp424:{CHECKOUT}@{agent}", "random",
                     "--games", "1", "--json", "-q")
        assert lose.returncode == 0, lose.stderr
        g = json.loads(lose.stdout)["games"][0]
        bad = g["seats"].index(0)
        assert g["terminations"][bad] == "illegal" and g["failures"][0]["reason"] == "illegal", g["failures"]
    walk = arena(tmp_path, "match", "colosseum(size=7)", f"comp424:{CHECKOUT}@raising_agent", "random",
                 "--games", "2", "--json", "-q", "--on-failure", "random_move")
    assert walk.returncode == 0, walk.stderr
    data = json.loads(walk.stdout)
    for g in data["games"]:
        assert g["terminations"] == ["normal", "normal"]
        bad = g["seats"].index(0)
        assert len(g["failures"]) == g["move_seats"].count(bad) >= 2, "asked again on every turn"
        assert "my search has a bug" in g["failures"][0]["detail"]
    (tmp_path / "walk.json").write_text(walk.stdout)
    verified = arena(tmp_path, "replay", "--match", "walk.json")  # the substitutes are the random walk, re-drawn
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.slow
def test_a_league_and_submit(tmp_path):
    config = write(tmp_path / "league.toml", f"""
        name = "course"
        games = ["colosseum(size=5)"]
        games_per_pairing = 2
        seed = 3
        database = "course.sqlite"
        [limits]
        first_move_time = 30.0
        move_time = 2.0
        [[bots]]
        name = "student"
        file = "{CHECKOUT}"
        format = "comp424"
        [[bots]]
        name = "course-random"
        file = "{CHECKOUT}"
        format = "comp424"
        agent = "random_agent"
    """)
    run = arena(tmp_path, "league", "run", str(config))
    assert run.returncode == 0, run.stderr
    with Store.open(tmp_path / "course.sqlite") as store:
        played = store.games(store.find_league("course").id)
    assert len(played) == 2 and all(not g.failures for g in played)
    sub = arena(tmp_path, "submit", f"comp424:{HANDIN}", "--league", "course", "--db", "course.sqlite",
                "--name", "handin")
    assert sub.returncode == 0, sub.stdout + sub.stderr
    assert "passed validation" in sub.stdout


def test_league_files_are_checked(tmp_path):
    from arena.errors import ConfigError
    from arena.league.config import load_config
    base = f"""
        name = "x"
        games = ["nim"]
        [[bots]]
        spec = "random"
        [[bots]]
        file = "{CHECKOUT}"
        format = "comp424"
    """
    with pytest.raises(ConfigError, match="colosseum only"):
        load_config(write(tmp_path / "a.toml", base))
    with pytest.raises(ConfigError, match="comp424"):
        load_config(write(tmp_path / "b.toml", base.replace('format = "comp424"', 'agent = "a"')
                          .replace('games = ["nim"]', 'games = ["colosseum"]')))


@pytest.mark.ray
@pytest.mark.slow
def test_a_comp424_league_on_ray(tmp_path):
    pytest.importorskip("ray", reason="ray is not installed: pip install 'arena[ray]' to run the Ray backend tests")
    import os
    import subprocess
    import sys

    from arena.league.ray_cluster import LocalCluster
    config = write(tmp_path / "league.toml", f"""
        name = "course-ray"
        games = ["colosseum(size=5)"]
        games_per_pairing = 2
        seed = 6
        database = "ray.sqlite"
        [[bots]]
        name = "student"
        file = "{CHECKOUT}"
        format = "comp424"
        [[bots]]
        name = "handin"
        file = "{HANDIN}"
        format = "comp424"
    """)
    with LocalCluster(nodes=1, cpus=1) as cluster:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env["RAY_AUTH_TOKEN"] = cluster.token
        out = subprocess.run([str(Path(sys.executable).parent / "arena"), "league", "run", str(config), "--backend",
                              "ray", "--address", cluster.address, "-q"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    with Store.open(tmp_path / "ray.sqlite") as store:
        played = store.games(store.find_league("course-ray").id)
    assert len(played) == 2 and all(not g.failures and g.terminations == ["normal", "normal"] for g in played)
