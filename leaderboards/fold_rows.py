"""The rating fold's reads and writes: which games are rated and in what order, the ratings after each seat, the
stored ratings (bound onto :class:`leaderboards.store.Store`). The fold's policy, what to read and write when, is
:mod:`leaderboards.rating_fold`'s, called by :mod:`leaderboards.ledger`."""
from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from leaderboards.ratings import BotRating, RatedGame
from leaderboards.schema import PROVISIONAL, RATED, RATING_FIELDS, UNRATED, Connected, load_failures


def rated_games(store: Connected, league_id: int, where: str = "", args: Sequence[Any] = ()
                ) -> Iterator[tuple[int, RatedGame]]:
    """(game id, what rating needs) of a league's games, in schedule order."""
    sql = (f"SELECT id, schedule_key, base_game, seats, returns, terminations, failures FROM games "
           f"WHERE league_id=? {where} ORDER BY schedule_key")
    for r in store.conn.execute(sql, (league_id, *args)):
        yield r[0], RatedGame(r[1], r[2], json.loads(r[3]), json.loads(r[4]), json.loads(r[5]), load_failures(r[6]))


def next_rating_seq(store: Connected, league_id: int) -> int:
    return int(store.conn.execute("SELECT coalesce(max(rating_seq), 0) + 1 FROM games WHERE league_id=?",
                                  (league_id,)).fetchone()[0])


def unrate_games(store: Connected, league_id: int) -> None:
    store.conn.execute(f"UPDATE games SET rated={UNRATED}, rating_seq=NULL WHERE league_id=? AND rated != "
                       f"{UNRATED}", (league_id,))


def delete_ratings(store: Connected, league_id: int) -> None:
    store.conn.execute("DELETE FROM ratings WHERE league_id=?", (league_id,))


def write_fold(store: Connected, history: list[tuple[float, float, float, float, int, int]],
               marks: list[tuple[int, int, int]]) -> None:
    """Each seat's ratings after its game ``(mu, sigma, game_mu, game_sigma, game id, seat)`` and each game's
    ``(rated status, rating_seq, game id)``."""
    store.conn.executemany("UPDATE game_seats SET mu=?, sigma=?, game_mu=?, game_sigma=? WHERE game_id=? AND seat=?",
                           history)
    store.conn.executemany("UPDATE games SET rated=?, rating_seq=? WHERE id=?", marks)


def write_ratings(store: Connected, league_id: int, ratings: Iterable[tuple[tuple[str, int], BotRating]]) -> None:
    """Stores ``((scope, bot id), rating)`` entries."""
    now = time.time()
    rows = [(league_id, scope, bot, *(getattr(r, f) for f in RATING_FIELDS), now) for (scope, bot), r in ratings]
    store.conn.executemany(
        f"INSERT OR REPLACE INTO ratings (league_id, scope, bot_id, {', '.join(RATING_FIELDS)}, updated) "
        f"VALUES ({', '.join('?' * (len(RATING_FIELDS) + 4))})", rows)


def stored_ratings(store: Connected, league_id: int, bots: Iterable[int], scopes: Iterable[str]
                   ) -> dict[tuple[str, int], BotRating]:
    """(scope, bot id) -> stored rating, for the given bots in the given scopes."""
    bots, scopes = list(bots), set(scopes)
    rows = store.conn.execute(f"SELECT * FROM ratings WHERE league_id=? AND bot_id IN ({','.join('?' * len(bots))})",
                              (league_id, *bots))
    return {(r["scope"], r["bot_id"]): BotRating.from_columns(r) for r in rows if r["scope"] in scopes}


def unrated_span(store: Connected, league_id: int, before: str | None) -> tuple[str | None, str | None, int]:
    """(lowest key, highest key, count) of the unrated games below ``before`` (all when None)."""
    bound, args = ("AND schedule_key < ?", [before]) if before is not None else ("", [])
    low, high, count = store.conn.execute(
        f"SELECT min(schedule_key), max(schedule_key), count(*) FROM games WHERE league_id=? "
        f"AND rated={UNRATED} {bound}", (league_id, *args)).fetchone()
    return low, high, int(count)


def has_provisional(store: Connected, league_id: int) -> bool:
    return store.conn.execute(f"SELECT 1 FROM games WHERE league_id=? AND rated={PROVISIONAL} LIMIT 1",
                              (league_id,)).fetchone() is not None


def top_rated_key(store: Connected, league_id: int) -> str | None:
    """The highest schedule key rated (in order or provisionally)."""
    # two indexed max() lookups (a "rated != 0" would scan the league)
    return max((k for (k,) in store.conn.execute(
        "SELECT max(schedule_key) FROM games WHERE league_id=? AND rated=? UNION ALL "
        "SELECT max(schedule_key) FROM games WHERE league_id=? AND rated=?",
        (league_id, RATED, league_id, PROVISIONAL)) if k is not None), default=None)
