"""Tournaments end to end (docs/tournaments.md): `arena league run` plays a knockout, a double elimination and a
Swiss with real sandboxed games, `arena bracket` and `arena leaderboard` show them, a run killed mid-round (SIGKILL
and Ctrl-C) resumes with nothing lost or doubled, and the same field, file and seed give the same tournament."""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from leaderboards.store import Store
from tests.leaderboards.support import arena, write
from tests.league_files import league_toml

FIVE = [{"name": "r1", "spec": "random"}, {"name": "greedy", "spec": "greedy"}, {"name": "mc", "spec": "mc(n=10)"},
        {"name": "r2", "spec": "random"}, {"name": "r3", "spec": "random"}]


def tournament(tmp_path: Path, fmt: str, bots: list[dict[str, Any]] = FIVE, name: str = "t",
               database: str = "t.sqlite", **keys: Any) -> Path:
    return write(tmp_path / f"{name}.toml", league_toml(name, seed=11, database=database, bots=bots, format=fmt,
                                                         **keys))


def bracket(tmp_path: Path, league: str = "t.toml") -> dict[str, Any]:
    p = arena(tmp_path, "bracket", "--league", league, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def stored(tmp_path: Path, database: str = "t.sqlite") -> tuple[int, int]:
    with Store.open(tmp_path / database, readonly=True) as store:
        return tuple(store.conn.execute("SELECT count(*), count(DISTINCT schedule_key) FROM games").fetchone())


def shape(data: dict[str, Any]) -> list[Any]:
    """The bracket without the store's game ids (ids follow the order games happened to finish in)."""
    return [[(m["label"], m["bots"], m["score"], m["winner"]) for m in r] for r in data["rounds"]] + \
        [data["placings"]]


@pytest.mark.slow
def test_a_knockout_of_five(tmp_path: Path) -> None:
    tournament(tmp_path, "knockout")
    p = arena(tmp_path, "league", "run", "t.toml", "-q")
    assert p.returncode == 0, p.stderr
    data = bracket(tmp_path)
    assert data["format"] == "knockout" and data["finished"]
    first = data["rounds"][0]
    assert sorted(m["bots"][0] for m in first if len(m["bots"]) == 1) == ["greedy", "mc", "r1"]  # top 3 seeds
    assert [len(r) for r in data["rounds"]] == [4, 2, 1]
    final = data["rounds"][-1][0]
    assert data["placings"][0] == [final["winner"]] and len(data["placings"][1]) == 1
    assert sorted(b for group in data["placings"] for b in group) == sorted(b["name"] for b in FIVE)
    for r in data["rounds"]:
        for m in r:
            if len(m["bots"]) == 2:
                assert len(m["games"]) >= 2 and m["score"][0] != m["score"][1]  # decided: ties were broken
                assert m["winner"] == m["bots"][0 if m["score"][0] > m["score"][1] else 1]
    games, keys = stored(tmp_path)
    assert games == keys == sum(len(m["games"]) for r in data["rounds"] for m in r)
    board = arena(tmp_path, "leaderboard", "--league", "t.toml")
    assert board.returncode == 0 and "knockout, places" in board.stdout
    places = json.loads(arena(tmp_path, "leaderboard", "--league", "t.toml", "--json").stdout)["tournament"]
    assert places["finished"] and places["places"][0]["place"] == 1
    assert places["places"][0]["bot"] == final["winner"] and places["places"][0]["lost"] == 0


@pytest.mark.slow
def test_a_double_elimination_and_a_swiss(tmp_path: Path) -> None:
    tournament(tmp_path, "double_elimination", games_per_pairing=1)
    assert arena(tmp_path, "league", "run", "t.toml", "-q").returncode == 0
    data = bracket(tmp_path)
    assert data["finished"] and data["rounds"][-1][0]["label"] in ("GF", "GF2")
    assert sorted(b for group in data["placings"] for b in group) == sorted(b["name"] for b in FIVE)

    tournament(tmp_path, "swiss", name="s", database="s.sqlite", games_per_pairing=1)
    assert arena(tmp_path, "league", "run", "s.toml", "-q").returncode == 0
    data = bracket(tmp_path, "s.toml")
    assert data["finished"] and len(data["rounds"]) == 4  # ceil(log2 5) + 1
    pairs = [tuple(sorted(m["bots"])) for r in data["rounds"] for m in r if len(m["bots"]) == 2]
    assert len(pairs) == len(set(pairs))  # no rematch
    byes = [m["bots"][0] for r in data["rounds"] for m in r if len(m["bots"]) == 1]
    assert len(byes) == 4 and len(set(byes)) == 4  # one a round, never twice
    points = {s["bot"]: s["points"] for s in data["standings"]}
    assert sum(points.values()) == 4 * 2 + 4  # two matches a round, each worth 1, and a bye
    text = arena(tmp_path, "bracket", "--league", "s.toml").stdout
    assert "standings" in text and "buchholz" in text


@pytest.mark.slow
def test_the_same_field_file_and_seed_give_the_same_tournament(tmp_path: Path) -> None:
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        tournament(tmp_path / d, "double_elimination", games_per_pairing=1)
    with Store.open(tmp_path / "a" / "t.sqlite", create=True) as store:  # one league secret for both runs: it keys
        store.ensure_league("t", {"seed": 11})  # the games' seeds (a new store draws its own)
    shutil.copy(tmp_path / "a" / "t.sqlite", tmp_path / "b" / "t.sqlite")
    assert arena(tmp_path / "a", "league", "run", "t.toml", "-q", "-j", "1").returncode == 0
    assert arena(tmp_path / "b", "league", "run", "t.toml", "-q", "-j", "2").returncode == 0
    assert shape(bracket(tmp_path / "a")) == shape(bracket(tmp_path / "b"))


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT])
@pytest.mark.slow
def test_a_tournament_stopped_mid_round_resumes_with_nothing_lost_or_doubled(tmp_path: Path,
                                                                              stop: signal.Signals) -> None:
    bots = [{"name": f"mc{i}", "spec": f"mc(n={20 + i})"} for i in range(6)]
    for d in ("stopped", "clean"):
        (tmp_path / d).mkdir()
        tournament(tmp_path / d, "swiss", bots=bots, games_per_pairing=2, rounds=3)
    with Store.open(tmp_path / "stopped" / "t.sqlite", create=True) as store:
        store.ensure_league("t", {"seed": 11})
    shutil.copy(tmp_path / "stopped" / "t.sqlite", tmp_path / "clean" / "t.sqlite")
    assert arena(tmp_path / "clean", "league", "run", "t.toml", "-q").returncode == 0
    where = tmp_path / "stopped"
    stops = 0
    for target in (3, 8):  # mid round 1 (6 games), then mid round 2
        proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "league", "run", "t.toml", "-q", "-j", "2"],
                                cwd=where, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline and _count(where / "t.sqlite") < target:
            time.sleep(0.01)
        if proc.poll() is None:
            proc.send_signal(stop)
            stops += 1
        proc.wait(timeout=60)
    assert stops, "the run finished before it could be stopped"
    assert arena(where, "league", "run", "t.toml", "-q").returncode == 0
    games, keys = stored(where)
    data = bracket(where)
    assert data["finished"] and games == keys == sum(len(m["games"]) for r in data["rounds"] for m in r) == 18
    assert shape(data) == shape(bracket(tmp_path / "clean"))


def _count(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with Store.open(path, readonly=True) as store:
            return int(store.conn.execute("SELECT count(*) FROM games").fetchone()[0])
    except Exception:  # noqa: BLE001 - the writer is still creating the schema
        return 0


@pytest.mark.slow
def test_seeding_from_another_leagues_ratings(tmp_path: Path) -> None:
    write(tmp_path / "ladder.toml", league_toml("ladder", seed=3, database="t.sqlite", bots=FIVE,
                                                 games_per_pairing=4))
    assert arena(tmp_path, "league", "run", "ladder.toml", "-q").returncode == 0
    board = json.loads(arena(tmp_path, "leaderboard", "--league", "ladder.toml", "--json").stdout)
    order = [row["name"] for row in board["bots"]]
    tournament(tmp_path, "knockout", seeding="ratings", seeding_league="ladder")
    assert arena(tmp_path, "league", "run", "t.toml", "-q").returncode == 0
    first = bracket(tmp_path)["rounds"][0]
    # bracket order of 8 slots: seeds 1v8, 4v5, 2v7, 3v6: the top 3 of the ladder get the byes
    assert sorted(m["bots"][0] for m in first if len(m["bots"]) == 1) == sorted(order[:3])
    assert [m["bots"] for m in first if len(m["bots"]) == 2] == [[order[3], order[4]]]


@pytest.mark.parametrize("keys, message", [
    ({"format": "knockout", "games": ["sorry(players=4)"]}, "plays matches of two bots"),
    ({"format": "knockout", "rounds": 3}, "rounds is only for format = \"swiss\""),
    ({"format": "round_robin", "seeding": "ratings"}, "only for a tournament"),
    ({"format": "knockout", "seeding": "ratings"}, "needs seeding_league"),
    ({"format": "swiss", "tiebreak_games": 2}, "a tied Swiss match is a draw"),
    ({"format": "knockout", "seeding": "nope.csv"}, "no such file"),
    ({"format": "swiss", "schedule": "adaptive"}, "a tournament plays its own rounds"),
])
def test_a_tournament_key_that_does_not_fit_is_one_line(tmp_path: Path, keys: dict[str, Any], message: str) -> None:
    games = keys.pop("games", ["nim"])
    bots = FIVE if games == ["nim"] else [{"name": n, "spec": "random"} for n in "abcd"]
    write(tmp_path / "t.toml", league_toml("t", seed=1, database="t.sqlite", bots=bots, games=games,
                                           games_per_pairing=4 if games != ["nim"] else 2, **keys))
    p = arena(tmp_path, "league", "run", "t.toml", "-q")
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_arena_bracket_refuses_a_round_robin(tmp_path: Path) -> None:
    write(tmp_path / "rr.toml", league_toml("rr", seed=1, database="t.sqlite"))
    assert arena(tmp_path, "league", "run", "rr.toml", "-q").returncode == 0
    p = arena(tmp_path, "bracket", "--league", "rr.toml")
    assert p.returncode == 2 and "not a tournament" in p.stderr


GREEDY_FILE = '''
class Bot:
    def __init__(self, game, seat, seed):
        pass
    def step(self, state, limit):
        return max(state.legal_actions())
'''
RANDOM_FILE = '''
import random
class Bot:
    def __init__(self, game, seat, seed):
        self.rng = random.Random(seed)
    def step(self, state, limit):
        return self.rng.choice(state.legal_actions())
'''


@pytest.mark.slow
def test_a_final_from_the_ladder(tmp_path: Path) -> None:
    """`arena final --from-ladder`: every submitted bot's current version, seeded by the ladder's ratings, playing
    a game the ladder never played; the ladder's own built-in bots stay out."""
    write(tmp_path / "ladder.toml", league_toml("ladder", seed=3, database="course.sqlite", games_per_pairing=4))
    assert arena(tmp_path, "league", "run", "ladder.toml", "-q").returncode == 0
    for name, source in (("alice", GREEDY_FILE), ("bob", RANDOM_FILE), ("carol", RANDOM_FILE)):
        write(tmp_path / f"{name}.py", source + f"# {name}\n")
        p = arena(tmp_path, "submit", f"{name}.py", "--league", "ladder.toml")
        assert p.returncode == 0, p.stderr
    assert arena(tmp_path, "league", "run", "ladder.toml", "-q").returncode == 0
    board = json.loads(arena(tmp_path, "leaderboard", "--league", "ladder.toml", "--json").stdout)
    ranked = [row["name"] for row in board["bots"] if row["name"] in ("alice", "bob", "carol")]
    p = arena(tmp_path, "final", "--league", "ladder.toml", "--format", "knockout", "--from-ladder",
              "--game", "nim(n=9)", "-o", "final.toml")
    assert p.returncode == 0, p.stderr
    assert arena(tmp_path, "final", "--league", "ladder.toml", "--from-ladder", "-o", "final.toml").returncode == 2
    p = arena(tmp_path, "league", "run", "final.toml", "-q")
    assert p.returncode == 0, p.stderr
    data = bracket(tmp_path, "final.toml")
    first = data["rounds"][0]
    assert [m["bots"] for m in first if len(m["bots"]) == 1] == [[ranked[0]]]  # the ladder's best: the bye
    assert sorted(b for group in data["placings"] for b in group) == ["alice", "bob", "carol"]
    with Store.open(tmp_path / "course.sqlite", readonly=True) as store:
        final = store.league("ladder final")
        assert final is not None and {g.base_game for g in store.games(final.id)} == {"nim(n=9)"}


@pytest.mark.slow
def test_league_status_of_a_tournament(tmp_path: Path) -> None:
    tournament(tmp_path, "knockout")
    with Store.open(tmp_path / "t.sqlite", create=True) as store:
        store.ensure_league("t", {"seed": 11})
    assert "not started" in arena(tmp_path, "league", "status", "t.toml").stdout
    assert arena(tmp_path, "league", "run", "t.toml", "-q").returncode == 0
    p = arena(tmp_path, "league", "status", "t.toml")
    assert p.returncode == 0 and "knockout, 5 entrants): finished" in p.stdout, p.stdout


def test_arena_bracket_prints_names_as_they_are_never_as_markup(tmp_path: Path) -> None:
    """Attack (issue 32 review): the places lines went through rich's markup, so a bot named "[bold red]x[/]" was
    listed as "x" (a name can look like another's, or hide)."""
    bots = [{"name": "[bold red]x[/]", "spec": "greedy"}, {"name": "[dim]y", "spec": "random"}]
    tournament(tmp_path, "knockout", bots=bots, games_per_pairing=1)
    assert arena(tmp_path, "league", "run", "t.toml", "-q").returncode == 0
    text = arena(tmp_path, "bracket", "--league", "t.toml").stdout
    places = text[text.index("places"):]
    assert "[bold red]x[/]" in places and "[dim]y" in places, text


def test_a_tournament_bot_restricted_to_some_games_is_refused_in_one_line(tmp_path: Path) -> None:
    """Attack (issue 32 review): a bot of a tournament restricted with games = [...] was made to play every game of
    the league anyway (a match plays each spec): its restriction was silently ignored."""
    bots = [{"name": "a", "spec": "random", "games": ["nim(n=9)"]}, {"name": "b", "spec": "random"},
            {"name": "c", "spec": "random"}]
    write(tmp_path / "t.toml", league_toml("t", seed=1, database="t.sqlite", bots=bots,
                                           games=["nim(n=9)", "hex(size=3)"], format="knockout"))
    p = arena(tmp_path, "league", "run", "t.toml", "-q")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "bot 'a' plays only nim(n=9)" in p.stderr and "every game" in p.stderr, p.stderr


def test_a_run_that_needed_tie_breaks_never_reports_fewer_games_scheduled_than_played(tmp_path: Path) -> None:
    """From the issue 32 review: two greedy Nim bots split every pair of games (the first seat wins), so their
    match goes to tie-breaks and sudden death: 5 games. The run said "5 games played, 0 already stored, 2
    scheduled" (the count made before the first batch)."""
    bots = [{"name": "g1", "spec": "greedy"}, {"name": "g2", "spec": "greedy"}]
    write(tmp_path / "t.toml", league_toml("t", seed=3, database="t.sqlite", bots=bots, games=["nim(n=9)"],
                                           format="knockout", games_per_pairing=2))
    p = arena(tmp_path, "league", "run", "t.toml", "-q")
    assert p.returncode == 0, p.stderr
    assert bracket(tmp_path)["rounds"][0][0].get("note") == "in sudden death"  # (the premise: 2 + 2 + 1 games)
    assert "5 games played in" in p.stdout and "0 already stored, 5 scheduled" in p.stdout, p.stdout


@pytest.mark.parametrize("change", [{"games_per_pairing": 3}, {"tiebreak_games": 0},
                                    {"games": ["nim(n=7)", "nim(n=9)"]}, {"format": "double_elimination"}])
def test_a_started_tournament_refuses_a_file_that_would_rewrite_its_matches(tmp_path: Path,
                                                                             change: dict[str, Any]) -> None:
    """Attack (issue 32 review): a finished knockout, then games_per_pairing 1 -> 3 in its file: the next run
    re-settled every match with the longer rule, played 7 more games and crowned another champion (a bot out in
    round 1 reached the final). Keys that decide a match are frozen with the field; limits may still change."""
    keys: dict[str, Any] = {"games": ["nim(n=7)"], "games_per_pairing": 1, "format": "knockout"}
    bots = [{"name": f"b{i}", "spec": "random"} for i in range(4)]

    def write_file(**k: Any) -> None:
        k = dict(k)
        tournament(tmp_path, k.pop("format"), bots=bots, **k)
    write_file(**keys)
    assert arena(tmp_path, "league", "run", "t.toml", "-q").returncode == 0
    before, games = shape(bracket(tmp_path)), stored(tmp_path)
    write_file(**(keys | change))
    p = arena(tmp_path, "league", "run", "t.toml", "-q")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert next(iter(change)) in p.stderr and "started" in p.stderr, p.stderr
    assert stored(tmp_path) == games
    write_file(**keys)
    assert shape(bracket(tmp_path)) == before
    write_file(**keys, limits={"move_time": 1.5, "first_move_time": 30})
    assert arena(tmp_path, "league", "run", "t.toml", "-q").returncode == 0  # (limits are not a match's shape)


def test_arena_submit_to_a_tournament_under_way_is_refused_in_one_line(tmp_path: Path) -> None:
    tournament(tmp_path, "knockout")
    write(tmp_path / "late.py", RANDOM_FILE)
    assert arena(tmp_path, "league", "run", "t.toml", "-q").returncode == 0
    p = arena(tmp_path, "submit", "late.py", "--league", "t.toml")
    assert p.returncode == 2 and "tournament under way" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_a_bot_that_leaves_a_tournament_forfeits_what_it_has_not_played(tmp_path: Path) -> None:
    """A finalist removed from the league file (as a withdrawn or revoked student's bot leaves a final) loses the
    final without a game; the matches it finished stay as played."""
    from arena.league.config import load_config
    from arena.league.runner import run_league
    from arena.league.signals import Interrupted
    from arena.tournament.progress import current
    four = FIVE[:4]
    path = tournament(tmp_path, "knockout", bots=four)

    def stop_after_round_one(done: int, total: int, task: Any, result: Any) -> None:
        with Store.open(tmp_path / "t.sqlite", readonly=True) as store:  # (called once a game is committed)
            lg = store.find_league("t")
            state = current(store, lg.id, lg.config)
        if state is not None and all(m.done for m in state.rounds[0]):
            raise Interrupted(signal.SIGINT)  # as Ctrl-C would, between the rounds

    run_league(load_config(path), db=tmp_path / "t.sqlite", concurrency=1, progress=stop_after_round_one)
    data = bracket(tmp_path)
    first = data["rounds"][0]
    assert all(m["done"] for m in first) and not data["rounds"][1][0]["games"], data["rounds"]
    finalist = first[0]["winner"]
    tournament(tmp_path, "knockout", bots=[b for b in four if b["name"] != finalist])
    assert arena(tmp_path, "league", "run", "t.toml", "-q").returncode == 0
    data = bracket(tmp_path)
    final = data["rounds"][-1][0]
    other = first[1]["winner"]
    assert data["finished"] and final["winner"] == other and final["games"] == [] and "forfeit" in final["note"]
    assert data["rounds"][0] == first  # what it played stays as it was played
    assert data["placings"][:2] == [[other], [finalist]]


def test_a_bot_that_leaves_a_swiss_is_paired_no_more(tmp_path: Path) -> None:
    from arena.league.config import load_config
    from arena.league.runner import run_league
    from arena.league.signals import Interrupted
    from arena.tournament.progress import current
    bots = [{"name": f"mc{i}", "spec": f"mc(n={3 + i})"} for i in range(6)]
    path = tournament(tmp_path, "swiss", bots=bots, games_per_pairing=1, rounds=3)

    def stop_after_round_one(done: int, total: int, task: Any, result: Any) -> None:
        with Store.open(tmp_path / "t.sqlite", readonly=True) as store:
            lg = store.find_league("t")
            state = current(store, lg.id, lg.config)
        if state is not None and all(m.done for m in state.rounds[0]):
            raise Interrupted(signal.SIGINT)

    run_league(load_config(path), db=tmp_path / "t.sqlite", concurrency=1, progress=stop_after_round_one)
    tournament(tmp_path, "swiss", bots=bots[1:], games_per_pairing=1, rounds=3)  # mc0 leaves
    assert arena(tmp_path, "league", "run", "t.toml", "-q").returncode == 0
    data = bracket(tmp_path)
    assert data["finished"] and any("mc0" in m["bots"] for m in data["rounds"][0])
    assert not any("mc0" in m["bots"] for r in data["rounds"][1:] for m in r)
    assert any(s["bot"] == "mc0" for s in data["standings"])  # still in the table with what it played
