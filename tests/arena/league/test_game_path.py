"""The game path does not double back (issue 24, section 3): a task carries typed limits, a move's allowance is
computed once (by the referee) and used as given, and a finished game's record is decoded once on its way to the
store."""
from __future__ import annotations

import os
import pickle
import tomllib
from pathlib import Path

import pytest

from arena.league import planning
from arena.league.config import parse_config
from arena.limits import Limits
from arena.referee.sandboxed import describe_bot, play_game
from arena.sandbox import check
from bots.base import Limit
from leaderboards.store import Store

needs_layers = pytest.mark.skipif(bool(check.missing_mandatory()),
                                  reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}")

LEAGUE = """
name = "path"
games = ["nim"]
games_per_pairing = 2
[[bots]]
name = "a"
spec = "random"
[[bots]]
name = "b"
spec = "greedy"
[limits]
move_time = 1.5
first_move_time = 9.0
"""


def test_a_task_carries_typed_limits_and_its_wire_form_round_trips(tmp_path: Path) -> None:
    config = parse_config(tomllib.loads(LEAGUE), base=tmp_path)
    limits = planning.task_limits(config)
    assert all(type(v) is Limits for v in limits.values())
    assert limits[False] == config.limits.with_(trusted=False) and limits[True].trusted
    with Store.open(tmp_path / "s.sqlite", create=True) as store:
        league = store.ensure_league(config.name, config.to_dict())
        planning.sync_bots(store, league.id, config)
        bots = {b.id: b for b in store.bots(league.id)}
        fixture = planning.plan(store, league.id, config)[0]
    task = planning.make_task(fixture, bots, config, limits=limits)
    assert type(task.limits) is Limits and task.limits.move_time == 1.5 and task.limits.first_move_time == 9.0
    # the process edge (a worker's pipe frame, a Ray task) pickles the task: the same typed limits come back
    back = pickle.loads(pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == task and type(back.limits) is Limits and back.limits == task.limits


def _echo_bot(tmp_path: Path) -> str:
    """A bot that answers only when the limit it is given is the one the test chose (else it raises)."""
    d = tmp_path / "echo"
    d.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(d, 0o755)
    (d / "echo.py").write_text(
        "class Bot:\n"
        "    def __init__(self, game, seat, seed):\n"
        "        pass\n"
        "    def step(self, state, limit):\n"
        "        if (limit.time, limit.think, limit.first_move) != (4.25, 0.125, True):\n"
        "            raise RuntimeError(f'limit {limit.time} {limit.think} {limit.first_move}')\n"
        "        return state.legal_actions()[0]\n")
    return str(d / "echo.py")


@needs_layers
def test_the_sandboxed_bot_gets_the_allowance_it_is_given(tmp_path: Path) -> None:
    """BotProcess.step sends and times the limit it is handed, not one it computes again from the Limits."""
    import games
    from arena.sandbox.launcher import Sandbox
    from arena.sandbox.proxy import BotProcess
    limits = Limits(move_time=2.0, first_move_time=3.0, memory_mb=200)
    game = games.load("nim")
    proxy = BotProcess(describe_bot(_echo_bot(tmp_path), game, 1 << 20), game, 0, 1, limits,
                       sandbox=Sandbox(limits, game))
    try:
        given = Limit(time=4.25, memory_mb=200, first_move=True, think=0.125)
        assert proxy.step(game.new_initial_state(), given) in game.new_initial_state().legal_actions()
    finally:
        proxy.close()


@needs_layers
def test_the_referees_allowance_is_what_the_bot_gets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Change the one computation (Limits.allowance) and the bot's limit follows."""
    def allowance(self: Limits, move_number: int) -> Limit:
        return Limit(time=4.25, memory_mb=self.memory_mb, first_move=True, think=0.125)

    monkeypatch.setattr(Limits, "allowance", allowance)
    record = play_game("nim", [_echo_bot(tmp_path), "random"], 1, Limits(move_time=2.0, first_move_time=3.0,
                                                                          memory_mb=200))
    assert record.terminations == ["normal", "normal"], record.failures
