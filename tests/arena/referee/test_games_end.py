"""Every game ends, whatever two colluding bots do (issue 31 §1).

Each game states a finite bound (``max_game_length()``, ``length_rule``); a pair of bots that never wins (each picks a
move after which the game goes on, when there is one: Double Step's pass at distance 1, Sorry!'s moves that undo
progress) is ended by the referee as a draw at that bound, in a real sandboxed game; a game also ends as a draw at
``max_game_seconds``; and a league with such a pair finishes."""
from __future__ import annotations

import json
import time

import pytest

import games
from arena.limits import MAX_DECISIONS, Limits
from arena.referee.sandboxed import play_game
from arena.sandbox import check
from leaderboards.store import Store
from tests.leaderboards.support import arena, write
from tests.league_files import league_toml

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(bool(check.missing_mandatory()),
                                 reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}")]
STALLER = '''"""Never ends the game when it can help it: a move after which the game goes on (the highest)."""


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        legal = sorted(state.legal_actions(), reverse=True)
        for action in legal:
            child = state.clone()
            child.apply_action(action)
            if not child.is_terminal():
                return action
        return legal[0]
'''
# Every built-in game, its longest settings where the rules allow a loop (Double Step passes, four Sorry! players).
SPECS = ["doublestep", "doublestep(length=3,overshoot=forbid)", "nim(n=30)", "nim(n=30,coin=true)",
         "hex(size=5,pie=true)", "colosseum(size=6,seed=2)", "sorry(players=2)", "sorry(players=4)"]
LIMITS = Limits(move_time=2.0, first_move_time=20.0)


def test_every_built_in_game_states_a_finite_bound_and_a_rule():
    for name in games.game_names():
        cls = games.game_class(name)
        if not cls.__module__.startswith("games."):
            continue  # a game installed from elsewhere (tests/games/test_outside_game.py installs the example)
        assert cls.length_rule and cls.length_rule != games.base.Game.length_rule, name
        for spec in [s for s in SPECS if s.split("(")[0] == name] or [name]:
            bound = games.load(spec).max_game_length()
            assert 0 < bound < 2**31 - 1, (spec, bound)
    assert games.load("doublestep(length=100000)").max_game_length() > MAX_DECISIONS  # capped by the referee


@pytest.mark.parametrize("spec", SPECS)
def test_two_colluding_bots_cannot_keep_a_game_from_ending(tmp_path, spec):
    game = games.load(spec)
    bot = write(tmp_path / "staller.py", STALLER)
    record = play_game(game, [str(bot)] * game.num_players(), seed=3, limits=LIMITS)
    decisions = len(record.move_seats)
    assert record.terminations == ["normal"] * game.num_players(), record.failures
    assert decisions <= game.max_game_length(), (decisions, game.max_game_length())
    if "adjudicated" in record.info:  # the bound reached: a draw, said so
        assert decisions == game.max_game_length() and record.returns == [0.0] * game.num_players()
        assert record.info["adjudicated"] == f"draw after {game.max_game_length()} moves"
    if spec == "doublestep":  # the pass loop: only the bound ends it
        assert record.info.get("adjudicated") == "draw after 80 moves", record.info


def test_a_game_ends_as_a_draw_at_its_wall_clock_bound(tmp_path):
    bot = write(tmp_path / "staller.py", STALLER)
    t0 = time.monotonic()
    record = play_game("doublestep", [str(bot), str(bot)], seed=1,
                       limits=LIMITS.with_(max_moves=MAX_DECISIONS, max_game_seconds=1.0))
    assert record.info["adjudicated"] == "draw after 1 s", record.info
    assert record.returns == [0.0, 0.0] and len(record.move_seats) > 80
    assert time.monotonic() - t0 < 20


def test_the_leagues_max_moves_bounds_a_game(tmp_path):
    bot = write(tmp_path / "staller.py", STALLER)
    record = play_game("doublestep", [str(bot), str(bot)], seed=1, limits=LIMITS.with_(max_moves=30))
    assert record.info["adjudicated"] == "draw after 30 moves" and len(record.move_seats) == 30


@pytest.mark.slow
def test_a_league_with_a_stalling_pair_finishes(tmp_path):
    write(tmp_path / "staller.py", STALLER)
    write(tmp_path / "staller2.py", STALLER)
    config = write(tmp_path / "league.toml", league_toml(
        "stall", seed=5, database="stall.sqlite", games=["doublestep"], games_per_pairing=2,
        bots=[{"name": "staller", "file": "staller.py"}, {"name": "staller2", "file": "staller2.py"},
              {"spec": "random"}]))
    done = arena(tmp_path, "league", "run", str(config), "--concurrency", "2", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    with Store.open(tmp_path / "stall.sqlite") as store:
        lg = store.find_league("stall")
        stored = store.games(lg.id)
        assert len(stored) == 6, len(stored)
        between = [g for g in stored if set(g.players) == {"staller", "staller2"}]
        assert len(between) == 2 and all(g.returns == [0.0, 0.0] for g in between)
        # a stored game stays small: the pair's games hold 80 moves, not thousands
        assert all(len(g.move_seats) <= 80 for g in stored)
        assert max(len(json.dumps(g.history)) for g in stored) < 2000
