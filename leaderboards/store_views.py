"""The store's read-only views: the aggregate reads of the leaderboard, the dashboard and the schedule, each
selecting only the columns it needs (a dashboard polling 100,000 games never loads a history it does not draw).

Functions over an open store, bound onto :class:`leaderboards.store.Store` as its methods (the SQL stays in the
store's modules): callers read them as ``store.recent_games(...)``.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

from arena.results.records import Failure
from leaderboards.ratings import ALL
from leaderboards.schema import PROVISIONAL, Connected, load_failures


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


class HistoryRow(NamedTuple):
    """One seat of one rated game: the bot's ratings right after it (a named tuple: 200,000 of them are
    read for a 100,000-game league)."""

    seq: int
    """The game's place in the fold (``games.rating_seq``)."""
    game: str
    """The game's scope (``base_game``)."""
    bot_id: int
    mu: float
    sigma: float
    game_mu: float
    game_sigma: float


@dataclass(frozen=True)
class BotMoves:
    """What a bot's detail view needs from one game."""

    id: int
    seats: list[int]
    move_seats: list[int]
    wall_times: list[float]
    failures: list[Failure]
    info: dict[str, Any]


def count_games(store: Connected, league_id: int, scope: str = ALL) -> int:
    """The games of a league (all, or of one game spec when ``scope`` is not ``*``)."""
    if scope == ALL:
        return int(store.conn.execute("SELECT count(*) FROM games WHERE league_id=?", (league_id,)).fetchone()[0])
    return int(store.conn.execute("SELECT count(*) FROM games WHERE league_id=? AND base_game=?",
                                 (league_id, scope)).fetchone()[0])


def standings_token(store: Connected, league_id: int) -> tuple[Any, ...]:
    """What a league's standings are made of, read cheaply (a count on an index, the small ratings and bots tables):
    its games, its stored ratings' last write, its bots' states. The same token, the same standings, so a page
    that made them may show them again. (Not ``PRAGMA data_version``: that one is per connection.)"""
    games = count_games(store, league_id)
    ratings = tuple(store.conn.execute("SELECT count(*), max(updated), total(games) FROM ratings WHERE league_id=?",
                                       (league_id,)).fetchone())
    bots = store.conn.execute("SELECT group_concat(id || ':' || status, ',') FROM bots WHERE league_id=?",
                              (league_id,)).fetchone()[0]
    return games, ratings, bots


def change_token(store: Connected) -> int:
    """``PRAGMA data_version``: changes whenever another connection commits to the store. Comparing it between
    polls costs no table access, so an idle dashboard does not read the store at all."""
    return int(store.conn.execute("PRAGMA data_version").fetchone()[0])


def recent_games(store: Connected, league_id: int, scope: str = ALL, limit: int = 200) -> list[GameSummary]:
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


def last_key(store: Connected, league_id: int) -> str | None:
    """The highest schedule key stored in a league (None when it has no game)."""
    row = store.conn.execute("SELECT max(schedule_key) FROM games WHERE league_id=?", (league_id,)).fetchone()
    return None if row[0] is None else str(row[0])


def head_to_head_since(store: Connected, league_id: int, scope: str, after_id: int) -> tuple[
        dict[tuple[int, int], tuple[int, int, int]], int]:
    """:meth:`head_to_head` counted over the games with an id above ``after_id`` only, and the newest
    game id of the league (``after_id`` when there is none newer). Games are only ever appended, so a
    reader can keep the counts and add each poll's new games instead of re-counting 100,000 games."""
    sql = ("SELECT a.bot_id, b.bot_id, sum(a.score > b.score), sum(a.score = b.score), sum(a.score < b.score) "
           "FROM game_seats a JOIN game_seats b ON a.game_id = b.game_id AND a.seat != b.seat "
           "JOIN games g ON g.id = a.game_id WHERE g.league_id=? AND g.id > ? AND a.bot_id != b.bot_id")
    args: list[Any] = [league_id, after_id]
    if scope != ALL:
        sql += " AND g.base_game=?"
        args.append(scope)
    counts = {(r[0], r[1]): (r[2], r[3], r[4])
              for r in store.conn.execute(sql + " GROUP BY a.bot_id, b.bot_id", args)}
    last = store.conn.execute("SELECT max(id) FROM games WHERE league_id=?", (league_id,)).fetchone()[0]
    return counts, max(after_id, int(last or 0))


def count_provisional(store: Connected, league_id: int) -> int:
    """Games rated out of schedule order while earlier ones are still being played (0 once the league is
    recomputed; always 0 for a schema 1 store)."""
    return int(store.conn.execute("SELECT count(*) FROM games WHERE league_id=? AND rated=?",
                                 (league_id, PROVISIONAL)).fetchone()[0])


def history_bounds(store: Connected, league_id: int) -> tuple[int | None, int | None]:
    """The first and last sequence number of the league's rating history (None, None when nothing is rated).

    Incremental rating only appends numbers above the last; a recomputation numbers every game anew above
    the old last, so a changed first number tells a reader that the history it holds was rewritten."""
    # two sub-queries: SQLite answers a lone min() or max() from the index without a scan
    row = store.conn.execute("SELECT (SELECT min(rating_seq) FROM games WHERE league_id=?), "
                            "(SELECT max(rating_seq) FROM games WHERE league_id=?)",
                            (league_id, league_id)).fetchone()
    return row[0], row[1]


@contextmanager
def read_transaction(store: Connected) -> Iterator[None]:
    """Several reads from one state of the store (WAL: a writer committing meanwhile is not seen)."""
    if store.conn.in_transaction:
        yield
        return
    store.conn.execute("BEGIN")
    try:
        yield
    finally:
        store.conn.execute("COMMIT")


def seq_after(store: Connected, league_id: int, after_seq: int, n: int) -> int | None:
    """The sequence number of the ``n``-th rated game after ``after_seq`` (None when fewer are left)."""
    row = store.conn.execute("SELECT rating_seq FROM games WHERE league_id=? AND rating_seq > ? ORDER BY rating_seq "
                            "LIMIT 1 OFFSET ?", (league_id, after_seq, n - 1)).fetchone()
    return None if row is None else int(row[0])


def rating_history(store: Connected, league_id: int, after_seq: int, up_to_seq: int) -> list[HistoryRow]:
    """The stored rating history of a league in fold order: every seat of the rated games numbered above
    ``after_seq`` and up to ``up_to_seq``. Reads only what trends need (no TrueSkill, no game records)."""
    sql = ("SELECT g.rating_seq, g.base_game, s.bot_id, s.mu, s.sigma, s.game_mu, s.game_sigma FROM games g "
           "JOIN game_seats s ON s.game_id = g.id WHERE g.league_id=? AND g.rating_seq > ? AND g.rating_seq <= ? "
           "AND s.mu IS NOT NULL ORDER BY g.rating_seq")
    return list(map(HistoryRow._make, store.conn.execute(sql, (league_id, after_seq, up_to_seq))))


def bot_moves(store: Connected, bot_id: int, limit: int = 500) -> list[BotMoves]:
    """Timing and failures of a bot's newest ``limit`` games, newest first."""
    rows = store.conn.execute(
        "SELECT id, seats, move_seats, wall_times, failures, info FROM games "
        "WHERE id IN (SELECT game_id FROM game_seats WHERE bot_id=?) ORDER BY id DESC LIMIT ?", (bot_id, limit))
    return [BotMoves(r[0], json.loads(r[1]), json.loads(r[2]), json.loads(r[3]), load_failures(r[4]),
                     json.loads(r[5])) for r in rows]


def head_to_head_of(store: Connected, bot_id: int) -> dict[tuple[int, int], tuple[int, int, int]]:
    """:meth:`head_to_head`'s counts of one bot against each opponent: read from that bot's own seats (its
    index), not the league's games."""
    sql = ("SELECT a.bot_id, b.bot_id, sum(a.score > b.score), sum(a.score = b.score), sum(a.score < b.score) "
           "FROM game_seats a JOIN game_seats b ON a.game_id = b.game_id AND a.seat != b.seat "
           "WHERE a.bot_id=? AND b.bot_id != a.bot_id GROUP BY b.bot_id")
    return {(r[0], r[1]): (r[2], r[3], r[4]) for r in store.conn.execute(sql, (bot_id,))}


def bot_history(store: Connected, bot_id: int, limit: int) -> list[tuple[float, float]]:
    """A bot's (mu, sigma) after each of its newest ``limit`` rated games, oldest first."""
    rows = store.conn.execute(
        "SELECT s.mu, s.sigma FROM game_seats s JOIN games g ON g.id = s.game_id WHERE s.bot_id=? AND "
        "s.mu IS NOT NULL ORDER BY g.rating_seq DESC LIMIT ?", (bot_id, limit)).fetchall()
    return [(r[0], r[1]) for r in reversed(rows)]


def outcomes(store: Connected, league_id: int, scope: str = ALL) -> list[tuple[str, list[int], list[float]]]:
    """(schedule key, bot id per seat, returns) of a league's games in schedule order: what the batch Elo fit
    (leaderboards/elo.py) and the adaptive schedule need (``scope``: ``*`` or one game spec)."""
    sql = "SELECT schedule_key, seats, returns FROM games WHERE league_id=?"
    args: list[Any] = [league_id]
    if scope != ALL:
        sql += " AND base_game=?"
        args.append(scope)
    loads = json.loads
    return [(r[0], loads(r[1]), loads(r[2])) for r in store.conn.execute(sql + " ORDER BY schedule_key", args)]


def keyed_outcomes(store: Connected, league_id: int) -> list[tuple[int, str, list[int], list[float]]]:
    """(game id, schedule key, bot id per seat, returns) of a league's games in schedule order: what a
    tournament's bracket is replayed from (:mod:`arena.tournament.progress`)."""
    loads = json.loads
    return [(r[0], r[1], loads(r[2]), loads(r[3])) for r in store.conn.execute(
        "SELECT id, schedule_key, seats, returns FROM games WHERE league_id=? ORDER BY schedule_key",
        (league_id,))]


def head_to_head(store: Connected, league_id: int, scope: str = ALL) -> dict[tuple[int, int], tuple[int, int, int]]:
    """(bot a, bot b) -> (games a won against b, draws, games a lost) over games where both sat.

    In multi-player games a "win against b" means a finished above b.
    """
    return head_to_head_since(store, league_id, scope, 0)[0]
