"""Every game through the sandboxed referee, end to end: Hex, Colosseum and Sorry! with 3 and 4 players
through ``arena match`` (then ``arena replay --match`` re-plays each game against its chance key) and
through a league (stored games replayed with ``--verify``, every bot rated). Small, fast sizes: random,
a bot file (untrusted code in the sandbox) and cheap searchers."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from arena.sandbox import check
from leaderboards.store import Store
from tests.leaderboards.support import RANDOM_BOT, arena, write

pytestmark = pytest.mark.xdist_group("sandbox")

if check.missing_mandatory():
    pytest.skip(f"mandatory sandbox layers missing on this machine: {check.missing_mandatory()}",
                allow_module_level=True)

FAST = ["--move-time", "1", "--first-move-time", "20"]


def valid_returns(game: str, returns: list[float]) -> bool:
    """The returns a finished game of ``game`` can have."""
    if game.startswith("sorry"):
        k = len(returns)
        return sorted(returns) == sorted([1.0] + [-1 / (k - 1)] * (k - 1)) or returns == [0.0] * k
    if game.startswith("colosseum"):  # a win, or a draw by the rules (equal territories)
        return sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])
    return sorted(returns) == [-1.0, 1.0]  # Hex has no draws


@pytest.mark.parametrize("game, bots", [
    ("hex(size=5)", ["FILE", "uct(iterations=30)"]),
    ("colosseum(size=6)", ["FILE", "mc(n=3)"]),
    ("sorry(players=3)", ["FILE", "random", "uct(iterations=20)"]),
    ("sorry(players=4)", ["FILE", "random", "mc(n=2)", "uct(iterations=20)"]),
])
@pytest.mark.slow
def test_arena_match_plays_every_seat_and_replays(tmp_path: Path, game: str, bots: list[str]) -> None:
    bot_file = write(tmp_path / "file_bot.py", RANDOM_BOT)
    argv = [str(bot_file) if b == "FILE" else b for b in bots]
    k = len(bots)
    p = arena(tmp_path, "match", game, *argv, "--games", str(k), "--seed", "3", "--json", *FAST, timeout=600)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["game"] == game and len(data["games"]) == k
    seats_of = Counter()
    for g in data["games"]:
        assert g["terminations"] == ["normal"] * k, g.get("failures")
        assert valid_returns(game, g["returns"]), g["returns"]
        assert len(g["history"]) > k  # a real game, not an instant forfeit
        for seat, bot in enumerate(g["seats"]):
            seats_of[(bot, seat)] += 1
    assert all(seats_of[(b, s)] == 1 for b in range(k) for s in range(k)), seats_of  # every bot every seat
    assert "seccomp" in data["sandbox"]  # really sandboxed
    out = tmp_path / "match.json"
    out.write_text(p.stdout)
    replay = arena(tmp_path, "replay", "--match", str(out), timeout=300)
    assert replay.returncode == 0, replay.stdout + replay.stderr


def spec_of(stored: str) -> str:
    """The league's game spec of a stored game: Colosseum's stored spec carries its board's seed."""
    return re.sub(r",seed=\d+", "", stored)


def league_file(name: str, games: list[str], per_pairing: int, bots: list[str]) -> str:
    """A small league: built-in specs and "FILE" (the random bot file my_bot.py)."""
    lines = [f'name = "{name}"', f"games = {json.dumps(games)}", f"games_per_pairing = {per_pairing}", "seed = 5",
             f'database = "{name}.sqlite"', "[limits]", "move_time = 1.0", "first_move_time = 20.0"]
    for bot in bots:
        lines += ["[[bots]]", 'name = "file-random"\nfile = "my_bot.py"' if bot == "FILE" else f'spec = "{bot}"']
    return "\n".join(lines) + "\n"


# (league name, games, games_per_pairing (a multiple of the seats), bots, games stored per spec)
LEAGUES = [
    ("two", ["hex(size=5)", "colosseum(size=6)"], 2, ["random", "mc(n=2)", "FILE"],
     {"hex(size=5)": 6, "colosseum(size=6)": 6}),                 # 3 pairs x 2 rotations each
    ("three", ["sorry(players=3)"], 3, ["random", "mc(n=2)", "FILE"], {"sorry(players=3)": 3}),  # 1 table
    ("four", ["sorry(players=4)"], 4, ["random", "mc(n=2)", "uct(iterations=20)", "FILE"],
     {"sorry(players=4)": 4}),                                    # 1 table x 4 rotations
]


@pytest.mark.parametrize("name, games, per_pairing, bots, expected", LEAGUES, ids=[lg[0] for lg in LEAGUES])
@pytest.mark.slow
def test_a_league_of_every_game_is_played_rated_and_replayable(tmp_path: Path, name: str, games: list[str],
                                                              per_pairing: int, bots: list[str],
                                                              expected: dict[str, int]) -> None:
    write(tmp_path / "my_bot.py", RANDOM_BOT)
    config = write(tmp_path / "league.toml", league_file(name, games, per_pairing, bots))
    run = arena(tmp_path, "league", "run", str(config), "--concurrency", "2", timeout=900)
    assert run.returncode == 0, run.stderr
    db = tmp_path / f"{name}.sqlite"
    with Store.open(db, readonly=True) as store:
        lg = store.find_league(name)
        stored = store.games(lg.id)
        assert Counter(spec_of(g.game) for g in stored) == expected
        seats = Counter()
        for g in stored:
            k = len(g.returns)
            assert g.terminations == ["normal"] * k, g
            assert valid_returns(g.game, g.returns), (g.game, g.returns)
            assert len(g.history) > k
            seats.update((spec_of(g.game), bot, seat) for seat, bot in enumerate(g.seats))
        ratings = store.ratings(lg.id)
        players = {spec: (int(spec.split("=")[1][0]) if spec.startswith("sorry") else 2) for spec in expected}
        assert sum(r.games for r in ratings.values()) == sum(n * players[s] for s, n in expected.items())
        assert len(ratings) == len(bots) and all(r.sigma < 25 / 3 for r in ratings.values())  # all rated
        ids = [g.id for g in stored[:2]] + [g.id for g in stored[-1:]]
    # every bot sat in every seat of every game equally often
    for spec, k in players.items():
        counts = [seats[(spec, b, s)] for b in {key[1] for key in seats if key[0] == spec} for s in range(k)]
        assert len(set(counts)) == 1, (spec, seats)
    for game_id in ids:  # stored games re-simulate to the same end (chance re-drawn from the league's key)
        v = arena(tmp_path, "replay", str(game_id), "--db", db.name, "--verify", "--no-board", timeout=300)
        assert v.returncode == 0, v.stdout + v.stderr
    board = arena(tmp_path, "leaderboard", "--db", db.name, "--json")
    assert board.returncode == 0, board.stderr
    assert len(json.loads(board.stdout)["bots"]) == len(bots)
