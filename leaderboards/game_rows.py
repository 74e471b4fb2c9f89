"""A league's stored games, each once (``UNIQUE(league_id, schedule_key)``), with a row per seat, and its stored
ratings (bound onto :class:`leaderboards.store.Store`: ``store.games(league_id)``). What a stored game means for a
league (failure runs, probation, the rating fold) is the writer's, in :mod:`leaderboards.ledger`."""
from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from arena.results.outcome import seat_results
from arena.results.records import STORED_JSON, GameRecord, stored_json
from leaderboards.ratings import ALL, BotRating
from leaderboards.schema import GAME_JSON, Connected, StoredGame, load_failures, transaction

_INSERT_GAME = (f"INSERT OR IGNORE INTO games (league_id, schedule_key, base_game, game, round, seed, seats, "
                f"{', '.join(STORED_JSON)}, duration, finished) VALUES ({', '.join('?' * (len(STORED_JSON) + 9))})")


def schedule_keys(store: Connected, league_id: int) -> set[str]:
    """The keys of every stored game of a league (what a resumed run skips)."""
    return {r[0] for r in store.conn.execute("SELECT schedule_key FROM games WHERE league_id=?", (league_id,))}


def sorted_schedule_keys(store: Connected, league_id: int) -> Iterator[str]:
    """The stored keys of a league in key order, streamed from the unique index: a resumed 100,000-game
    league merges them with its schedule instead of holding a set of them all."""
    for (key,) in store.conn.execute("SELECT schedule_key FROM games WHERE league_id=? ORDER BY schedule_key",
                                     (league_id,)):
        yield key


def insert_game(store: Connected, league_id: int, schedule_key: str, base_game: str, round_: int,
                seats: Sequence[int], record: GameRecord, columns: Sequence[str] | None = None) -> int | None:
    """Stores one finished game's rows (``games`` and its ``game_seats``); what that means for the league (the
    bots' failure runs, probation, ratings) is the writer's (:func:`leaderboards.ledger.record_game`).
    ``columns``: the record's :func:`~arena.results.records.stored_json` text, as a league worker encoded it
    (None: encoded here).

    Returns:
        The new game id, or None when a game with this schedule key is already stored (never twice).
    """
    with transaction(store.conn):
        return _insert_game(store.conn, league_id, schedule_key, base_game, round_, seats, record, columns)


def record_games(store: Connected, league_id: int,
                 games: Iterable[tuple[str, str, int, Sequence[int], GameRecord]]) -> int:
    """Stores many finished games, each ``(schedule key, base game, round, seats, record)``, in one
    transaction: a bulk import (synthetic stores for benchmarks, copies), without the probation
    bookkeeping of :func:`leaderboards.ledger.record_game`. Keys already stored are skipped. Returns the games
    stored."""
    stored = 0
    with transaction(store.conn):
        for key, base_game, round_, seats, record in games:
            stored += _insert_game(store.conn, league_id, key, base_game, round_, seats, record) is not None
    return stored


def _insert_game(conn: sqlite3.Connection, league_id: int, schedule_key: str, base_game: str, round_: int,
                 seats: Sequence[int], record: GameRecord, columns: Sequence[str] | None = None) -> int | None:
    """The ``games`` row and its ``game_seats`` rows (inside a transaction); None if the key exists."""
    if columns is None:
        columns = stored_json(record.to_dict())  # the columns' JSON, in the record's one plain shape
    if len(columns) != len(STORED_JSON) or not all(isinstance(c, str) for c in columns):
        raise ValueError(f"a game's stored columns: {len(STORED_JSON)} JSON texts expected")
    returns = [float(x) for x in record.returns]
    terminations = [str(t) for t in record.terminations]
    cur = conn.execute(_INSERT_GAME, (league_id, schedule_key, base_game, record.game, round_, int(record.seed),
                                      json.dumps(list(seats)), *columns, float(record.duration), time.time()))
    if cur.rowcount == 0:
        return None
    game_id = int(cur.lastrowid or 0)
    conn.executemany(
        "INSERT INTO game_seats (game_id, seat, bot_id, score, result, termination) VALUES (?, ?, ?, ?, ?, ?)",
        [(game_id, seat, bot_id, returns[seat], result, terminations[seat])
         for (seat, bot_id), result in zip(enumerate(seats), seat_results(returns))])
    return game_id


def game(store: Connected, game_id: int) -> StoredGame | None:
    row = store.conn.execute("SELECT * FROM games WHERE id=?", (game_id,)).fetchone()
    return _game(row) if row else None


def games(store: Connected, league_id: int, *, order: str = "schedule", limit: int | None = None,
          bot_id: int | None = None, before: int | None = None) -> list[StoredGame]:
    """A league's games, in schedule order (``order="schedule"``) or newest first (``order="recent"``); one bot
    version's only with ``bot_id``, found from its seats (not by reading the league's games); those with an id
    below ``before`` only, when given (the next page of a newest-first list)."""
    # ("+league_id": with a bot, SQLite would otherwise walk the league's index and test every game)
    sql = "SELECT * FROM games WHERE " + ("league_id=?" if bot_id is None else "+league_id=?")
    args: list[Any] = [league_id]
    if bot_id is not None:
        sql += " AND id IN (SELECT game_id FROM game_seats WHERE bot_id=?)"
        args.append(bot_id)
    if before is not None:
        sql += " AND id < ?"
        args.append(before)
    sql += " ORDER BY schedule_key" if order == "schedule" else " ORDER BY id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return [_game(r) for r in store.conn.execute(sql, args)]


def iter_games(store: Connected, league_id: int, *, bot_id: int | None = None) -> Iterator[StoredGame]:
    """A league's games (or one bot version's) in id order, read one at a time (exports of 100,000 games)."""
    sql = "SELECT * FROM games WHERE league_id=?"
    args: list[Any] = [league_id]
    if bot_id is not None:
        sql += " AND id IN (SELECT game_id FROM game_seats WHERE bot_id=?)"
        args.append(bot_id)
    for row in store.conn.execute(sql + " ORDER BY id", args):
        yield _game(row)


def _game(row: sqlite3.Row) -> StoredGame:
    data = {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row iterates values
    for key in GAME_JSON:
        data[key] = json.loads(data[key])
    data["failures"] = load_failures(data["failures"])
    data["rated"] = bool(data["rated"])
    return StoredGame(**data)


def ratings(store: Connected, league_id: int, scope: str = ALL) -> dict[int, BotRating]:
    """Stored ratings of a league: bot id -> rating (``scope`` is ``*`` or one game spec)."""
    rows = store.conn.execute("SELECT * FROM ratings WHERE league_id=? AND scope=?", (league_id, scope))
    return {r["bot_id"]: BotRating.from_columns(r) for r in rows}


def scopes(store: Connected, league_id: int) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT DISTINCT scope FROM ratings WHERE league_id=? ORDER BY scope",
                                             (league_id,))]
