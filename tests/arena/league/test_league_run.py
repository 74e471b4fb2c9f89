"""A league through the CLI with the real sandboxed referee: run, resume, leaderboard, replay, submit, probation."""
from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from leaderboards import ledger
from leaderboards.store import Store
from tests.leaderboards.support import (
    RAISING_BOT,
    RANDOM_BOT,
    SEAT1_FAILING_BOT,
    SYNTAX_ERROR_BOT,
    arena,
    tamper,
    write,
)
from tests.league_files import BUILT_INS, league_toml

# One worker runs this module in order: its tests share one played league (module fixture) and later tests
# (submit) add to it.
pytestmark = pytest.mark.xdist_group("league_run")

FILE_RANDOM = {"name": "file-random", "file": "my_bot.py"}


def small_league(**changes: Any) -> str:
    """The league file of this module (3 bots, 6 games), with ``changes`` to its keys."""
    keys = {"probation_after": 2, "bots": [*BUILT_INS, FILE_RANDOM]} | changes
    return league_toml("small", seed=11, database="small.sqlite", **keys)


LEAGUE = small_league()


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    """A played 3-bot league (6 games) and the first run's output."""
    d = tmp_path_factory.mktemp("league")
    write(d / "my_bot.py", RANDOM_BOT)
    config = write(d / "league.toml", LEAGUE)
    first = arena(d, "league", "run", str(config), "--concurrency", "2")
    assert first.returncode == 0, first.stderr
    return d, config, first


@pytest.mark.slow
def test_a_league_plays_its_whole_schedule_and_prints_the_leaderboard(league):
    d, _, first = league
    assert "6 games played" in first.stdout and "greedy" in first.stdout
    with Store.open(d / "small.sqlite") as store:
        lg = store.find_league("small")
        games = store.games(lg.id)
        assert len(games) == 6 and len({g.schedule_key for g in games}) == 6
        assert all(g.terminations == ["normal", "normal"] for g in games)
        assert all(len(g.wall_times) == len(g.move_seats) == len(g.cpu_times) > 0 for g in games)
        bots = {b.name: b for b in store.bots(lg.id)}
        assert bots["file-random"].kind == "file" and len(bots["file-random"].content_hash) == 64
        ratings = store.ratings(lg.id)
        assert ratings[bots["greedy"].id].wins == 4  # greedy plays Nim perfectly from a winning pile or better
        assert sum(r.games for r in ratings.values()) == 12


def test_running_again_resumes_and_plays_nothing_twice(league):
    d, config, _ = league
    with Store.open(d / "small.sqlite") as store:
        before = {b: (r.mu, r.sigma) for b, r in store.ratings(1).items()}
    again = arena(d, "league", "run", str(config), "-q")
    assert again.returncode == 0, again.stderr
    assert "0 games played" in again.stdout and "6 already stored" in again.stdout
    with Store.open(d / "small.sqlite") as store:
        assert store.count_games(1) == 6
        assert {b: (r.mu, r.sigma) for b, r in store.ratings(1).items()} == before


def test_leaderboard_json_and_csv(league):
    d, _, _ = league
    p = arena(d, "leaderboard", "--db", "small.sqlite", "--json", "--h2h")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    rows = data["bots"]
    assert data["league"] == "small" and data["games"] == 6
    assert [r["rank"] for r in rows] == [1, 2, 3] and rows[0]["bot"] == "greedy"
    assert [r["exposed"] for r in rows] == sorted((r["exposed"] for r in rows), reverse=True)
    assert all(r["exposed"] == pytest.approx(r["mu"] - 3 * r["sigma"]) for r in rows)
    cell = next(c for c in data["head_to_head"] if c["bot"] == "greedy" and c["opponent"] == "random")
    assert cell["games"] == 2 and cell["wins"] + cell["draws"] + cell["losses"] == 2
    c = arena(d, "leaderboard", "--db", "small.sqlite", "--csv")
    table = list(csv.DictReader(io.StringIO(c.stdout)))
    assert [r["bot"] for r in table] == [r["bot"] for r in rows]
    assert float(table[0]["mu"]) == pytest.approx(rows[0]["mu"], abs=1e-3)
    assert int(table[0]["games"]) == rows[0]["games"]


def test_leaderboard_errors_are_usage_errors(tmp_path, league):
    d, _, _ = league
    p = arena(tmp_path, "leaderboard", "--db", "missing.sqlite")
    assert p.returncode == 2 and "no store at missing.sqlite" in p.stderr
    assert not (tmp_path / "missing.sqlite").exists()
    p = arena(d, "leaderboard", "--db", "small.sqlite", "--league", "other")
    assert p.returncode == 2 and "leagues: small" in p.stderr


def test_replay_prints_moves_and_verify_catches_a_tampered_history(league, tmp_path):
    d, _, _ = league
    p = arena(d, "replay", "1", "--db", "small.sqlite")
    assert p.returncode == 0, p.stderr
    assert "seat 0" in p.stdout and "pile" in p.stdout and "result:" in p.stdout
    listing = arena(d, "replay", "--db", "small.sqlite", "--last", "3")
    assert listing.returncode == 0 and len(listing.stdout.splitlines()) == 3 and "nim(seed=" in listing.stdout
    ok = arena(d, "replay", "1", "--db", "small.sqlite", "--verify")
    assert ok.returncode == 0 and "verified" in ok.stdout
    copy = tmp_path / "copy.sqlite"
    with Store.open(d / "small.sqlite") as store:
        store.conn.execute("VACUUM INTO ?", (str(copy),))
    with Store.open(copy) as store:
        g = store.game(1)
        history = list(g.history)
        history[2] = 99  # nobody may take 99 counters
        tamper(store, 1, history=history)
        g2 = store.game(2)
        tamper(store, 2, returns=[-r for r in g2.returns])
    bad = arena(tmp_path, "replay", "1", "--db", str(copy), "--verify")
    assert bad.returncode == 1 and "diverges at action 3" in bad.stderr and "illegal" in bad.stderr
    bad2 = arena(tmp_path, "replay", "2", "--db", str(copy), "--verify")
    assert bad2.returncode == 1 and "stored returns" in bad2.stderr


@pytest.mark.slow
def test_submit_validates_enters_and_the_next_run_plays_only_its_games(league, tmp_path):
    d, config, _ = league
    write(d / "newbot.py", RANDOM_BOT.replace("random.Random(seed)", "random.Random(seed + 1)"))
    p = arena(d, "submit", "newbot.py", "--league", "small", "--db", "small.sqlite")
    assert p.returncode == 0, p.stderr
    assert "passed validation" in p.stdout
    run = arena(d, "league", "run", str(config), "-q")
    assert run.returncode == 0, run.stderr
    assert "6 games played" in run.stdout  # 3 new pairings x 2 seat rotations, nothing else
    with Store.open(d / "small.sqlite") as store:
        new = store.current_bot(1, "newbot")
        assert new is not None and new.origin == "submit"
        assert len(store.games(1, bot_id=new.id)) == 6 and store.count_games(1) == 12
        stored = {b: (r.mu, r.sigma) for b, r in store.ratings(1).items()}
        assert {b: (r.mu, r.sigma) for b, r in ledger.recompute_ratings(store, 1).items()} == stored


@pytest.mark.parametrize("source,reason", [(SYNTAX_ERROR_BOT, "syntax error in broken.py, line 2"),
                                           (RAISING_BOT, "crash")])
def test_submit_refuses_a_broken_bot_with_the_reason(league, tmp_path, source, reason):
    d, _, _ = league
    write(tmp_path / "broken.py", source)
    p = arena(d, "submit", str(tmp_path / "broken.py"), "--league", "small", "--db", "small.sqlite")
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "refused" in p.stderr and reason in p.stderr
    with Store.open(d / "small.sqlite") as store:
        assert store.current_bot(1, "broken") is None


def test_submit_usage_errors_exit_2(league, tmp_path):
    d, _, _ = league
    p = arena(d, "submit", "nothere.py", "--league", "small", "--db", "small.sqlite")
    assert p.returncode == 2 and "not found" in p.stderr
    write(d / "greedy.py", RANDOM_BOT)
    p = arena(d, "submit", "greedy.py", "--league", "small", "--db", "small.sqlite")
    assert p.returncode == 2 and "is a bot of the league file" in p.stderr


@pytest.mark.slow
def test_a_failing_bot_goes_on_probation_is_skipped_visibly_and_a_fixed_file_comes_back(tmp_path):
    # A bot of the league file that fails from seat 1 (arena submit would refuse it: it validates every seat).
    write(tmp_path / "my_bot.py", RANDOM_BOT)
    write(tmp_path / "flaky.py", SEAT1_FAILING_BOT)
    flaky_entry = {"name": "flaky", "file": "flaky.py"}
    league = small_league(probation_after=1, bots=[*BUILT_INS, FILE_RANDOM, flaky_entry])
    config = write(tmp_path / "league.toml", league)
    run = arena(tmp_path, "league", "run", str(config), "-q", "--concurrency", "1")
    assert run.returncode == 0, run.stderr
    assert "skipped (probation: flaky)" in run.stdout
    with Store.open(tmp_path / "small.sqlite") as store:
        flaky = store.current_bot(1, "flaky")
        assert flaky.status == "probation" and "1 failed games in a row" in flaky.status_reason
        played = store.games(1, bot_id=flaky.id)
        failed = [g for g in played if g.terminations[g.seats.index(flaky.id)] == "crash"]
        assert len(failed) == 1 and played[-1].id == failed[0].id  # nothing after the failure
        assert len(played) < 6  # 3 opponents x 2 seat rotations were scheduled
        assert store.ratings(1)[flaky.id].crashes == 1
    board = arena(tmp_path, "leaderboard", "--db", "small.sqlite")
    assert "PROBATION" in board.stdout and "flaky is on probation" in board.stdout
    assert "fix its file in the league file and run `arena league run` again" in board.stdout
    write(tmp_path / "flaky.py", RANDOM_BOT)  # the owner fixes the file: a new version, active
    again = arena(tmp_path, "league", "run", str(config), "-q", "--concurrency", "1")
    assert again.returncode == 0, again.stderr
    with Store.open(tmp_path / "small.sqlite") as store:
        fixed = store.current_bot(1, "flaky")
        assert fixed.version == 2 and fixed.status == "active"
        assert len(store.games(1, bot_id=fixed.id)) == 6


def test_per_game_leaderboard_and_a_changed_seed_is_refused(league):
    d, config, _ = league
    p = arena(d, "leaderboard", "--db", "small.sqlite", "--game", "nim(k=3)", "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["scope"] == "nim" and sum(r["games"] for r in data["bots"]) >= 12
    bad = arena(d, "leaderboard", "--db", "small.sqlite", "--game", "hex")
    assert bad.returncode == 2 and "its games: nim" in bad.stderr
    write(d / "reseeded.toml", config.read_text().replace("seed = 11", "seed = 12"))
    p = arena(d, "league", "run", "reseeded.toml", "-q")
    assert p.returncode == 2 and "was played with seed 11" in p.stderr


def test_league_status_counts_the_stored_schedule(league):
    d, config, _ = league
    p = arena(d, "league", "status", str(config))
    assert p.returncode == 0, p.stderr
    assert "scheduled games stored" in p.stdout
    done, total = p.stdout.split(": ", 1)[1].split(" ", 1)[0].split("/")
    assert done == total
