"""Gauntlet leagues (``format = "gauntlet"``) and openings (``openings = { plies = N }`` or ``{ file = ... }``):
schedules, league files, real league runs, records and ``arena replay --verify`` (issue 17 §3-4)."""
from __future__ import annotations

import itertools
import json
import math
import sqlite3
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.league.config import parse_config
from arena.league.schedule import league_schedule
from arena.referee.openings import OpeningBook, random_opening
from leaderboards.store import Store
from tests.leaderboards.support import arena, write


def test_a_gauntlet_plays_only_tables_with_a_challenger() -> None:
    bots, challengers = list(range(1, 9)), [3, 7]
    fixtures = league_schedule([("nim", 2)], {"nim": bots}, 4, 1, challengers=challengers)
    tables = {f.table for f in fixtures}
    assert all(set(t) & set(challengers) for t in tables)  # the field never plays itself
    assert {frozenset(t) for t in tables} == {frozenset(p) for p in itertools.combinations(bots, 2)
                                              if set(p) & set(challengers)}  # each challenger meets everyone
    assert len(fixtures) == 4 * (math.comb(8, 2) - math.comb(6, 2))
    full = {f.key for f in league_schedule([("nim", 2)], {"nim": bots}, 4, 1)}
    assert {f.key for f in fixtures} <= full  # the same keys as the round robin's fixtures


def test_a_four_player_gauntlet_keeps_tables_with_a_challenger() -> None:
    fixtures = league_schedule([("sorry(players=4)", 4)], {"sorry(players=4)": list(range(6))}, 4, 2, mode="all",
                               challengers=[0])
    assert fixtures and all(0 in f.table for f in fixtures) and len({f.table for f in fixtures}) == math.comb(5, 3)


BASE = {"name": "g", "games": ["nim"], "bots": ["random", "greedy", "mc(n=5)"]}


@pytest.mark.parametrize("extra, words", [
    ({"format": "gauntlet"}, 'needs challengers = ["bot name", ...]'),
    ({"format": "gauntlet", "challengers": ["nobody"]}, "'nobody' is not a bot of this league"),
    ({"challengers": ["greedy"]}, 'only for format = "gauntlet"'),
    ({"format": "pyramid"}, 'format = "pyramid" is not allowed'),
    ({"openings": {"plies": 2, "file": "x.txt"}}, "exactly one of plies"),
    ({"openings": {"plies": 0}}, "openings.plies = 0 is not allowed"),
    ({"openings": {"file": "missing.txt"}}, "not found"),
    ({"stop": {"top": 3}}, 'stop is only for schedule = "adaptive"'),
    ({"schedule": "adaptive", "format": "gauntlet", "challengers": ["greedy"]}, "a gauntlet plays its fixed"),
])
def test_bad_ranking_keys_are_one_clear_line(tmp_path: Path, extra: dict, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({**BASE, **extra}, base=tmp_path, where="league.toml")
    assert words in str(err.value) and "\n" not in str(err.value)


def test_an_openings_file_is_checked_line_by_line(tmp_path: Path) -> None:
    write(tmp_path / "book.txt", "# hex 5x5 cells\n0 1\n12, 7\n\n3 99\n")
    with pytest.raises(ConfigError, match="opening 3: action 99 is not a legal move"):
        parse_config({**BASE, "games": ["hex(size=5)"], "bots": ["random", "uct"], "openings": {"file": "book.txt"}},
                     base=tmp_path)
    write(tmp_path / "book.txt", "0 1\n12, 7\n")
    config = parse_config({**BASE, "games": ["hex(size=5)"], "bots": ["random", "uct"],
                           "openings": {"file": "book.txt"}}, base=tmp_path)
    assert config.openings is not None and config.openings.lines == ((0, 1), (12, 7))
    assert [config.openings.opening("hex(size=5)", 99, r) for r in range(3)] == [(0, 1), (12, 7), (0, 1)]


def test_random_openings_are_seeded_legal_and_varied() -> None:
    book = OpeningBook(plies=4)
    first = book.opening("hex(size=5)", 123, 0)
    assert len(first) == 4 and first == book.opening("hex(size=5)", 123, 5)  # the seed decides, not the seat
    assert len({random_opening("hex(size=5)", 4, s) for s in range(20)}) > 15


LEAGUE = """
name = "openers"
games = ["hex(size=4)"]
games_per_pairing = 6
seed = 5
database = "o.sqlite"
openings = {{ plies = 3 }}
format = "gauntlet"
challengers = ["uct(iterations=30)"]
bots = ["uct(iterations=30)", "mc(n=3)", "random"]
[limits]
move_time = 2.0
first_move_time = 20.0
"""


@pytest.mark.slow
def test_a_gauntlet_with_openings_records_them_and_replays(tmp_path: Path) -> None:
    config = write(tmp_path / "league.toml", LEAGUE.format())
    done = arena(tmp_path, "league", "run", str(config), "--concurrency", "2")
    assert done.returncode == 0, done.stderr
    with Store.open(tmp_path / "o.sqlite", readonly=True) as store:
        league = store.find_league("openers")
        names = {b.id: b.name for b in store.bots(league.id)}
        games = store.games(league.id)
    assert len(games) == 2 * 6  # two tables with the challenger, six games each; random never meets mc
    by_round: dict[tuple[int, tuple[int, ...]], list] = {}
    for g in games:
        assert "uct(iterations=30)" in {names[b] for b in g.seats}
        opening = g.info["opening"]
        assert len(opening) == 3 and g.history[:3] == opening
        assert g.move_seats[0] == 3 % 2  # the first decision is the seat to move after the opening
        by_round.setdefault((g.round, tuple(sorted(g.seats))), []).append(g)
    for pair in by_round.values():  # both seat orders of a round start from the same opening
        assert len(pair) == 2 and pair[0].info["opening"] == pair[1].info["opening"]
    assert len({tuple(g.info["opening"]) for g in games}) > 1  # rounds differ
    for g in games[:4]:
        check = arena(tmp_path, "replay", str(g.id), "--db", "o.sqlite", "--verify")
        assert check.returncode == 0, check.stdout + check.stderr
    # a record whose opening was rewritten no longer verifies
    tampered = games[0]
    with sqlite3.connect(tmp_path / "o.sqlite") as conn:
        info = dict(tampered.info, opening=[tampered.history[1], tampered.history[0], tampered.history[2]])
        conn.execute("UPDATE games SET info=? WHERE id=?", (json.dumps(info), tampered.id))
    check = arena(tmp_path, "replay", str(tampered.id), "--db", "o.sqlite", "--verify")
    assert check.returncode != 0 and "opening" in (check.stdout + check.stderr)


# -- arena match --openings (the league key's semantics on the command line) -------------------------------------------
MATCH = ["match", "hex(size=4)", "uct(iterations=30)", "mc(n=3)", "--move-time", "2", "--first-move-time", "20"]


def match_json(tmp_path: Path, *extra: str) -> dict:
    done = arena(tmp_path, *MATCH, "--json", "-q", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_match_random_openings_are_played_from_both_seats_recorded_and_replayed(tmp_path: Path) -> None:
    data = match_json(tmp_path, "--games", "4", "--seed", "11", "--openings", "plies=3")
    assert data["openings"] == {"plies": 3}
    games = data["games"]
    for g in games:
        assert len(g["opening"]) == 3 and g["history"][:3] == g["opening"]
        assert g["opening"] == list(random_opening("hex(size=4)", 3, g["seed"]))  # the league's rule: by seed
    for first, second in (games[0:2], games[2:4]):  # each opening once in each seat order
        assert first["seed"] == second["seed"] and first["opening"] == second["opening"]
        assert first["seats"] == second["seats"][::-1]
    assert games[0]["opening"] != games[2]["opening"]
    record = write(tmp_path / "match.json", json.dumps(data))
    check = arena(tmp_path, "replay", "--match", str(record))
    assert check.returncode == 0 and "4 games verified" in check.stdout, check.stdout + check.stderr
    games[1]["opening"] = games[1]["opening"][::-1]  # a record whose opening was rewritten no longer verifies
    tampered = write(tmp_path / "tampered.json", json.dumps(data))
    check = arena(tmp_path, "replay", "--match", str(tampered))
    assert check.returncode != 0 and "opening" in check.stdout + check.stderr


def test_match_openings_from_a_file_take_one_line_per_round(tmp_path: Path) -> None:
    write(tmp_path / "book.txt", "# two 4x4 hex openings\n0 5\n15, 10, 1\n")
    data = match_json(tmp_path, "--games", "6", "--openings", "file=book.txt")
    assert data["openings"] == {"file": "book.txt", "lines": 2}
    assert [g["opening"] for g in data["games"]] == [[0, 5], [0, 5], [15, 10, 1], [15, 10, 1], [0, 5], [0, 5]]
    assert all(g["history"][:len(g["opening"])] == g["opening"] for g in data["games"])


def test_match_without_openings_records_none(tmp_path: Path) -> None:
    data = match_json(tmp_path, "--games", "2")
    assert "openings" not in data and all("opening" not in g for g in data["games"])


@pytest.mark.parametrize("value, words", [
    ("plies=0", "--openings: plies = 0 is not allowed: an integer, 1 <= x <= 200"),
    ("plies=four", '--openings: plies = "four" is not allowed: an integer'),
    ("depth=3", "--openings: unknown key 'depth'; valid keys: plies, file"),
    ("plies=2,file=book.txt", "exactly one of plies"),
    ("4", "--openings: '4' is not KEY=VALUE"),
    ("file=missing.txt", "openings file missing.txt not found"),
    ("file=bad.txt", "opening 1: action 99 is not a legal move of hex(size=4)"),
])
def test_match_bad_openings_are_one_clear_line_and_exit_2(tmp_path: Path, value: str, words: str) -> None:
    write(tmp_path / "book.txt", "0 5\n")
    write(tmp_path / "bad.txt", "0 99\n")
    done = arena(tmp_path, *MATCH, "--games", "2", "--openings", value)
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""
