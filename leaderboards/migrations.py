"""The store's schema versions: creating a new store's tables and upgrading an older store to the current schema
(docs/store.md lists what each version added). :meth:`leaderboards.store.Store.open` calls these; nothing else does.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Callable

from arena.chance import new_key
from arena.snapshot import files_digest, pack, single, unpack
from leaderboards import storefile
from leaderboards.schema import (
    MIGRATE_1_TO_2,
    MIGRATE_2_TO_3,
    MIGRATE_3_TO_4,
    MIGRATE_4_TO_5,
    MIGRATE_5_TO_6,
    MIGRATE_6_TO_7,
    SCHEMA,
    SCHEMA_VERSION,
    UNRATED,
    Connected,
    script,
    transaction,
)
from leaderboards.storefile import StoreError


def schema_version(conn: sqlite3.Connection) -> int | None:
    """The schema version a store file says it has (None: no arena tables yet)."""
    row = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if row is None:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else None


def create(conn: sqlite3.Connection) -> None:
    """A new store's tables, application id and schema version, in one transaction."""
    with transaction(conn):
        script(conn, SCHEMA)
        conn.execute(f"PRAGMA application_id={storefile.APPLICATION_ID}")
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))


def migrate(store: Connected, rebuild_history: Callable[[int], None] | None = None) -> None:
    """Up to the current schema in one transaction. 1 -> 2 adds the history columns, then ``rebuild_history``
    (called with each league's id) refolds every league's rated games (the same games, the same ratings) so that
    each of them gets its history; 2 -> 3 gives every league a secret chance key (its games played before keep
    their public-seed chance)."""
    conn = store.conn
    with transaction(conn):
        version = schema_version(conn) or SCHEMA_VERSION  # another writer may have migrated it
        if version == 1:
            script(conn, MIGRATE_1_TO_2)
            store.schema_version = version = 2
            rated = conn.execute(f"SELECT 1 FROM games WHERE rated != {UNRATED} LIMIT 1").fetchone()
            if rated is not None and rebuild_history is None:  # (raised inside: nothing is changed)
                raise StoreError(f"{store.path}: a schema 1 store with rated games; its rating history is rebuilt "
                                 "by `arena league run` on it, once")
            for (league_id,) in conn.execute("SELECT id FROM leagues ORDER BY id").fetchall():
                if rebuild_history is not None:
                    rebuild_history(league_id)
        if version == 2:
            if not any(r["name"] == "chance_key" for r in conn.execute("PRAGMA table_info(leagues)")):
                conn.execute(MIGRATE_2_TO_3)
            for (league_id,) in conn.execute("SELECT id FROM leagues WHERE chance_key IS NULL").fetchall():
                conn.execute("UPDATE leagues SET chance_key=? WHERE id=?", (new_key(), league_id))
        if version <= 3:
            _snapshots(conn)
        if version <= 4:
            script(conn, MIGRATE_4_TO_5)
        if version <= 5:
            script(conn, MIGRATE_5_TO_6)
            _files_hashes(conn)
        if version <= 6:
            script(conn, MIGRATE_6_TO_7)
        store.schema_version = SCHEMA_VERSION
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))


def _snapshots(conn: sqlite3.Connection) -> None:
    """3 -> 4: every file bot (a single file until now) gets its snapshot, and the snapshot's digest as its
    content_hash, so an unchanged league file stays the same version."""
    if not any(r["name"] == "snapshot" for r in conn.execute("PRAGMA table_info(bots)")):
        conn.execute(MIGRATE_3_TO_4)
    rows = conn.execute("SELECT id, filename, source FROM bots WHERE kind='file' AND snapshot IS NULL")
    for bot_id, filename, source in rows.fetchall():
        snap = single(filename if (filename or "").endswith(".py") and "/" not in filename else "bot.py", source or "")
        conn.execute("UPDATE bots SET content_hash=?, snapshot=? WHERE id=?", (snap.digest, pack(snap), bot_id))


def _files_hashes(conn: sqlite3.Connection) -> None:
    """5 -> 6: every file bot's and submission's files fingerprint, each snapshot read once."""
    for table in ("bots", "submissions"):
        rows = conn.execute(f"SELECT id, snapshot FROM {table} WHERE snapshot IS NOT NULL AND files_hash IS "
                            "NULL").fetchall()
        for row_id, blob in rows:
            conn.execute(f"UPDATE {table} SET files_hash=? WHERE id=?", (files_digest(unpack(bytes(blob))), row_id))
