"""The dashboard's worker-side reader against a real store."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.tui.data import NO_HISTORY, StoreReader, TrendHistory, Unavailable, short_spec
from leaderboards.ratings import ALL, RatedGame, Rater, leaderboard_order
from leaderboards.store import SCHEMA_VERSION, Store
from tests.tui.storefix import Fixture


def test_snapshot_matches_the_stored_ratings(fixture_store: Fixture) -> None:
    reader = StoreReader(fixture_store.path)
    first = reader.poll(None, ALL)
    assert first is not None and not first.trends_complete and not first.leaderboard[0].trend
    assert reader.load_trends(budget=30) is False
    snap = reader.poll(None, ALL)
    assert snap is not None and snap.trends_complete
    stored = fixture_store.store.ratings(fixture_store.demo.id)
    assert [row.bot_id for row in snap.leaderboard] == leaderboard_order(stored)
    for row in snap.leaderboard:
        assert row.exposed == pytest.approx(stored[row.bot_id].exposed)
        assert row.games == stored[row.bot_id].games == len(row.trend)
        assert row.trend[-1] == pytest.approx(row.exposed)  # the trend ends at the stored rating
    mybot = next(r for r in snap.leaderboard if r.label == "mybot")
    assert mybot.failures == 2
    assert snap.leagues == ["demo", "ladder"] and snap.league == "demo"
    assert snap.scopes[0] == ALL and set(snap.scopes[1:]) == {"nim", "doublestep"}
    assert snap.n_games == 48 and len(snap.games) == 48
    assert [g.id for g in snap.games] == sorted((g.id for g in snap.games), reverse=True)
    assert any(g.reason == "timeout@0" for g in snap.games)
    reader.close()


def test_poll_is_none_until_something_changes(fixture_store: Fixture) -> None:
    reader = StoreReader(fixture_store.path)
    assert reader.poll(None, ALL) is not None
    assert reader.poll(None, ALL) is None
    assert reader.poll(None, "nim") is not None  # a new selection
    fixture_store.add_round([("random", "greedy")])
    snap = reader.poll(None, "nim")
    assert snap is not None and snap.n_games == 24 + 2
    reader.close()


def trend_from_a_fold(store: Store, league_id: int, scope: str, bot_id: int) -> list[float]:
    """mu - 3 sigma of ``bot_id`` after each of its games, by folding the stored games in schedule order."""
    rater, out = Rater(), []
    for g in store.games(league_id):
        game = RatedGame(g.schedule_key, g.base_game, g.seats, g.returns, g.terminations, g.failures)
        if rater.apply(game) and bot_id in g.seats and scope in (ALL, g.base_game):
            out.append(rater.table[(scope, bot_id)].exposed)
    return out


def test_trends_are_the_stored_history_read_in_chunks(fixture_store: Fixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TrendHistory, "CHUNK", 10)
    reader = StoreReader(fixture_store.path)
    reader.poll(None, ALL)
    assert reader.load_trends(budget=0) is True  # one chunk of 10 games, more left
    assert reader.poll(None, ALL) is None  # a slice of a long load makes no snapshot (the UI is left alone)
    snap = reader.poll(None, ALL, force=True)
    assert snap is not None and not snap.trends_complete and 0 < len(snap.leaderboard[0].trend) < 24
    while reader.load_trends(budget=0):
        pass
    demo = fixture_store.demo.id
    for scope in (ALL, "nim"):
        snap = reader.poll(None, scope)
        assert snap is not None and snap.trends_complete
        for row in snap.leaderboard:
            assert list(row.trend) == pytest.approx(trend_from_a_fold(fixture_store.store, demo, scope, row.bot_id),
                                                    abs=1e-12)
            assert row.trend[-1] == pytest.approx(row.exposed)
    # new games: only they are read, and the trends still equal a fold
    fixture_store.add_round([("random", "greedy")])
    seen = reader.trends.last_seq
    assert reader.load_trends(budget=30) is False
    assert reader.trends.start is not None and reader.trends.last_seq > seen
    snap = reader.poll(None, ALL)
    assert snap is not None and snap.trends_complete
    for row in snap.leaderboard:
        assert list(row.trend) == pytest.approx(trend_from_a_fold(fixture_store.store, demo, ALL, row.bot_id),
                                                abs=1e-12)
    reader.close()


def test_the_reader_runs_no_trueskill(fixture_store: Fixture, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the dashboard must read the stored history, not rate games")
    monkeypatch.setattr(Rater, "apply", forbidden)
    reader = StoreReader(fixture_store.path)
    reader.poll(None, ALL)
    assert reader.load_trends(budget=30) is False
    snap = reader.poll(None, ALL)
    assert snap is not None and all(row.trend for row in snap.leaderboard)
    reader.close()


def test_a_schema_1_store_shows_ratings_without_trends(fixture_store: Fixture) -> None:
    fixture_store.close()
    # what a read-only viewer of a schema 1 file sees: the fixture's store taken back to schema 1 (a store must
    # have exactly the schema of its version: what later versions added is dropped)
    conn = sqlite3.connect(fixture_store.path)
    known = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for table in known - {"meta", "leagues", "bots", "games", "game_seats", "ratings"}:
        conn.execute(f"DROP TABLE {table}")
    conn.execute("DROP INDEX games_league_seq")
    conn.execute("DROP INDEX bots_files")  # (schema 6: bots' files fingerprint)
    for table, column in (("bots", "files_hash"),
                          ("games", "rating_seq"), ("game_seats", "mu"), ("game_seats", "sigma"),
                          ("game_seats", "game_mu"), ("game_seats", "game_sigma"), ("leagues", "chance_key"),
                          ("bots", "snapshot")):
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    conn.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    reader = StoreReader(fixture_store.path)
    snap = reader.poll(None, ALL)
    assert snap is not None and snap.trends_complete and snap.trends_note == NO_HISTORY
    assert reader.load_trends(budget=30) is False
    assert all(not row.trend for row in snap.leaderboard) and snap.leaderboard[0].games == 24
    reader.close()


def test_scope_filters_ratings_games_and_head_to_head(fixture_store: Fixture) -> None:
    reader = StoreReader(fixture_store.path)
    snap = reader.poll(None, "nim")
    assert snap is not None and snap.scope == "nim"
    assert all(g.game.startswith("nim") for g in snap.games) and snap.n_games == 24
    assert all(row.games == 12 for row in snap.leaderboard)
    uct, rnd = fixture_store.bots["uct"], fixture_store.bots["random"]
    assert snap.h2h[(uct, rnd)] == (4, 0, 0) and snap.h2h[(rnd, uct)] == (0, 0, 4)
    reader.close()


def test_other_league_and_unknown_league(fixture_store: Fixture) -> None:
    reader = StoreReader(fixture_store.path)
    snap = reader.poll("ladder", ALL)
    assert snap is not None and [r.label for r in snap.leaderboard] and snap.n_games == 3
    with pytest.raises(Unavailable, match="(?s)No league 'nope'.*demo, ladder") as unknown:
        reader.poll("nope", ALL)
    assert unknown.value.leagues == ["demo", "ladder"] and not unknown.value.final
    reader.close()


def test_missing_empty_and_newer_stores(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    reader = StoreReader(path)
    with pytest.raises(Unavailable, match="No results store") as missing:
        reader.poll(None, ALL)
    assert not missing.value.final  # it may appear: keep polling
    Store.open(path, create=True).close()
    with pytest.raises(Unavailable, match="holds no league yet") as empty:
        reader.poll(None, ALL)
    assert not empty.value.final
    reader.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    with pytest.raises(Unavailable, match="newer arena") as newer:
        StoreReader(path).poll(None, ALL)
    assert newer.value.final
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(Unavailable, match="not an arena store"):
        StoreReader(junk).poll(None, ALL)


def test_bot_detail_and_replay_data(fixture_store: Fixture) -> None:
    reader = StoreReader(fixture_store.path)
    detail = reader.bot_detail(fixture_store.bots["mybot"])
    assert detail.kind == "file" and detail.filename == "mybot.py" and "class Bot" in detail.source_head
    assert detail.limits["move_time"] == 2.0
    assert len(detail.failures) == 2 and all(f[1] == "timeout" for f in detail.failures)
    assert "TimeoutError" in detail.failures[0][3] and "Traceback" not in detail.failures[0][3]  # the tail
    assert detail.n_games == 24 and sum(detail.hist) == detail.n_moves > 0
    assert detail.percentiles["p50"] <= detail.percentiles["p90"] <= detail.percentiles["max"]
    uct = reader.bot_detail(fixture_store.bots["uct"])
    assert uct.kind == "builtin" and uct.spec == "uct(iterations=100)" and not uct.failures
    data = reader.replay(1)
    stored = fixture_store.store.game(1)
    assert stored is not None and data.history == stored.history and data.spec == stored.game
    with pytest.raises(Unavailable):
        reader.replay(10_000)
    reader.close()


def test_short_spec_drops_only_the_seed() -> None:
    assert short_spec("nim(seed=2832099861741452824)") == "nim"
    assert short_spec("hex(size=5,seed=7,pie=true)") == "hex(size=5,pie=true)"
    assert short_spec("doublestep") == "doublestep"
    assert short_spec("colosseum(size=6)") == "colosseum(size=6)"


def test_head_to_head_counts_are_kept_and_only_new_games_added(fixture_store: Fixture) -> None:
    reader = StoreReader(fixture_store.path)
    first = reader.poll(None, ALL)
    assert first is not None and first.h2h == fixture_store.store.head_to_head(fixture_store.demo.id)
    fixture_store.add_round([("random", "greedy"), ("uct", "mybot")])
    snap = reader.poll(None, ALL)
    assert snap is not None and snap.h2h == fixture_store.store.head_to_head(fixture_store.demo.id)
    assert snap.h2h != first.h2h and first.h2h[(fixture_store.bots["uct"], fixture_store.bots["random"])] == (8, 0, 0)
    nim = reader.poll(None, "nim")  # another scope: counted afresh
    assert nim is not None and nim.h2h == fixture_store.store.head_to_head(fixture_store.demo.id, "nim")
    reader.close()


def test_a_bot_detail_after_the_leaderboard_was_polled(fixture_store: Fixture) -> None:
    """The leaderboard's batch Elo cache and the bot detail's Elo are two things: polling first (as the dashboard
    always does) must not leave the detail calling the cache (it raised 'dict object is not callable')."""
    reader = StoreReader(fixture_store.path)
    snap = reader.poll(None, ALL)
    assert snap.leaderboard
    detail = reader.bot_detail(fixture_store.bots["mybot"])
    assert detail.filename == "mybot.py"
