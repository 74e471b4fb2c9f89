"""Read-only queries the dashboard needs beyond :class:`leaderboards.store.Store`'s public API.

Every function takes an open :class:`~leaderboards.store.Store` and only reads (SELECT and PRAGMA
data_version); writing stays the store's job. They select only the columns they need, so a dashboard
polling a store of 100,000 games never loads histories it does not draw.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from leaderboards.ratings import ALL, RatedGame
from leaderboards.store import Store


def change_token(store: Store) -> int:
    """``PRAGMA data_version``: changes whenever another connection commits to the store. Comparing it between
    polls costs no table access, so an idle dashboard does not read the store at all."""
    return int(store.conn.execute("PRAGMA data_version").fetchone()[0])


@dataclass(frozen=True)
class GameSummary:
    """One row of the recent-games list (no history)."""

    id: int
    base_game: str
    game: str
    seats: list[int]
    """Bot id per seat."""
    players: list[str]
    returns: list[float]
    terminations: list[str]
    moves: int
    """Decisions taken (chance outcomes excluded)."""
    duration: float


def recent_games(store: Store, league_id: int, scope: str = ALL, limit: int = 200) -> list[GameSummary]:
    """The newest games of a league (all games, or one game spec when ``scope`` is not ``*``), newest first."""
    # "+league_id" keeps SQLite off the (league_id, rated, schedule_key) index: walking the rowids backwards
    # stops after `limit` rows, where the index would sort every game of the league first (60 ms at 10k games)
    sql = ("SELECT id, base_game, game, seats, players, returns, terminations, json_array_length(move_seats), "
           "duration FROM games WHERE +league_id=?")
    args: list[Any] = [league_id]
    if scope != ALL:
        sql += " AND +base_game=?"
        args.append(scope)
    sql += " ORDER BY id DESC LIMIT ?"
    args.append(limit)
    return [GameSummary(r[0], r[1], r[2], json.loads(r[3]), json.loads(r[4]), json.loads(r[5]), json.loads(r[6]),
                        int(r[7] or 0), float(r[8])) for r in store.conn.execute(sql, args)]


def count_games(store: Store, league_id: int, scope: str = ALL) -> int:
    if scope == ALL:
        return store.count_games(league_id)
    return int(store.conn.execute("SELECT count(*) FROM games WHERE league_id=? AND base_game=?",
                                  (league_id, scope)).fetchone()[0])


def count_rated(store: Store, league_id: int, up_to_key: str | None = None) -> int:
    """Rated games of a league (those with a schedule key <= ``up_to_key`` when given)."""
    sql = "SELECT count(*) FROM games WHERE league_id=? AND rated=1"
    args: list[Any] = [league_id]
    if up_to_key is not None:
        sql += " AND schedule_key <= ?"
        args.append(up_to_key)
    return int(store.conn.execute(sql, args).fetchone()[0])


def rated_games(store: Store, league_id: int, after_key: str | None = None,
                limit: int | None = None) -> list[RatedGame]:
    """Rated games of a league in schedule order (the order ratings are computed in): those after
    ``after_key`` when given, at most ``limit`` of them."""
    sql = "SELECT schedule_key, base_game, seats, returns, terminations FROM games WHERE league_id=? AND rated=1"
    args: list[Any] = [league_id]
    if after_key is not None:
        sql += " AND schedule_key > ?"
        args.append(after_key)
    sql += " ORDER BY schedule_key"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return [RatedGame(r[0], r[1], json.loads(r[2]), json.loads(r[3]), json.loads(r[4]))
            for r in store.conn.execute(sql, args)]


@dataclass(frozen=True)
class BotMoves:
    """What a bot's detail view needs from one game."""

    id: int
    seats: list[int]
    move_seats: list[int]
    wall_times: list[float]
    failures: list[dict[str, Any]]
    info: dict[str, Any]


def bot_moves(store: Store, bot_id: int, limit: int = 500) -> list[BotMoves]:
    """Timing and failures of a bot's newest ``limit`` games, newest first."""
    rows = store.conn.execute(
        "SELECT id, seats, move_seats, wall_times, failures, info FROM games "
        "WHERE id IN (SELECT game_id FROM game_seats WHERE bot_id=?) ORDER BY id DESC LIMIT ?", (bot_id, limit))
    return [BotMoves(r[0], json.loads(r[1]), json.loads(r[2]), json.loads(r[3]), json.loads(r[4]), json.loads(r[5]))
            for r in rows]
