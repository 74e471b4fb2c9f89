"""Rating history (schema 2): each seat's rating after each game equals a Rater fold, schema 1 stores
migrate, resumed == uninterrupted, and a bot entered late costs one recomputation, not one per game."""
from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from arena.league.schedule import league_schedule
from leaderboards import ledger, rating_fold
from leaderboards.ratings import ALL, RatedGame, Rater
from leaderboards.store import SCHEMA_VERSION, Store, StoreError
from tests.leaderboards.support import store_game

# The schema of version 1 as it shipped (frozen here: the migration test needs a real v1 file).
V1_SCHEMA = '''
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS leagues (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    config TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    id INTEGER PRIMARY KEY,
    league_id INTEGER NOT NULL REFERENCES leagues(id),
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('builtin', 'file')),
    spec TEXT,
    filename TEXT,
    source TEXT,
    content_hash TEXT NOT NULL,
    origin TEXT NOT NULL CHECK (origin IN ('config', 'submit')),
    games TEXT,
    trusted INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'probation', 'retired')),
    status_reason TEXT NOT NULL DEFAULT '',
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    UNIQUE (league_id, name, version)
);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    league_id INTEGER NOT NULL REFERENCES leagues(id),
    schedule_key TEXT NOT NULL,
    base_game TEXT NOT NULL,
    game TEXT NOT NULL,
    round INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    seats TEXT NOT NULL,
    players TEXT NOT NULL,
    history TEXT NOT NULL,
    returns TEXT NOT NULL,
    terminations TEXT NOT NULL,
    move_seats TEXT NOT NULL,
    wall_times TEXT NOT NULL,
    cpu_times TEXT NOT NULL,
    failures TEXT NOT NULL,
    duration REAL NOT NULL,
    info TEXT NOT NULL,
    rated INTEGER NOT NULL DEFAULT 0,
    finished REAL NOT NULL,
    UNIQUE (league_id, schedule_key)
);
CREATE INDEX IF NOT EXISTS games_league_rated ON games (league_id, rated, schedule_key);
CREATE TABLE IF NOT EXISTS game_seats (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    score REAL NOT NULL,
    result TEXT NOT NULL CHECK (result IN ('win', 'draw', 'loss')),
    termination TEXT NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX IF NOT EXISTS game_seats_bot ON game_seats (bot_id);
CREATE TABLE IF NOT EXISTS ratings (
    league_id INTEGER NOT NULL REFERENCES leagues(id),
    scope TEXT NOT NULL,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    games INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    draws INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    timeouts INTEGER NOT NULL,
    crashes INTEGER NOT NULL,
    illegal INTEGER NOT NULL,
    memory INTEGER NOT NULL,
    protocol INTEGER NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (league_id, scope, bot_id)
);
'''


def record(returns: list[float], seed: int = 1) -> dict:
    n = len(returns)
    return {"game": f"nim(seed={seed})", "seed": seed, "players": [f"p{i}" for i in range(n)], "history": [1],
            "returns": returns, "terminations": ["normal"] * n, "move_seats": [0], "wall_times": [0.1],
            "cpu_times": [0.1], "failures": [], "duration": 0.1, "info": {}}


def outcome(rng: random.Random, seats: int) -> list[float]:
    if rng.random() < 0.1:
        return [0.0] * seats  # an adjudicated tie: a draw
    returns = [-1.0] * seats
    returns[rng.randrange(seats)] = 1.0
    return returns


def stored_history(store: Store, league_id: int) -> dict[str, list[tuple[float | None, ...]]]:
    """schedule key -> per seat (mu, sigma, game_mu, game_sigma) as stored."""
    rows = store.conn.execute(
        "SELECT g.schedule_key, s.seat, s.mu, s.sigma, s.game_mu, s.game_sigma FROM game_seats s "
        "JOIN games g ON g.id = s.game_id WHERE g.league_id=? ORDER BY g.schedule_key, s.seat", (league_id,))
    out: dict[str, list[tuple[float | None, ...]]] = {}
    for key, _seat, *values in rows:
        out.setdefault(key, []).append(tuple(values))
    return out


def folded_history(games: list[RatedGame]) -> tuple[Rater, dict[str, list[tuple[float | None, ...]]]]:
    """The Rater fold in schedule order, step by step: the expected history."""
    rater = Rater()
    out: dict[str, list[tuple[float | None, ...]]] = {}
    for game in sorted(games, key=lambda g: g.key):
        if rater.apply(game):
            out[game.key] = [(rater.table[(ALL, b)].mu, rater.table[(ALL, b)].sigma, rater.table[(game.game, b)].mu,
                              rater.table[(game.game, b)].sigma) for b in game.seats]
        else:
            out[game.key] = [(None, None, None, None)] * len(game.seats)
    return rater, out


def rated_games(store: Store, league_id: int) -> list[RatedGame]:
    return [RatedGame(g.schedule_key, g.base_game, g.seats, g.returns, g.terminations, g.failures)
            for g in store.games(league_id)]


def assert_equals_fold(store: Store, league_id: int) -> None:
    """Ratings and history are exactly what folding every stored game in key order gives."""
    rater, expected = folded_history(rated_games(store, league_id))
    assert stored_history(store, league_id) == expected
    for (scope, bot), r in rater.table.items():
        stored = store.ratings(league_id, scope)[bot]
        assert (stored.mu, stored.sigma, stored.games, stored.wins, stored.draws) == (r.mu, r.sigma, r.games, r.wins,
                                                                                     r.draws)
    assert store.count_provisional(league_id) == 0


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "s.sqlite", create=True) as s:
        yield s


def test_history_equals_a_rater_fold_step_by_step(store: Store) -> None:
    league = store.ensure_league("L", {})
    ids = [store.upsert_bot(league.id, f"b{i}", origin="config", spec="random")[0].id for i in range(5)]
    rng = random.Random(3)
    games = []
    for i in range(80):
        spec = rng.choice(["nim", "doublestep", "sorry(players=3)"])
        seats = rng.sample(ids, 3 if spec.startswith("sorry") else 2)
        if i == 7:
            seats = [ids[0], ids[0]]  # a bot against itself: stored, never rated, no history
        games.append((f"{i // 10:06d}|{spec}|{i:04d}|0", spec, seats, outcome(rng, len(seats))))
    for n, (key, spec, seats, returns) in enumerate(games):  # in schedule order, rated as they come
        store_game(store, league.id, key, spec, 0, seats, record(returns, n))
        ledger.rate_pending(store, league.id, before=games[n + 1][0] if n + 1 < len(games) else None)
    assert_equals_fold(store, league.id)
    history = stored_history(store, league.id)
    assert history[games[7][0]] == [(None,) * 4] * 2
    # rating_seq numbers the games in the order they were folded: schedule order here
    seqs = [g.rating_seq for g in store.games(league.id)]
    assert seqs == sorted(seqs) and len(set(seqs)) == 80
    # recomputing changes nothing but the sequence numbers
    before = stored_history(store, league.id)
    ledger.recompute_ratings(store, league.id)
    assert stored_history(store, league.id) == before
    assert min(g.rating_seq or 0 for g in store.games(league.id)) > max(seqs)


def test_shuffled_completion_and_prefix_ratings_end_equal_to_the_fold(store: Store) -> None:
    league = store.ensure_league("L", {})
    ids = [store.upsert_bot(league.id, f"b{i}", origin="config", spec="random")[0].id for i in range(4)]
    rng = random.Random(11)
    games = [(f"{i:06d}|nim|x|0", rng.sample(ids, 2), outcome(rng, 2)) for i in range(60)]
    shuffled = games[:]
    rng.shuffle(shuffled)
    for n, (key, seats, returns) in enumerate(shuffled):
        store_game(store, league.id, key, "nim", 0, seats, record(returns))
        if n % 7 == 0:
            ledger.rate_pending(store, league.id)  # everything so far, then older keys arrive
    ledger.rate_pending(store, league.id)
    assert_equals_fold(store, league.id)


def test_resumed_equals_uninterrupted(tmp_path: Path) -> None:
    rng = random.Random(5)
    plan = [(f"{i:06d}|nim|x|0", rng.sample(range(4), 2), outcome(rng, 2)) for i in range(50)]

    def play(path: Path, stops: list[int]) -> dict[str, list[tuple[float | None, ...]]]:
        done = 0
        for stop in [*stops, len(plan)]:
            with Store.open(path, create=True) as s:  # a new writer each time, as after a kill
                league = s.ensure_league("L", {})
                ids = [s.upsert_bot(league.id, f"b{i}", origin="config", spec="random")[0].id for i in range(4)]
                ledger.rate_pending(s, league.id, before=plan[done][0] if done < len(plan) else None)
                for n in range(done, stop):
                    key, seats, returns = plan[n]
                    store_game(s, league.id, key, "nim", 0, [ids[b] for b in seats], record(returns))
                    ledger.rate_pending(s, league.id, before=plan[n + 1][0] if n + 1 < len(plan) else None)
                done = stop
        with Store.open(path) as s:
            assert_equals_fold(s, 1)
            return stored_history(s, 1)

    assert play(tmp_path / "a.sqlite", [13, 14, 40]) == play(tmp_path / "b.sqlite", [])


def test_a_bot_entered_late_is_rated_provisionally_then_recomputed_once(store: Store,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    league = store.ensure_league("L", {})
    ids = [store.upsert_bot(league.id, f"b{i}", origin="config", spec="random")[0].id for i in range(4)]
    rng = random.Random(2)
    results: dict[str, list[float]] = {}

    def play(fixtures: list, window: int) -> list[int]:
        """Stores fixtures as a runner with ``window`` games in flight would, rating after each; returns the
        number of provisional games after each."""
        todo = list(fixtures)
        pending: list = []
        provisional = []
        while todo or pending:
            while todo and len(pending) < window:
                pending.append(todo.pop(0))
            f = pending.pop(rng.randrange(len(pending)))  # any game in flight may finish first
            results[f.key] = outcome(rng, 2)
            store_game(store, league.id, f.key, f.game, f.round, f.seats, record(results[f.key]))
            outstanding = [p.key for p in pending] + [t.key for t in todo]
            ledger.rate_pending(store, league.id, before=min(outstanding) if outstanding else None)
            provisional.append(store.count_provisional(league.id))
        ledger.rate_pending(store, league.id)
        return provisional

    old = league_schedule([("nim", 2)], {"nim": ids[:3]}, 6, 7)  # three bots, three rounds, rated in order
    assert max(play(old, 2)) == 0
    assert_equals_fold(store, league.id)

    recomputes = []
    original = rating_fold.recompute

    def counting(s: Store, *args: object) -> int:
        recomputes.append(args)
        return original(s, *args)

    monkeypatch.setattr(rating_fold, "recompute", counting)
    # b3 enters: its games sort into every round, before the rated round-2 games; plus a new round 3
    after = league_schedule([("nim", 2)], {"nim": ids}, 8, 7)
    new = [f for f in after if f.key not in {o.key for o in old}]
    assert new[0].key < old[-1].key
    provisional = play(new, 3)
    assert max(provisional) > 0  # rated as they came, marked provisional, while earlier games were outstanding
    assert len(recomputes) == 1  # one schedule-order recomputation for the whole entry, not one per game
    assert_equals_fold(store, league.id)
    assert store.ratings(league.id)[ids[3]].games == sum(ids[3] in f.seats for f in new)


def test_a_schema_1_store_is_read_as_it_is_and_migrated_by_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(V1_SCHEMA)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute("INSERT INTO leagues (id, name, config, created, updated) VALUES (1, 'old', '{}', 0, 0)")
    for b in (1, 2, 3):
        conn.execute("INSERT INTO bots (id, league_id, name, version, kind, spec, content_hash, origin, created) "
                     "VALUES (?, 1, ?, 1, 'builtin', 'random', 'h', 'config', 0)", (b, f"b{b}"))
    rng = random.Random(9)
    games = []
    for i in range(30):
        seats, returns = rng.sample([1, 2, 3], 2), outcome(rng, 2)
        games.append(RatedGame(f"{i:06d}|nim|x|0", "nim", seats, returns, ["normal", "normal"]))
        conn.execute(
            "INSERT INTO games (id, league_id, schedule_key, base_game, game, round, seed, seats, players, history, "
            "returns, terminations, move_seats, wall_times, cpu_times, failures, duration, info, rated, finished) "
            "VALUES (?, 1, ?, 'nim', 'nim', 0, 1, ?, '[\"a\",\"b\"]', '[]', ?, '[\"normal\",\"normal\"]', '[]', "
            "'[]', '[]', '[]', 0.1, '{}', ?, 0)",
            (i + 1, games[-1].key, json.dumps(seats), json.dumps(returns), int(i < 25)))  # the last 5 unrated
        for seat, bot in enumerate(seats):
            conn.execute("INSERT INTO game_seats VALUES (?, ?, ?, ?, 'win', 'normal')",
                         (i + 1, seat, bot, returns[seat]))
    v1 = Rater().apply_all(games[:25])
    for (scope, bot), r in v1.table.items():
        conn.execute("INSERT INTO ratings VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, 0, 0)",
                     (scope, bot, r.mu, r.sigma, r.games, r.wins, r.draws, r.losses))
    conn.commit()
    conn.close()

    with Store.open(path, readonly=True) as old:  # a viewer reads it as it is
        assert old.schema_version == 1 and not old.has_history
        assert old.ratings(1)[2].mu == v1.table[(ALL, 2)].mu
        assert len(old.games(1)) == 30
    with pytest.raises(StoreError, match="a schema 1 store with rated games"):  # the history is the writer's
        Store.open(path)
    with ledger.open_store(path) as s:  # a writer migrates it, refolding the history
        assert s.schema_version == SCHEMA_VERSION and s.has_history
        assert s.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
        assert {g.schedule_key: g.rated for g in s.games(1)} == {g.key: i < 25 for i, g in enumerate(games)}
        rater, expected = folded_history(games[:25])
        history = stored_history(s, 1)
        assert {k: history[k] for k in expected} == expected
        assert all(history[g.key] == [(None,) * 4] * 2 for g in games[25:])  # unrated: no history yet
        assert {b: r.mu for b, r in s.ratings(1).items()} == {b: rater.table[(ALL, b)].mu for b in (1, 2, 3)}
        assert ledger.rate_pending(s, 1) == 5
        assert_equals_fold(s, 1)
    with Store.open(path) as again:  # opening a v2 store migrates nothing
        assert again.schema_version == SCHEMA_VERSION


def test_provisional_games_are_recomputed_even_when_nothing_new_is_left_to_rate(store: Store) -> None:
    league = store.ensure_league("L", {})
    ids = [store.upsert_bot(league.id, f"b{i}", origin="config", spec="random")[0].id for i in range(3)]
    rng = random.Random(4)
    for r in range(3):  # rated in order up to round 2
        store_game(store, league.id, f"{r:06d}|nim|a|0", "nim", r, ids[:2], record(outcome(rng, 2)))
    ledger.rate_pending(store, league.id)
    # round-0 games of b2 arrive while a round-1 fixture (later skipped: never stored) is outstanding
    for i in range(2):
        store_game(store, league.id, f"000000|nim|b{i}|0", "nim", 0, [ids[i], ids[2]], record(outcome(rng, 2)))
        ledger.rate_pending(store, league.id, before="000001|nim|skipped|0")
    assert store.count_provisional(league.id) == 2
    assert ledger.rate_pending(store, league.id) == 0  # nothing new, but the provisional games are made exact
    assert_equals_fold(store, league.id)
