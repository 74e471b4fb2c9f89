"""The results store: the only module that touches SQLite (schema: docs/store.md).

One file holds any number of leagues. WAL mode lets readers (``arena leaderboard``, ``arena tui``) read
while one writer (the league runner) stores results. Every finished game is committed as soon as the
runner reads it (with the rating fold it made due; games read together share a transaction), so a writer
killed at any moment (SIGKILL included) leaves a consistent store and loses no committed game.
``UNIQUE(league_id, schedule_key)`` makes it impossible to count a game twice. Since schema 2 every rated game also
stores, per seat, the
rating its bot had right after that game (the history the dashboard draws its trends from).

The store reads and writes rows; what a stored game means for a league (its bots' failure runs, probation, the
rating fold) is the writer's, in :mod:`leaderboards.ledger`.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from arena.adapters.comp424_names import listed_as
from arena.errors import ConfigError
from arena.referee.chance import new_key
from arena.results.outcome import seat_results
from arena.results.records import STORED_JSON, Failure, GameRecord, stored_json
from arena.submissions import snapshot as snapshots
from arena.submissions.snapshot import Snapshot
from leaderboards import schema, storefile
from leaderboards.ratings import ALL, BotRating, RatedGame
from leaderboards.schema import (
    BOT_COLUMNS,
    GAME_JSON,
    MIGRATE_1_TO_2,
    MIGRATE_2_TO_3,
    MIGRATE_3_TO_4,
    MIGRATE_4_TO_5,
    MIGRATE_5_TO_6,
    MIGRATE_6_TO_7,
    PROVISIONAL,
    RATED,
    RATING_FIELDS,
    SCHEMA,
    SCHEMA_VERSION,
    UNRATED,
    Bot,
    League,
    StoredGame,
    load_failures,
    script,
    transaction,
)
from leaderboards.store_views import StoreViews
from leaderboards.storefile import StoreError

DEFAULT_DB = "arena.sqlite"
__all__ = ["DEFAULT_DB", "PROVISIONAL", "RATED", "SCHEMA_VERSION", "UNRATED", "Bot", "League", "Store", "StoreError",
           "StoredGame", "content_hash"]

def content_hash(text: str) -> str:
    """sha256 of a bot's source (or spec): a changed file is a new version."""
    return hashlib.sha256(text.encode()).hexdigest()


_INSERT_GAME = (f"INSERT OR IGNORE INTO games (league_id, schedule_key, base_game, game, round, seed, seats, "
                f"{', '.join(STORED_JSON)}, duration, finished) VALUES ({', '.join('?' * (len(STORED_JSON) + 9))})")


class Store(StoreViews):
    """A connection to one store file. Use :meth:`open`; close it (or use it as a context manager)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, schema_version: int = SCHEMA_VERSION) -> None:
        self.conn = conn
        self.path = path
        self.schema_version = schema_version
        """The schema of the open file: below :data:`SCHEMA_VERSION` only for a read-only open of an old store
        (a writer migrates it on open)."""

    @property
    def has_history(self) -> bool:
        """Whether the store keeps the rating history (schema 2 and later)."""
        return self.schema_version >= 2

    # -- opening ---------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False, readonly: bool = False,
             rebuild_history: Callable[[Store, int], None] | None = None) -> Store:
        """Opens (and with ``create=True`` creates) a store.

        A writer upgrades an older store on open. Upgrading schema 1 refolds each league's rated games for their
        rating history: the writer's ``rebuild_history`` (:func:`leaderboards.ledger.rebuild_history`, which
        :func:`leaderboards.ledger.open_store` passes); without it a schema 1 store with rated games is refused.

        An existing file is first opened read-only and checked (:mod:`leaderboards.storefile`: a regular file with
        an SQLite header, ``PRAGMA quick_check``, the application id and schema version, a schema exactly as arena
        wrote it (no trigger, view or other object); for a writer also a writable file, ``-wal``/``-shm`` and
        folder); a writer reopens it only when it passes, so a damaged, foreign or read-only file is refused and
        never written.

        Raises:
            ConfigError: the file does not exist and ``create`` is false.
            StoreError: one line naming the file, what is wrong and what to do: damaged, read-only (file or
                folder), full disk, or written by a newer arena.
            NotAStoreError: (a StoreError and a ConfigError: exit status 2) not an arena store, or one whose schema
                is not exactly arena's.
        """
        path = Path(path)
        exists = path.exists()
        if not exists and not create:
            raise ConfigError(f"no store at {path}; run `arena league run CONFIG` or `arena demo` first, "
                              "or pass --db PATH")
        version: int | None = None
        if exists:
            storefile.preflight(path, write=not readonly)
            try:
                conn = storefile.connect_readonly(path)
            except sqlite3.Error as exc:
                raise StoreError(storefile.explain(exc, path)) from None
            try:
                version = storefile.check(conn, path)
                if version is None and readonly:
                    raise storefile.not_a_store(path, "no tables")
            except BaseException:
                conn.close()
                raise
            if not readonly:
                conn.close()  # checked: now the writer's connection
        try:
            if not readonly:
                path.absolute().parent.mkdir(parents=True, exist_ok=True)
                conn = storefile.connect_writer(path)
                conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a committed transaction survives the writer being killed (only a power
                # loss can lose the last transactions, never corrupt the file).
                conn.execute("PRAGMA synchronous=NORMAL")
                version = cls._schema_version(conn)  # (another writer may have created or migrated it meanwhile)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys=ON")
            if version is None:
                with transaction(conn):
                    script(conn, SCHEMA)
                    conn.execute(f"PRAGMA application_id={storefile.APPLICATION_ID}")
                    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                                 (str(SCHEMA_VERSION),))
                version = SCHEMA_VERSION
            elif version > SCHEMA_VERSION:
                conn.close()
                raise StoreError(storefile.newer(path, version))
            store = cls(conn, path, version)
            if version < SCHEMA_VERSION and not readonly:
                try:
                    store._migrate(rebuild_history)
                except BaseException:
                    conn.close()
                    raise
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(storefile.explain(exc, path)) from None
        return store

    def _migrate(self, rebuild_history: Callable[[Store, int], None] | None = None) -> None:
        """Up to the current schema in one transaction. 1 -> 2 adds the history columns, then ``rebuild_history``
        refolds every league's rated games (the same games, the same ratings) so that each of them gets its history;
        2 -> 3 gives every league a secret chance key (its games played before keep their public-seed chance)."""
        with transaction(self.conn):
            version = self._schema_version(self.conn) or SCHEMA_VERSION  # another writer may have migrated it
            if version == 1:
                script(self.conn, MIGRATE_1_TO_2)
                self.schema_version = version = 2
                rated = self.conn.execute(f"SELECT 1 FROM games WHERE rated != {UNRATED} LIMIT 1").fetchone()
                if rated is not None and rebuild_history is None:  # (raised inside: nothing is changed)
                    raise StoreError(f"{self.path}: a schema 1 store with rated games; its rating history is rebuilt "
                                     "by `arena league run` on it, once")
                for league in self.leagues():
                    if rebuild_history is not None:
                        rebuild_history(self, league.id)
            if version == 2:
                if not any(r["name"] == "chance_key" for r in self.conn.execute("PRAGMA table_info(leagues)")):
                    self.conn.execute(MIGRATE_2_TO_3)
                for (league_id,) in self.conn.execute("SELECT id FROM leagues WHERE chance_key IS NULL").fetchall():
                    self.conn.execute("UPDATE leagues SET chance_key=? WHERE id=?", (new_key(), league_id))
            if version <= 3:
                self._migrate_snapshots()
            if version <= 4:
                script(self.conn, MIGRATE_4_TO_5)
            if version <= 5:
                script(self.conn, MIGRATE_5_TO_6)
                self._fill_files_hashes()
            if version <= 6:
                script(self.conn, MIGRATE_6_TO_7)
            self.schema_version = SCHEMA_VERSION
            self.conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))

    def _migrate_snapshots(self) -> None:
        """3 -> 4: every file bot (a single file until now) gets its snapshot, and the snapshot's digest as its
        content_hash, so an unchanged league file stays the same version."""
        if not any(r["name"] == "snapshot" for r in self.conn.execute("PRAGMA table_info(bots)")):
            self.conn.execute(MIGRATE_3_TO_4)
        rows = self.conn.execute("SELECT id, filename, source FROM bots WHERE kind='file' AND snapshot IS NULL")
        for bot_id, filename, source in rows.fetchall():
            snap = snapshots.single(filename if (filename or "").endswith(".py") and "/" not in filename else "bot.py",
                                   source or "")
            self.conn.execute("UPDATE bots SET content_hash=?, snapshot=? WHERE id=?",
                              (snap.digest, snapshots.pack(snap), bot_id))

    def _fill_files_hashes(self) -> None:
        """5 -> 6: every file bot's and submission's files fingerprint, each snapshot read once."""
        for table in ("bots", "submissions"):
            rows = self.conn.execute(f"SELECT id, snapshot FROM {table} WHERE snapshot IS NOT NULL AND files_hash IS "
                                     "NULL").fetchall()
            for row_id, blob in rows:
                self.conn.execute(f"UPDATE {table} SET files_hash=? WHERE id=?",
                                  (snapshots.files_digest(snapshots.unpack(bytes(blob))), row_id))

    @staticmethod
    def _schema_version(conn: sqlite3.Connection) -> int | None:
        row = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if row is None:
            return None
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else None

    def another(self) -> Store:
        """A second writer connection to this (open, checked, current-schema) store, for another thread of the same
        process. Not :meth:`open`: its preflight reads the file with a plain open() and close(), and closing any
        descriptor of the file drops every POSIX lock this process holds on it (SQLite's own connections'
        included), after which another process can reset the WAL under them (stale reads, "malformed")."""
        conn = storefile.connect_writer(self.path)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys=ON")
        return type(self)(conn, self.path, self.schema_version)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:  # noqa: PYI034 - Store is not meant to be subclassed
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self.close()
        if isinstance(exc, sqlite3.Error):
            # every command uses the store in a with block: this is where any store failure gets its one line
            raise StoreError(storefile.explain(exc, self.path)) from exc

    # -- leagues ---------------------------------------------------------------------------------
    def leagues(self) -> list[League]:
        return [self._league(r) for r in self.conn.execute("SELECT * FROM leagues ORDER BY id")]

    def league(self, name: str) -> League | None:
        row = self.conn.execute("SELECT * FROM leagues WHERE name=?", (name,)).fetchone()
        return self._league(row) if row else None

    def find_league(self, name: str | None) -> League:
        """The named league, or the only one when ``name`` is None.

        Raises:
            ConfigError: unknown name, or several leagues and no name (lists the names).
        """
        leagues = self.leagues()
        names = ", ".join(lg.name for lg in leagues) or "none"
        if name is None:
            if len(leagues) == 1:
                return leagues[0]
            raise ConfigError(f"{self.path} holds several leagues; pass --league NAME (leagues: {names})"
                              if leagues else f"{self.path} holds no league yet")
        league = self.league(name)
        if league is None:
            raise ConfigError(f"no league {name!r} in {self.path}; leagues: {names}")
        return league

    def ensure_league(self, name: str, config: dict[str, Any]) -> League:
        """Creates the league (with its secret chance key), or updates its stored config."""
        now = time.time()
        with transaction(self.conn):
            self.conn.execute(
                "INSERT INTO leagues (name, config, created, updated, chance_key) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET config=excluded.config, updated=excluded.updated",
                (name, json.dumps(config, sort_keys=True), now, now, new_key()))
        league = self.league(name)
        assert league is not None
        return league

    def chance_key(self, league_id: int) -> bytes | None:
        """The league's secret chance key: it keys every game's chance and bot seeds (:mod:`arena.referee.chance`) and
        never reaches a bot. None only in a read-only open of a store older than schema 3."""
        if self.schema_version < 3:
            return None
        row = self.conn.execute("SELECT chance_key FROM leagues WHERE id=?", (league_id,)).fetchone()
        return None if row is None or row[0] is None else bytes(row[0])

    def delete_league(self, name: str) -> bool:
        """Removes a league with its bots, games and ratings. Returns whether it existed."""
        league = self.league(name)
        if league is None:
            return False
        with transaction(self.conn):
            self.conn.execute("DELETE FROM game_seats WHERE game_id IN (SELECT id FROM games WHERE league_id=?)",
                              (league.id,))
            for table in ("ratings", "games", "bots"):
                self.conn.execute(f"DELETE FROM {table} WHERE league_id=?", (league.id,))
            self.conn.execute(schema.DECISIONS_TABLE)  # (so that its rows referencing the league go too)
            self.conn.execute("DELETE FROM schedule_decisions WHERE league_id=?", (league.id,))
            self.conn.execute("DELETE FROM leagues WHERE id=?", (league.id,))
        return True

    @staticmethod
    def _league(row: sqlite3.Row) -> League:
        return League(row["id"], row["name"], json.loads(row["config"]), row["created"], row["updated"])

    # -- bots ------------------------------------------------------------------------------------
    def bots(self, league_id: int, *, include_retired: bool = True, source: bool = True) -> list[Bot]:
        """A league's bots in id order; ``source=False`` leaves each file bot's entry text out (None): lists that
        do not show it read no more than a row per version, however big the files."""
        columns = BOT_COLUMNS if source else BOT_COLUMNS.replace("source", "NULL AS source")
        sql = (f"SELECT {columns} FROM bots WHERE league_id=?"
               + ("" if include_retired else " AND status != 'retired'"))
        return [self._bot(r) for r in self.conn.execute(sql + " ORDER BY id", (league_id,))]

    def bot(self, bot_id: int) -> Bot:
        row = self.conn.execute(f"SELECT {BOT_COLUMNS} FROM bots WHERE id=?", (bot_id,)).fetchone()
        if row is None:
            raise KeyError(bot_id)
        return self._bot(row)

    def current_bot(self, league_id: int, name: str) -> Bot | None:
        """The newest version of a bot by name."""
        row = self.conn.execute(f"SELECT {BOT_COLUMNS} FROM bots WHERE league_id=? AND name=? ORDER BY version DESC "
                                "LIMIT 1",
                                (league_id, name)).fetchone()
        return self._bot(row) if row else None

    def upsert_bot(self, league_id: int, name: str, *, origin: str, spec: str | None = None,
                   filename: str | None = None, source: str | None = None, games: Sequence[str] | None = None,
                   trusted: bool = False, reactivate: bool = False,
                   snapshot: Snapshot | None = None) -> tuple[Bot, bool]:
        """Enters a bot, or finds it unchanged. A different spec or snapshot makes a new version (the old one is
        retired). ``reactivate`` lifts probation of an unchanged bot (a resubmission).

        A file bot is its ``snapshot`` (``filename`` + ``source`` is shorthand for a one-file bot): the store keeps
        the whole snapshot, its digest as ``content_hash``, and its entry file as ``filename``/``source``.

        Returns:
            (the current version, whether a new version was created)
        """
        kind = "builtin" if spec is not None else "file"
        blob = None
        if spec is None:
            snapshot = snapshot or snapshots.single(filename or "bot.py", source or "")
            filename, source, blob = listed_as(snapshot), snapshot.entry_text(), snapshots.pack(snapshot)
        digest = content_hash(spec) if spec is not None else snapshot.digest  # type: ignore[union-attr]
        games_json = None if games is None else json.dumps(list(games))
        with transaction(self.conn):
            row = self.conn.execute(f"SELECT {BOT_COLUMNS} FROM bots WHERE league_id=? AND name=? "
                                    "ORDER BY version DESC LIMIT 1",
                                    (league_id, name)).fetchone()
            if row is not None and row["content_hash"] == digest and row["kind"] == kind:
                updates: dict[str, Any] = {"games": games_json, "trusted": int(trusted), "origin": origin,
                                           # a COMP424 agent stored before it was listed by name gets its name
                                           **({"filename": filename} if snapshot is not None
                                              and filename != snapshot.entry else {})}
                if row["status"] == "retired" or (reactivate and row["status"] == "probation"):
                    updates.update(status="active", status_reason="", consecutive_failures=0)
                    self._restart_window(row["id"])
                sets = ", ".join(f"{k}=?" for k in updates)
                self.conn.execute(f"UPDATE bots SET {sets} WHERE id=?", (*updates.values(), row["id"]))
                return self.bot(row["id"]), False
            version = 1 if row is None else row["version"] + 1
            if row is not None:
                self.conn.execute("UPDATE bots SET status='retired', status_reason=? WHERE league_id=? AND name=? "
                                  "AND status != 'retired'", (f"replaced by version {version}", league_id, name))
            cur = self.conn.execute(
                "INSERT INTO bots (league_id, name, version, kind, spec, filename, source, content_hash, origin, "
                "games, trusted, created, snapshot, files_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (league_id, name, version, kind, spec, filename, source, digest, origin, games_json, int(trusted),
                 time.time(), blob, None if snapshot is None else snapshots.files_digest(snapshot)))
            return self.bot(int(cur.lastrowid or 0)), True

    def snapshot(self, bot_id: int) -> Snapshot:
        """A file bot's snapshot, checked against its digest.

        Raises:
            KeyError: no such bot; SnapshotError: the stored bytes do not match the digest.
        """
        cols = "filename, source, content_hash" + (", snapshot" if self.schema_version >= 4 else ", NULL")
        row = self.conn.execute(f"SELECT {cols} FROM bots WHERE id=? AND kind='file'", (bot_id,)).fetchone()
        if row is None:
            raise KeyError(bot_id)
        if row[3] is None:  # a read-only open of a store older than schema 4: a one-file bot
            return snapshots.single(row[0] or "bot.py", row[1] or "")
        return snapshots.unpack(bytes(row[3]), row[2])

    def same_files(self, league_id: int) -> list[tuple[int, int]]:
        """(bot, twin) id pairs: each current (not retired) submitted bot with every file bot of another name
        (retired versions included) whose files have the same contents (``files_hash``, by its index: no snapshot
        is read)."""
        return [(a, b) for a, b in self.conn.execute(
            "SELECT a.id, b.id FROM bots a JOIN bots b ON b.league_id = a.league_id AND b.files_hash = a.files_hash "
            "AND b.name != a.name WHERE a.league_id=? AND a.origin='submit' AND a.status != 'retired' "
            "AND a.files_hash IS NOT NULL ORDER BY a.id, b.id", (league_id,))]

    def bot_source(self, bot_id: int) -> str:
        """A file bot's entry text ('' for a built-in)."""
        row = self.conn.execute("SELECT source FROM bots WHERE id=?", (bot_id,)).fetchone()
        return (row[0] or "") if row else ""

    def retire_bot(self, bot_id: int, reason: str) -> None:
        with transaction(self.conn):
            self.conn.execute("UPDATE bots SET status='retired', status_reason=? WHERE id=?", (reason, bot_id))

    def set_probation(self, bot_id: int, reason: str, *, only_active: bool = False) -> None:
        """Puts a bot on probation (with ``only_active``: only an active one, not a retired one)."""
        with transaction(self.conn):
            self.conn.execute("UPDATE bots SET status='probation', status_reason=? WHERE id=?" +
                              (" AND status='active'" if only_active else ""), (reason, bot_id))

    def end_failure_run(self, bot_id: int) -> None:
        """A bot's run of consecutive failed games is 0 again."""
        # (already 0, the usual case: the bots page is not rewritten, the commit writes less)
        self.conn.execute("UPDATE bots SET consecutive_failures=0 WHERE id=? AND consecutive_failures != 0", (bot_id,))

    def add_failure(self, bot_id: int) -> int:
        """One more failed game in a row for a bot; returns the run's length."""
        return int(self.conn.execute("UPDATE bots SET consecutive_failures=consecutive_failures+1 WHERE id=? "
                                     "RETURNING consecutive_failures", (bot_id,)).fetchone()[0])

    def release_bot(self, bot_id: int) -> bool:
        """Lifts a bot's probation as it is (``arena league release``): active again, its run of failures and its
        failure-rate window start afresh. Returns False when it was not on probation."""
        with transaction(self.conn):
            cur = self.conn.execute("UPDATE bots SET status='active', status_reason='', consecutive_failures=0 "
                                    "WHERE id=? AND status='probation'", (bot_id,))
            if cur.rowcount:
                self._restart_window(bot_id)
            return bool(cur.rowcount)

    def _restart_window(self, bot_id: int) -> None:
        """The failure-rate window of a bot counts only games stored from now on (inside a transaction)."""
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, (SELECT COALESCE(MAX(id), 0) FROM "
                          "games))", (f"probation_window_after:{bot_id}",))

    def latest_outcomes(self, bot_id: int, window: int) -> list[tuple[list[str], list[Failure], int]]:
        """(terminations, failures, the bot's seat) of a bot's latest ``window`` games, newest first, since its
        probation window restarted (what the failure-rate rule looks at)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (f"probation_window_after:{bot_id}",)).fetchone()
        rows = self.conn.execute(
            "SELECT g.terminations, g.failures, s.seat FROM game_seats s JOIN games g ON g.id = s.game_id "
            "WHERE s.bot_id=? AND g.id > ? ORDER BY g.id DESC LIMIT ?", (bot_id, int(row[0]) if row else 0, window))
        return [(json.loads(t), load_failures(f), seat) for t, f, seat in rows]

    @staticmethod
    def _bot(row: sqlite3.Row) -> Bot:
        return Bot(row["id"], row["league_id"], row["name"], row["version"], row["kind"], row["spec"],
                   row["filename"], row["source"], row["content_hash"], row["origin"],
                   None if row["games"] is None else json.loads(row["games"]), bool(row["trusted"]),
                   row["status"], row["status_reason"], row["consecutive_failures"], row["created"])

    # -- games -----------------------------------------------------------------------------------
    def schedule_keys(self, league_id: int) -> set[str]:
        """The keys of every stored game of a league (what a resumed run skips)."""
        return {r[0] for r in self.conn.execute("SELECT schedule_key FROM games WHERE league_id=?", (league_id,))}

    def sorted_schedule_keys(self, league_id: int) -> Iterator[str]:
        """The stored keys of a league in key order, streamed from the unique index: a resumed 100,000-game
        league merges them with its schedule instead of holding a set of them all."""
        for (key,) in self.conn.execute("SELECT schedule_key FROM games WHERE league_id=? ORDER BY schedule_key",
                                        (league_id,)):
            yield key

    def insert_game(self, league_id: int, schedule_key: str, base_game: str, round_: int, seats: Sequence[int],
                    record: GameRecord, columns: Sequence[str] | None = None) -> int | None:
        """Stores one finished game's rows (``games`` and its ``game_seats``); what that means for the league (the
        bots' failure runs, probation, ratings) is the writer's (:func:`leaderboards.ledger.record_game`).
        ``columns``: the record's :func:`~arena.results.records.stored_json` text, as a league worker encoded it
        (None: encoded here).

        Returns:
            The new game id, or None when a game with this schedule key is already stored (never twice).
        """
        with transaction(self.conn):
            return self._insert_game(league_id, schedule_key, base_game, round_, seats, record, columns)

    def record_games(self, league_id: int, games: Iterable[tuple[str, str, int, Sequence[int], GameRecord]]) -> int:
        """Stores many finished games, each ``(schedule key, base game, round, seats, record)``, in one
        transaction: a bulk import (synthetic stores for benchmarks, copies), without the probation
        bookkeeping of :func:`leaderboards.ledger.record_game`. Keys already stored are skipped. Returns the games
        stored."""
        stored = 0
        with transaction(self.conn):
            for key, base_game, round_, seats, record in games:
                stored += self._insert_game(league_id, key, base_game, round_, seats, record) is not None
        return stored

    def _insert_game(self, league_id: int, schedule_key: str, base_game: str, round_: int, seats: Sequence[int],
                     record: GameRecord, columns: Sequence[str] | None = None) -> int | None:
        """The ``games`` row and its ``game_seats`` rows (inside a transaction); None if the key exists."""
        if columns is None:
            columns = stored_json(record.to_dict())  # the columns' JSON, in the record's one plain shape
        if len(columns) != len(STORED_JSON) or not all(isinstance(c, str) for c in columns):
            raise ValueError(f"a game's stored columns: {len(STORED_JSON)} JSON texts expected")
        returns = [float(x) for x in record.returns]
        terminations = [str(t) for t in record.terminations]
        cur = self.conn.execute(_INSERT_GAME, (league_id, schedule_key, base_game, record.game, round_,
                                               int(record.seed), json.dumps(list(seats)), *columns,
                                               float(record.duration), time.time()))
        if cur.rowcount == 0:
            return None
        game_id = int(cur.lastrowid or 0)
        self.conn.executemany(
            "INSERT INTO game_seats (game_id, seat, bot_id, score, result, termination) VALUES (?, ?, ?, ?, ?, ?)",
            [(game_id, seat, bot_id, returns[seat], result, terminations[seat])
             for (seat, bot_id), result in zip(enumerate(seats), seat_results(returns))])
        return game_id

    def checkpoint(self) -> None:
        """Moves the write-ahead log into the file and empties it (the file's size is then the store's)."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def backup(self, dest: str | os.PathLike[str]) -> None:
        """Copies the store (committed state, WAL included) to a new file, e.g. to measure on a copy."""
        target = sqlite3.connect(dest)
        try:
            self.conn.backup(target)
        finally:
            target.close()

    def game(self, game_id: int) -> StoredGame | None:
        row = self.conn.execute("SELECT * FROM games WHERE id=?", (game_id,)).fetchone()
        return self._game(row) if row else None

    def games(self, league_id: int, *, order: str = "schedule", limit: int | None = None,
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
        return [self._game(r) for r in self.conn.execute(sql, args)]

    def iter_games(self, league_id: int, *, bot_id: int | None = None) -> Iterator[StoredGame]:
        """A league's games (or one bot version's) in id order, read one at a time (exports of 100,000 games)."""
        sql = "SELECT * FROM games WHERE league_id=?"
        args: list[Any] = [league_id]
        if bot_id is not None:
            sql += " AND id IN (SELECT game_id FROM game_seats WHERE bot_id=?)"
            args.append(bot_id)
        for row in self.conn.execute(sql + " ORDER BY id", args):
            yield self._game(row)

    @staticmethod
    def _game(row: sqlite3.Row) -> StoredGame:
        data = {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row iterates values
        for key in GAME_JSON:
            data[key] = json.loads(data[key])
        data["failures"] = load_failures(data["failures"])
        data["rated"] = bool(data["rated"])
        return StoredGame(**data)

    # -- ratings ---------------------------------------------------------------------------------
    def ratings(self, league_id: int, scope: str = ALL) -> dict[int, BotRating]:
        """Stored ratings of a league: bot id -> rating (``scope`` is ``*`` or one game spec)."""
        rows = self.conn.execute("SELECT * FROM ratings WHERE league_id=? AND scope=?", (league_id, scope))
        return {r["bot_id"]: BotRating.from_columns(r) for r in rows}

    def scopes(self, league_id: int) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT scope FROM ratings WHERE league_id=? ORDER BY scope",
                                                (league_id,))]

    def rated_games(self, league_id: int, where: str = "", args: Sequence[Any] = ()) -> Iterator[tuple[int, RatedGame]]:
        """(game id, what rating needs) of a league's games, in schedule order."""
        sql = (f"SELECT id, schedule_key, base_game, seats, returns, terminations, failures FROM games "
               f"WHERE league_id=? {where} ORDER BY schedule_key")
        for r in self.conn.execute(sql, (league_id, *args)):
            yield r[0], RatedGame(r[1], r[2], json.loads(r[3]), json.loads(r[4]), json.loads(r[5]),
                                  load_failures(r[6]))

    def transaction(self) -> transaction:
        """``with store.transaction():`` several writes commit together (nested uses join the outer one)."""
        return transaction(self.conn)

    # -- the rating fold's reads and writes (the policy: leaderboards/rating_fold.py, called by leaderboards/ledger.py)
    def next_rating_seq(self, league_id: int) -> int:
        return int(self.conn.execute("SELECT coalesce(max(rating_seq), 0) + 1 FROM games WHERE league_id=?",
                                     (league_id,)).fetchone()[0])

    def unrate_games(self, league_id: int) -> None:
        self.conn.execute(f"UPDATE games SET rated={UNRATED}, rating_seq=NULL WHERE league_id=? AND rated != "
                          f"{UNRATED}", (league_id,))

    def delete_ratings(self, league_id: int) -> None:
        self.conn.execute("DELETE FROM ratings WHERE league_id=?", (league_id,))

    def write_fold(self, history: list[tuple[float, float, float, float, int, int]],
                   marks: list[tuple[int, int, int]]) -> None:
        """Each seat's ratings after its game ``(mu, sigma, game_mu, game_sigma, game id, seat)`` and each game's
        ``(rated status, rating_seq, game id)``."""
        self.conn.executemany("UPDATE game_seats SET mu=?, sigma=?, game_mu=?, game_sigma=? WHERE game_id=? AND seat=?",
                              history)
        self.conn.executemany("UPDATE games SET rated=?, rating_seq=? WHERE id=?", marks)

    def write_ratings(self, league_id: int, ratings: Iterable[tuple[tuple[str, int], BotRating]]) -> None:
        """Stores ``((scope, bot id), rating)`` entries."""
        now = time.time()
        rows = [(league_id, scope, bot, *(getattr(r, f) for f in RATING_FIELDS), now) for (scope, bot), r in ratings]
        self.conn.executemany(
            f"INSERT OR REPLACE INTO ratings (league_id, scope, bot_id, {', '.join(RATING_FIELDS)}, updated) "
            f"VALUES ({', '.join('?' * (len(RATING_FIELDS) + 4))})", rows)

    def stored_ratings(self, league_id: int, bots: Iterable[int], scopes: Iterable[str]
                       ) -> dict[tuple[str, int], BotRating]:
        """(scope, bot id) -> stored rating, for the given bots in the given scopes."""
        bots, scopes = list(bots), set(scopes)
        rows = self.conn.execute(f"SELECT * FROM ratings WHERE league_id=? AND bot_id IN ({','.join('?' * len(bots))})",
                                 (league_id, *bots))
        return {(r["scope"], r["bot_id"]): BotRating.from_columns(r) for r in rows
                if r["scope"] in scopes}

    def unrated_span(self, league_id: int, before: str | None) -> tuple[str | None, str | None, int]:
        """(lowest key, highest key, count) of the unrated games below ``before`` (all when None)."""
        bound, args = ("AND schedule_key < ?", [before]) if before is not None else ("", [])
        low, high, count = self.conn.execute(
            f"SELECT min(schedule_key), max(schedule_key), count(*) FROM games WHERE league_id=? "
            f"AND rated={UNRATED} {bound}", (league_id, *args)).fetchone()
        return low, high, int(count)

    def has_provisional(self, league_id: int) -> bool:
        return self.conn.execute(f"SELECT 1 FROM games WHERE league_id=? AND rated={PROVISIONAL} LIMIT 1",
                                 (league_id,)).fetchone() is not None

    def top_rated_key(self, league_id: int) -> str | None:
        """The highest schedule key rated (in order or provisionally)."""
        # two indexed max() lookups (a "rated != 0" would scan the league)
        return max((k for (k,) in self.conn.execute(
            "SELECT max(schedule_key) FROM games WHERE league_id=? AND rated=? UNION ALL "
            "SELECT max(schedule_key) FROM games WHERE league_id=? AND rated=?",
            (league_id, RATED, league_id, PROVISIONAL)) if k is not None), default=None)

    # -- views -----------------------------------------------------------------------------------
    # The adaptive schedule's decisions: their table (schema.DECISIONS_TABLE) is made by the first one recorded.
    def record_decision(self, league_id: int, decision: dict[str, Any]) -> int:
        """Stores the next batch's decision (JSON) and returns its batch number (0, 1, ...)."""
        with transaction(self.conn):
            self.conn.execute(schema.DECISIONS_TABLE)
            batch = self.conn.execute("SELECT coalesce(max(batch) + 1, 0) FROM schedule_decisions WHERE league_id=?",
                                      (league_id,)).fetchone()[0]
            self.conn.execute("INSERT INTO schedule_decisions (league_id, batch, decision, created) "
                              "VALUES (?, ?, ?, ?)",
                              (league_id, batch, json.dumps(decision), time.time()))
        return int(batch)

    def decisions(self, league_id: int) -> list[dict[str, Any]]:
        """The adaptive schedule's recorded decisions, oldest first (empty when none was recorded)."""
        if self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='schedule_decisions'"
                             ).fetchone() is None:
            return []
        return [json.loads(r[0]) for r in self.conn.execute(
            "SELECT decision FROM schedule_decisions WHERE league_id=? ORDER BY batch", (league_id,))]
