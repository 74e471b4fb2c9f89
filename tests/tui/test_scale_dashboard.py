"""arena/bench/scale_dashboard.py on small stores: the synthetic store is a valid league, the measuring
functions run the real command and the real app, and never change the store they measure."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

import games
from arena.bench import scale_dashboard as dash
from arena.errors import ConfigError
from leaderboards import ledger
from leaderboards.store import Store


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dash") / "small.sqlite"
    made = dash.synthetic_store(path, bots=6, games=40, game="nim", seed=3)
    assert made["stored_games"] == 40 and made["bytes_per_game"] > 0
    return path


def test_the_synthetic_store_is_a_valid_rated_league(small_store: Path) -> None:
    with Store.open(small_store) as store:
        league = store.find_league(dash.LEAGUE)
        stored = store.games(league.id)
        assert len(stored) == 40 and len({g.schedule_key for g in stored}) == 40
        assert all(g.rated for g in stored)
        for g in stored[:10]:  # real play-outs: the rules accept every action and agree on the result
            state = games.load(g.game).new_initial_state()
            for action in g.history:
                state.apply_action(action)
            assert state.is_terminal() and list(state.returns()) == g.returns
        ratings = {b: (r.mu, r.sigma, r.games) for b, r in store.ratings(league.id).items()}
        assert len(ratings) == 6 and sum(r[2] for r in ratings.values()) == 80
        recomputed = ledger.recompute_ratings(store, league.id)
        assert {b: (r.mu, r.sigma, r.games) for b, r in recomputed.items()} == ratings
    with pytest.raises(ConfigError, match="exists"):
        dash.synthetic_store(small_store, bots=2, games=2)


def test_arena_leaderboard_prints_every_bot_in_an_aligned_table(small_store: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "arena.cli", "leaderboard", "--db", str(small_store)],
                         capture_output=True, text=True, check=True).stdout
    table = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert len(table) == 4 + 6 and len({cell_len(line) for line in table}) == 1  # header, rule, 6 bots, edges
    with Store.open(small_store, readonly=True) as store:
        data = json.loads(subprocess.run([sys.executable, "-m", "arena.cli", "leaderboard", "--db", str(small_store),
                                          "--json"], capture_output=True, text=True, check=True).stdout)
        assert [row["bot"] for row in data["bots"]] == [line.split("│")[2].strip() for line in table[3:-1]]
        assert data["games"] == store.count_games(1) == 40


def test_leaderboard_and_dashboard_times_measure_without_changing_the_store(small_store: Path) -> None:
    before = small_store.read_bytes()
    board = dash.leaderboard_times(small_store, repeats=1)
    assert board["stored_games"] == 40 and board["bots"] == 6
    # Each median is a real, positive time no larger than its own maximum, and the CLI run (a fresh
    # interpreter that also runs the query) takes longer than the query alone.
    for key in ("query_seconds", "standings_seconds", "command_seconds"):
        assert 0 < board[key] <= board[f"{key}_max"], key
    assert board["command_seconds"] > board["query_seconds"]
    assert board["command_seconds"] > board["python_startup_seconds"] > 0
    shown = dash.dashboard_times(small_store, dash.appending_writer(5, interval=0.0, process=False), h2h_games=2,
                                 poll_interval=0.05)
    assert shown["written_games"] == 5 and shown["rows_shown"] == 6
    assert 0 < shown["open_seconds"] <= shown["trends_seconds"]
    assert shown["updates"] >= 1 and shown["max_update_seconds"] >= shown["median_update_seconds"] > 0
    assert shown["h2h_query_seconds"] > 0
    assert small_store.read_bytes() == before  # measured on a copy
