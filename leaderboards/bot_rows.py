"""A league's bots: their versions (a changed spec or snapshot is a new one), snapshots, statuses and runs of
failures (bound onto :class:`leaderboards.store.Store`: ``store.upsert_bot(...)``). What a failed game means for a
bot (probation) is the writer's, in :mod:`leaderboards.ledger`."""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from arena import snapshot as snapshots
from arena.comp424_names import listed_as
from arena.results.records import Failure
from arena.snapshot import Snapshot
from leaderboards.schema import BOT_COLUMNS, Bot, Connected, load_failures, transaction


def content_hash(text: str) -> str:
    """sha256 of a bot's source (or spec): a changed file is a new version."""
    return hashlib.sha256(text.encode()).hexdigest()


def bots(store: Connected, league_id: int, *, include_retired: bool = True, source: bool = True) -> list[Bot]:
    """A league's bots in id order; ``source=False`` leaves each file bot's entry text out (None): lists that
    do not show it read no more than a row per version, however big the files."""
    columns = BOT_COLUMNS if source else BOT_COLUMNS.replace("source", "NULL AS source")
    sql = (f"SELECT {columns} FROM bots WHERE league_id=?"
           + ("" if include_retired else " AND status != 'retired'"))
    return [_bot(r) for r in store.conn.execute(sql + " ORDER BY id", (league_id,))]


def bot(store: Connected, bot_id: int) -> Bot:
    row = store.conn.execute(f"SELECT {BOT_COLUMNS} FROM bots WHERE id=?", (bot_id,)).fetchone()
    if row is None:
        raise KeyError(bot_id)
    return _bot(row)


def current_bot(store: Connected, league_id: int, name: str) -> Bot | None:
    """The newest version of a bot by name."""
    row = store.conn.execute(f"SELECT {BOT_COLUMNS} FROM bots WHERE league_id=? AND name=? ORDER BY version DESC "
                             "LIMIT 1", (league_id, name)).fetchone()
    return _bot(row) if row else None


def upsert_bot(store: Connected, league_id: int, name: str, *, origin: str, spec: str | None = None,
               filename: str | None = None, source: str | None = None, games: Sequence[str] | None = None,
               trusted: bool = False, reactivate: bool = False, snapshot: Snapshot | None = None) -> tuple[Bot, bool]:
    """Enters a bot, or finds it unchanged. A different spec or snapshot makes a new version (the old one is
    retired). ``reactivate`` lifts probation of an unchanged bot (a resubmission).

    A file bot is its ``snapshot`` (``filename`` + ``source`` is shorthand for a one-file bot): the store keeps
    the whole snapshot, its digest as ``content_hash``, and its entry file as ``filename``/``source``.

    Returns:
        (the current version, whether a new version was created)
    """
    conn = store.conn
    kind = "builtin" if spec is not None else "file"
    blob = None
    if spec is None:
        snapshot = snapshot or snapshots.single(filename or "bot.py", source or "")
        filename, source, blob = listed_as(snapshot), snapshot.entry_text(), snapshots.pack(snapshot)
    digest = content_hash(spec) if spec is not None else snapshot.digest  # type: ignore[union-attr]
    games_json = None if games is None else json.dumps(list(games))
    with transaction(conn):
        row = conn.execute(f"SELECT {BOT_COLUMNS} FROM bots WHERE league_id=? AND name=? ORDER BY version DESC "
                           "LIMIT 1", (league_id, name)).fetchone()
        if row is not None and row["content_hash"] == digest and row["kind"] == kind:
            updates: dict[str, Any] = {"games": games_json, "trusted": int(trusted), "origin": origin,
                                       # a COMP424 agent stored before it was listed by name gets its name
                                       **({"filename": filename} if snapshot is not None
                                          and filename != snapshot.entry else {})}
            if row["status"] == "retired" or (reactivate and row["status"] == "probation"):
                updates.update(status="active", status_reason="", consecutive_failures=0)
                _restart_window(conn, row["id"])
            sets = ", ".join(f"{k}=?" for k in updates)
            conn.execute(f"UPDATE bots SET {sets} WHERE id=?", (*updates.values(), row["id"]))
            return bot(store, row["id"]), False
        version = 1 if row is None else row["version"] + 1
        if row is not None:
            conn.execute("UPDATE bots SET status='retired', status_reason=? WHERE league_id=? AND name=? "
                         "AND status != 'retired'", (f"replaced by version {version}", league_id, name))
        cur = conn.execute(
            "INSERT INTO bots (league_id, name, version, kind, spec, filename, source, content_hash, origin, "
            "games, trusted, created, snapshot, files_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (league_id, name, version, kind, spec, filename, source, digest, origin, games_json, int(trusted),
             time.time(), blob, None if snapshot is None else snapshots.files_digest(snapshot)))
        return bot(store, int(cur.lastrowid or 0)), True


def snapshot(store: Connected, bot_id: int) -> Snapshot:
    """A file bot's snapshot, checked against its digest.

    Raises:
        KeyError: no such bot; SnapshotError: the stored bytes do not match the digest.
    """
    cols = "filename, source, content_hash" + (", snapshot" if store.schema_version >= 4 else ", NULL")
    row = store.conn.execute(f"SELECT {cols} FROM bots WHERE id=? AND kind='file'", (bot_id,)).fetchone()
    if row is None:
        raise KeyError(bot_id)
    if row[3] is None:  # a read-only open of a store older than schema 4: a one-file bot
        return snapshots.single(row[0] or "bot.py", row[1] or "")
    return snapshots.unpack(bytes(row[3]), row[2])


def same_files(store: Connected, league_id: int) -> list[tuple[int, int]]:
    """(bot, twin) id pairs: each current (not retired) submitted bot with every file bot of another name
    (retired versions included) whose files have the same contents (``files_hash``, by its index: no snapshot
    is read)."""
    return [(a, b) for a, b in store.conn.execute(
        "SELECT a.id, b.id FROM bots a JOIN bots b ON b.league_id = a.league_id AND b.files_hash = a.files_hash "
        "AND b.name != a.name WHERE a.league_id=? AND a.origin='submit' AND a.status != 'retired' "
        "AND a.files_hash IS NOT NULL ORDER BY a.id, b.id", (league_id,))]


def bot_source(store: Connected, bot_id: int) -> str:
    """A file bot's entry text ('' for a built-in)."""
    row = store.conn.execute("SELECT source FROM bots WHERE id=?", (bot_id,)).fetchone()
    return (row[0] or "") if row else ""


def retire_bot(store: Connected, bot_id: int, reason: str) -> None:
    with transaction(store.conn):
        store.conn.execute("UPDATE bots SET status='retired', status_reason=? WHERE id=?", (reason, bot_id))


def set_probation(store: Connected, bot_id: int, reason: str, *, only_active: bool = False) -> None:
    """Puts a bot on probation (with ``only_active``: only an active one, not a retired one)."""
    with transaction(store.conn):
        store.conn.execute("UPDATE bots SET status='probation', status_reason=? WHERE id=?" +
                           (" AND status='active'" if only_active else ""), (reason, bot_id))


def end_failure_run(store: Connected, bot_id: int) -> None:
    """A bot's run of consecutive failed games is 0 again."""
    # (already 0, the usual case: the bots page is not rewritten, the commit writes less)
    store.conn.execute("UPDATE bots SET consecutive_failures=0 WHERE id=? AND consecutive_failures != 0", (bot_id,))


def add_failure(store: Connected, bot_id: int) -> int:
    """One more failed game in a row for a bot; returns the run's length."""
    return int(store.conn.execute("UPDATE bots SET consecutive_failures=consecutive_failures+1 WHERE id=? "
                                  "RETURNING consecutive_failures", (bot_id,)).fetchone()[0])


def release_bot(store: Connected, bot_id: int) -> bool:
    """Lifts a bot's probation as it is (``arena league release``): active again, its run of failures and its
    failure-rate window start afresh. Returns False when it was not on probation."""
    with transaction(store.conn):
        cur = store.conn.execute("UPDATE bots SET status='active', status_reason='', consecutive_failures=0 "
                                 "WHERE id=? AND status='probation'", (bot_id,))
        if cur.rowcount:
            _restart_window(store.conn, bot_id)
        return bool(cur.rowcount)


def latest_outcomes(store: Connected, bot_id: int, window: int) -> list[tuple[list[str], list[Failure], int]]:
    """(terminations, failures, the bot's seat) of a bot's latest ``window`` games, newest first, since its
    probation window restarted (what the failure-rate rule looks at)."""
    row = store.conn.execute("SELECT value FROM meta WHERE key=?", (f"probation_window_after:{bot_id}",)).fetchone()
    rows = store.conn.execute(
        "SELECT g.terminations, g.failures, s.seat FROM game_seats s JOIN games g ON g.id = s.game_id "
        "WHERE s.bot_id=? AND g.id > ? ORDER BY g.id DESC LIMIT ?", (bot_id, int(row[0]) if row else 0, window))
    return [(json.loads(t), load_failures(f), seat) for t, f, seat in rows]


def _restart_window(conn: sqlite3.Connection, bot_id: int) -> None:
    """The failure-rate window of a bot counts only games stored from now on (inside a transaction)."""
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, (SELECT COALESCE(MAX(id), 0) FROM games))",
                 (f"probation_window_after:{bot_id}",))


def _bot(row: sqlite3.Row) -> Bot:
    return Bot(row["id"], row["league_id"], row["name"], row["version"], row["kind"], row["spec"], row["filename"],
               row["source"], row["content_hash"], row["origin"],
               None if row["games"] is None else json.loads(row["games"]), bool(row["trusted"]), row["status"],
               row["status_reason"], row["consecutive_failures"], row["created"])
