"""Validation plays every seat; probation counts the failure rate; the hint names what works for each kind of
bot; `arena league release` lifts probation. Real CLI, real sandbox, real store."""
from __future__ import annotations

import json

import pytest

from leaderboards.store import Store
from tests.leaderboards.support import RANDOM_BOT, SEAT1_FAILING_BOT, arena, write
from tests.league_files import league_toml

LEAGUE = league_toml("seats", seed=5, database="seats.sqlite", probation_after=5, probation_window=4,
                     probation_failures=2)


@pytest.mark.slow
def test_submit_refuses_a_bot_that_crashes_only_in_seat_1(tmp_path):
    config = write(tmp_path / "league.toml", LEAGUE)
    assert arena(tmp_path, "league", "run", str(config), "-q").returncode == 0
    write(tmp_path / "flaky.py", SEAT1_FAILING_BOT)
    p = arena(tmp_path, "submit", "flaky.py", "--league", "seats", "--db", "seats.sqlite")
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "refused: crash in its validation game of nim from seat 1" in p.stderr
    assert "I cannot play second" in p.stderr
    with Store.open(tmp_path / "seats.sqlite") as store:
        assert store.current_bot(1, "flaky") is None
    write(tmp_path / "good.py", RANDOM_BOT)
    ok = arena(tmp_path, "submit", "good.py", "--league", "seats", "--db", "seats.sqlite")
    assert ok.returncode == 0 and "passed validation" in ok.stdout, ok.stderr


def test_a_bot_failing_every_other_game_reaches_probation_and_release_lifts_it(tmp_path):
    write(tmp_path / "flaky.py", SEAT1_FAILING_BOT)
    config = write(tmp_path / "league.toml", LEAGUE + '[[bots]]\nname = "flaky"\nfile = "flaky.py"\n')
    run = arena(tmp_path, "league", "run", str(config), "-q", "--concurrency", "1")
    assert run.returncode == 0, run.stderr
    with Store.open(tmp_path / "seats.sqlite") as store:
        flaky = store.current_bot(1, "flaky")
        played = store.games(1, bot_id=flaky.id)
        seats = [g.seats.index(flaky.id) for g in played]
        failed = [g.terminations[s] != "normal" for g, s in zip(played, seats)]
        assert failed == [s == 1 for s in seats]  # it fails exactly its seat-1 games: never two in a row...
        assert flaky.status == "probation", (flaky.status_reason, failed)  # ...and still reaches probation
        assert "2 of its last" in flaky.status_reason
    board = arena(tmp_path, "leaderboard", "--db", "seats.sqlite")
    assert board.returncode == 0, board.stderr
    hint = next(line for line in board.stdout.splitlines() if "flaky is on probation" in line)
    assert "fix its file in the league file and run `arena league run` again" in hint
    assert "arena submit" not in hint  # submit refuses a bot of the league file
    assert "arena league release flaky --league seats --db seats.sqlite" in hint

    p = arena(tmp_path, "league", "release", "flaky", "--league", "seats", "--db", "seats.sqlite")
    assert p.returncode == 0, p.stderr
    assert "flaky: probation lifted" in p.stdout
    with Store.open(tmp_path / "seats.sqlite") as store:
        bot = store.current_bot(1, "flaky")
        assert bot.status == "active" and bot.status_reason == "" and bot.consecutive_failures == 0
    again = arena(tmp_path, "league", "release", "flaky", "--league", "seats", "--db", "seats.sqlite")
    assert again.returncode == 2 and "flaky is not on probation (active)" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    nobody = arena(tmp_path, "league", "release", "nobody", "--league", "seats", "--db", "seats.sqlite")
    assert nobody.returncode == 2 and "no bot 'nobody' in league seats" in nobody.stderr


@pytest.mark.slow
def test_a_submitted_bot_on_probation_is_told_to_resubmit(tmp_path):
    config = write(tmp_path / "league.toml", LEAGUE)
    assert arena(tmp_path, "league", "run", str(config), "-q").returncode == 0
    write(tmp_path / "mine.py", RANDOM_BOT)
    assert arena(tmp_path, "submit", "mine.py", "--league", "seats", "--db", "seats.sqlite").returncode == 0
    with Store.open(tmp_path / "seats.sqlite") as store:
        store.set_probation(store.current_bot(1, "mine").id, "2 of its last 4 games failed (last: crash in game 9)")
    board = arena(tmp_path, "leaderboard", "--db", "seats.sqlite", "--json")
    row = next(r for r in json.loads(board.stdout)["bots"] if r["name"] == "mine")
    assert row["status"] == "probation" and row["origin"] == "submit"
    text = arena(tmp_path, "leaderboard", "--db", "seats.sqlite").stdout
    hint = next(line for line in text.splitlines() if "mine is on probation" in line)
    assert "resubmit it with `arena submit`" in hint and "arena league release mine" in hint
