"""A seeded league, its replays and a small experiment give exactly the output they gave before issue 15's
refactor (results, store, time and layers redesigned without changing behaviour).

The golden file ``golden/issue15.json`` was written by the code *before* that refactor (see ``produced_by`` in
it) with ``ARENA_WRITE_GOLDEN=1``. What varies from run to run is left out: wall and CPU times, durations,
temporary paths and the run's own timings; everything a seeded league decides (who played whom with which
seed, every action and chance draw, returns, terminations, failures, ratings, the leaderboard) is compared.
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from leaderboards.store import Store
from tests.leaderboards.support import RAISING_BOT, RANDOM_BOT, arena, write

GOLDEN = Path(__file__).parents[1] / "golden" / "issue15.json"
KEY = bytes(range(32))  # a fixed chance key: with the seed, it fixes every chance draw and bot seed
# (probation is off: which games a failing bot still plays would depend on the order two workers finish them)

ILLEGAL_BOT = """
class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        return 10 ** 6
"""

LEAGUE = """
name = "golden"
games = ["nim", "sorry(players=2)"]
games_per_pairing = 2
seed = 1234
database = "golden.sqlite"
probation_after = 0
probation_failures = 0
[limits]
move_time = 5.0
first_move_time = 30.0
[[bots]]
spec = "random"
[[bots]]
spec = "mc(n=4)"
[[bots]]
spec = "greedy"
games = ["nim"]
[[bots]]
name = "file-random"
file = "my_bot.py"
[[bots]]
name = "illegal"
file = "illegal.py"
games = ["nim"]
[[bots]]
name = "raising"
file = "raising.py"
games = ["nim"]
"""

_ID = re.compile(r"^game \d+", re.M)
_DETAIL = re.compile(r"(failed: \w+ at move \d+): .*")  # a failure's wording (others may reword it): not compared
_MS = re.compile(r"\s*\[\d+(\.\d+)? ms\]")
_VARYING_INFO = {"bot_uids", "run_delays", "deadline_extensions", "sandbox", "host", "pid", "worker"}  # machine, load


def _record(game: Any) -> dict[str, Any]:
    """What a seeded league decides about one stored game (no clocks)."""
    info = {k: v for k, v in sorted(game.info.items()) if k not in _VARYING_INFO and "time" not in k}
    return {"key": game.schedule_key, "game": game.game, "seed": game.seed, "round": game.round,
            "players": list(game.players), "history": list(game.history), "returns": list(game.returns),
            "terminations": list(game.terminations), "move_seats": list(game.move_seats),
            "failures": [_failure(f) for f in game.failures],
            "info": info}


def _failure(f: Any) -> dict[str, Any]:
    f = f if isinstance(f, dict) else vars(f)  # stored failures: dicts or typed values, the same fields
    # the detail's wording is a message, not a decision (and other work may reword it): its presence is kept
    return {"seat": f["seat"], "reason": str(f["reason"]), "move_number": f["move_number"],
            "substituted": f.get("substituted"), "detail": bool(f.get("detail"))}


def _ok(result: Any) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def capture(d: Path) -> dict[str, Any]:
    """Plays the golden league in ``d`` and returns everything compared."""
    write(d / "my_bot.py", RANDOM_BOT)
    write(d / "illegal.py", ILLEGAL_BOT)
    write(d / "raising.py", RAISING_BOT)
    config = write(d / "league.toml", LEAGUE)
    with Store.open(d / "golden.sqlite", create=True) as store:
        store.ensure_league("golden", {"seed": 1234})
    with sqlite3.connect(d / "golden.sqlite") as conn:  # the test's fixed key in place of the store's fresh one
        conn.execute("UPDATE leagues SET chance_key=? WHERE name='golden'", (KEY,))
    _ok(arena(d, "league", "run", str(config), "--concurrency", "2", "-q"))
    out: dict[str, Any] = {}
    with Store.open(d / "golden.sqlite", readonly=True) as store:
        league = store.find_league("golden")
        games = store.games(league.id)
        out["games"] = [_record(g) for g in games]
    board = json.loads(_ok(arena(d, "leaderboard", "--db", "golden.sqlite", "--json", "--h2h")))
    out["leaderboard"] = board
    sorry = [g.id for g in games if g.game.startswith("sorry")]
    failed = [g.id for g in games if g.failures]
    assert sorry and failed, "the league should hold a game with chance and one with a failure"
    chosen = {g.schedule_key: g.id for g in games if g.id in (games[0].id, sorry[0], failed[0], failed[-1])}
    # ids follow the order games finished in (two at once): keyed by schedule key, the id left out of the text
    out["replays"] = {key: _DETAIL.sub(r"\1", _ID.sub("game #", _MS.sub("", _ok(arena(d, "replay", str(i), "--db",
                                                                                         "golden.sqlite")))))
                      for key, i in chosen.items()}
    out["verify"] = {key: _ID.sub("game #", _ok(arena(d, "replay", str(i), "--db", "golden.sqlite", "--verify")))
                     for key, i in chosen.items()}
    _ok(arena(d, "experiment", "run", "nim-mcts", "--games", "3", "--set", "iterations=40", "--seed", "5",
              "--workers", "1", "--out", "out", "--no-plot"))
    results = json.loads((d / "out" / "nim-mcts" / "results.json").read_text())
    results.pop("seconds", None)
    out["experiment"] = results
    return out


@pytest.mark.xdist_group("golden")
@pytest.mark.slow
def test_a_seeded_league_replay_and_experiment_match_the_golden_output(tmp_path: Path) -> None:
    got = capture(tmp_path)
    if os.environ.get("ARENA_WRITE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps({"produced_by": os.environ["ARENA_WRITE_GOLDEN"], **got}, indent=1,
                                     sort_keys=True) + "\n")
    want = json.loads(GOLDEN.read_text())
    want.pop("produced_by", None)
    got = json.loads(json.dumps(got))  # the same JSON round trip as the file (tuples become lists)
    assert_extends(got["games"], want["games"], "games")  # issue 31 added limits.max_moves and max_game_seconds
    assert_extends(got["leaderboard"], want["leaderboard"])  # issue 17 added the batch Elo columns
    assert got["replays"] == want["replays"]
    assert got["verify"] == want["verify"]
    assert_extends(got["experiment"], want["experiment"])


def assert_extends(got: Any, want: Any, where: str = "") -> None:
    """``got`` equals ``want`` except for keys ``want`` does not have (an output may be extended, never changed:
    docs/contracts.md)."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: {got!r} is not an object"
        for key, value in want.items():
            assert key in got, f"{where}.{key} is gone"
            assert_extends(got[key], value, f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_extends(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"
