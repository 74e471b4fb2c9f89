"""A store's leagues: each with its stored config and its secret chance key (bound onto
:class:`leaderboards.store.Store`: ``store.find_league(name)``)."""
from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from arena.chance import new_key
from arena.errors import ConfigError
from leaderboards.schema import DECISIONS_TABLE, Connected, League, transaction


def leagues(store: Connected) -> list[League]:
    return [_league(r) for r in store.conn.execute("SELECT * FROM leagues ORDER BY id")]


def league(store: Connected, name: str) -> League | None:
    row = store.conn.execute("SELECT * FROM leagues WHERE name=?", (name,)).fetchone()
    return _league(row) if row else None


def find_league(store: Connected, name: str | None) -> League:
    """The named league, or the only one when ``name`` is None.

    Raises:
        ConfigError: unknown name, or several leagues and no name (lists the names).
    """
    found = leagues(store)
    names = ", ".join(lg.name for lg in found) or "none"
    if name is None:
        if len(found) == 1:
            return found[0]
        raise ConfigError(f"{store.path} holds several leagues; pass --league NAME (leagues: {names})"
                          if found else f"{store.path} holds no league yet")
    named = league(store, name)
    if named is None:
        raise ConfigError(f"no league {name!r} in {store.path}; leagues: {names}")
    return named


def ensure_league(store: Connected, name: str, config: dict[str, Any]) -> League:
    """Creates the league (with its secret chance key), or updates its stored config."""
    now = time.time()
    with transaction(store.conn):
        store.conn.execute(
            "INSERT INTO leagues (name, config, created, updated, chance_key) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET config=excluded.config, updated=excluded.updated",
            (name, json.dumps(config, sort_keys=True), now, now, new_key()))
    made = league(store, name)
    assert made is not None
    return made


def chance_key(store: Connected, league_id: int) -> bytes | None:
    """The league's secret chance key: it keys every game's chance and bot seeds (:mod:`arena.chance`) and
    never reaches a bot. None only in a read-only open of a store older than schema 3."""
    if store.schema_version < 3:
        return None
    row = store.conn.execute("SELECT chance_key FROM leagues WHERE id=?", (league_id,)).fetchone()
    return None if row is None or row[0] is None else bytes(row[0])


def delete_league(store: Connected, name: str) -> bool:
    """Removes a league with its bots, games and ratings. Returns whether it existed."""
    found = league(store, name)
    if found is None:
        return False
    conn = store.conn
    with transaction(conn):
        conn.execute("DELETE FROM game_seats WHERE game_id IN (SELECT id FROM games WHERE league_id=?)", (found.id,))
        for table in ("ratings", "games", "bots"):
            conn.execute(f"DELETE FROM {table} WHERE league_id=?", (found.id,))
        conn.execute(DECISIONS_TABLE)  # (so that its rows referencing the league go too)
        conn.execute("DELETE FROM schedule_decisions WHERE league_id=?", (found.id,))
        conn.execute("DELETE FROM leagues WHERE id=?", (found.id,))
    return True


def _league(row: sqlite3.Row) -> League:
    return League(row["id"], row["name"], json.loads(row["config"]), row["created"], row["updated"])
