"""The SQLite store: schema version, WAL, bot versions by content hash, one game per key, ratings = recomputation."""
from __future__ import annotations

import random
import sqlite3

import pytest
import trueskill

from arena.errors import ConfigError
from leaderboards import ledger
from leaderboards.store import SCHEMA_VERSION, Store, StoreError
from tests.leaderboards.support import store_game


def _record(seats: int, winner: int, terminations: list[str] | None = None) -> dict:
    returns = [-1.0] * seats
    returns[winner] = 1.0
    return {"game": "nim(seed=1)", "seed": 1, "players": [f"p{i}" for i in range(seats)], "history": [1, 2],
            "returns": returns, "terminations": terminations or ["normal"] * seats, "move_seats": [0, 1],
            "wall_times": [0.1, 0.2], "cpu_times": [0.1, 0.1], "failures": [], "duration": 0.3, "info": {}}


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "s.sqlite", create=True) as s:
        yield s


def test_a_missing_store_is_not_created_without_create(tmp_path):
    with pytest.raises(ConfigError, match="no store"):
        Store.open(tmp_path / "none.sqlite")
    assert not (tmp_path / "none.sqlite").exists()


def test_schema_version_and_wal(store, tmp_path):
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    store.conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="newer arena"):
        Store.open(tmp_path / "s.sqlite")


def test_a_file_that_is_not_a_store_is_refused(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="not an arena store"):
        Store.open(path)


def test_a_changed_file_is_a_new_version_and_retires_the_old(store):
    league = store.ensure_league("L", {})
    v1, new1 = store.upsert_bot(league.id, "mine", origin="submit", filename="b.py", source="class Bot: pass\n")
    same, new_same = store.upsert_bot(league.id, "mine", origin="submit", filename="b.py", source="class Bot: pass\n")
    v2, new2 = store.upsert_bot(league.id, "mine", origin="submit", filename="b.py", source="class Bot: x = 1\n")
    assert (new1, new_same, new2) == (True, False, True)
    assert same.id == v1.id and v2.version == 2 and v2.label == "mine@v2"
    assert v1.content_hash != v2.content_hash
    assert store.bot(v1.id).status == "retired" and store.bot(v2.id).status == "active"
    assert [b.id for b in store.bots(league.id, include_retired=False)] == [v2.id]


def test_a_schedule_key_is_stored_once(store):
    league = store.ensure_league("L", {})
    a, _ = store.upsert_bot(league.id, "a", origin="config", spec="random")
    b, _ = store.upsert_bot(league.id, "b", origin="config", spec="random")
    first = store_game(store, league.id, "000000|nim|1.2|0", "nim", 0, (a.id, b.id), _record(2, 0))
    again = store_game(store, league.id, "000000|nim|1.2|0", "nim", 0, (a.id, b.id), _record(2, 1))
    assert first is not None and again is None
    assert store.count_games(league.id) == 1
    assert store.game(first).returns == [1.0, -1.0]


def test_probation_after_k_consecutive_failures_and_a_success_resets_the_run(store):
    league = store.ensure_league("L", {})
    a, _ = store.upsert_bot(league.id, "a", origin="config", spec="random")
    b, _ = store.upsert_bot(league.id, "b", origin="submit", filename="b.py", source="x")
    keys = iter(f"{i:06d}|nim|x|0" for i in range(10))
    crash = ["normal", "crash"]
    store_game(store, league.id, next(keys), "nim", 0, (a.id, b.id), _record(2, 0, crash), probation_after=3)
    store_game(store, league.id, next(keys), "nim", 0, (a.id, b.id), _record(2, 0, crash), probation_after=3)
    store_game(store, league.id, next(keys), "nim", 0, (a.id, b.id), _record(2, 1), probation_after=3)
    assert store.bot(b.id).consecutive_failures == 0 and store.bot(b.id).status == "active"
    for _ in range(3):
        store_game(store, league.id, next(keys), "nim", 0, (a.id, b.id), _record(2, 0, crash), probation_after=3)
    bot = store.bot(b.id)
    assert bot.status == "probation" and "3 failed games in a row" in bot.status_reason
    # Resubmitting the same file lifts probation.
    again, new = store.upsert_bot(league.id, "b", origin="submit", filename="b.py", source="x", reactivate=True)
    assert not new and again.status == "active" and again.consecutive_failures == 0


def test_incremental_ratings_equal_a_fresh_trueskill_recomputation_in_key_order(store):
    league = store.ensure_league("L", {})
    ids = [store.upsert_bot(league.id, f"b{i}", origin="config", spec="random")[0].id for i in range(4)]
    rng = random.Random(5)
    games = []
    for i in range(60):
        seats = rng.sample(ids, 2)
        games.append((f"{i:06d}|nim|x|0", seats, rng.randrange(2)))
    shuffled = games[:]
    rng.shuffle(shuffled)  # completion order differs from schedule order
    for n, (key, seats, winner) in enumerate(shuffled):
        store_game(store, league.id, key, "nim", 0, seats, _record(2, winner))
        if n % 7 == 0:
            ledger.rate_pending(store, league.id)  # rating a prefix, then older keys arrive: must recompute
    ledger.rate_pending(store, league.id)
    stored = store.ratings(league.id)

    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.0)
    fresh = {b: env.create_rating() for b in ids}
    for _key, seats, winner in sorted(games):
        w, l = seats[winner], seats[1 - winner]
        fresh[w], fresh[l] = trueskill.rate_1vs1(fresh[w], fresh[l], env=env)
    for b in ids:
        assert stored[b].mu == pytest.approx(fresh[b].mu, abs=1e-12)
        assert stored[b].sigma == pytest.approx(fresh[b].sigma, abs=1e-12)
    assert sum(r.games for r in stored.values()) == 120
    recomputed = ledger.recompute_ratings(store, league.id)
    assert {b: (r.mu, r.sigma) for b, r in recomputed.items()} == {b: (r.mu, r.sigma) for b, r in stored.items()}


def test_readers_see_a_consistent_store_while_a_writer_holds_a_transaction(store, tmp_path):
    league = store.ensure_league("L", {})
    a, _ = store.upsert_bot(league.id, "a", origin="config", spec="random")
    store.upsert_bot(league.id, "b", origin="config", spec="random")
    store.conn.execute("BEGIN IMMEDIATE")
    store.conn.execute("UPDATE bots SET name='zzz' WHERE id=?", (a.id,))
    reader = sqlite3.connect(tmp_path / "s.sqlite")
    assert reader.execute("SELECT name FROM bots WHERE id=?", (a.id,)).fetchone()[0] == "a"  # WAL: not blocked
    store.conn.execute("ROLLBACK")
    reader.close()


def test_random_move_substitutions_count_toward_probation(store):
    league = store.ensure_league("L", {})
    a, _ = store.upsert_bot(league.id, "a", origin="config", spec="random")
    b, _ = store.upsert_bot(league.id, "b", origin="config", spec="random")
    for i in range(2):
        record = _record(2, 1)  # b even wins: its timeouts were replaced by random moves
        record["failures"] = [{"seat": 1, "reason": "timeout", "move_number": 3, "detail": "", "substituted": 1}]
        store_game(store, league.id, f"{i:06d}|nim|x|0", "nim", 0, (a.id, b.id), record, probation_after=2)
    bot = store.bot(b.id)
    assert bot.status == "probation" and "timeout" in bot.status_reason
    ledger.rate_pending(store, league.id)
    assert store.ratings(league.id)[b.id].timeouts == 2


def test_delete_league_removes_only_that_league(store):
    keep = store.ensure_league("keep", {})
    drop = store.ensure_league("drop", {})
    for league in (keep, drop):
        a, _ = store.upsert_bot(league.id, "a", origin="config", spec="random")
        b, _ = store.upsert_bot(league.id, "b", origin="config", spec="greedy")
        store_game(store, league.id, "000000|nim|x|0", "nim", 0, (a.id, b.id), _record(2, 0))
        ledger.rate_pending(store, league.id)
    assert store.delete_league("drop") and not store.delete_league("drop")
    assert [lg.name for lg in store.leagues()] == ["keep"]
    assert store.count_games(keep.id) == 1 and len(store.ratings(keep.id)) == 2
    assert store.conn.execute("SELECT count(*) FROM game_seats").fetchone()[0] == 2
