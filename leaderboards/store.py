"""The results store: the only module that touches SQLite (schema: docs/store.md).

One file holds any number of leagues. WAL mode lets readers (``arena leaderboard``, ``arena tui``) read
while one writer (the league runner) stores results. Every finished game is committed in its own
transaction together with the rating updates it causes, so a writer killed at any moment (SIGKILL
included) leaves a consistent store and loses no finished game. ``UNIQUE(league_id, schedule_key)``
makes it impossible to count a game twice. Since schema 2 every rated game also stores, per seat, the
rating its bot had right after that game (the history the dashboard draws its trends from).
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.chance import new_key
from arena.errors import ConfigError
from arena.outcome import seat_results
from arena.snapshot import Snapshot
from leaderboards import storefile
from leaderboards.probation import ProbationRule
from leaderboards.ratings import ALL, BotRating, RatedGame, Rater, failure_reasons
from leaderboards.storefile import StoreError

SCHEMA_VERSION = 4
DEFAULT_DB = "arena.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS leagues (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    config TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL,
    updated REAL NOT NULL,
    chance_key BLOB
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
    snapshot BLOB,
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
    rating_seq INTEGER,
    UNIQUE (league_id, schedule_key)
);
CREATE INDEX IF NOT EXISTS games_league_rated ON games (league_id, rated, schedule_key);
CREATE INDEX IF NOT EXISTS games_league_seq ON games (league_id, rating_seq);
CREATE TABLE IF NOT EXISTS game_seats (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    score REAL NOT NULL,
    result TEXT NOT NULL CHECK (result IN ('win', 'draw', 'loss')),
    termination TEXT NOT NULL,
    mu REAL,
    sigma REAL,
    game_mu REAL,
    game_sigma REAL,
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
"""

# schema 1 -> 2: the rating history (the store is then recomputed so that every rated game has it)
_MIGRATE_1_TO_2 = """
ALTER TABLE games ADD COLUMN rating_seq INTEGER;
ALTER TABLE game_seats ADD COLUMN mu REAL;
ALTER TABLE game_seats ADD COLUMN sigma REAL;
ALTER TABLE game_seats ADD COLUMN game_mu REAL;
ALTER TABLE game_seats ADD COLUMN game_sigma REAL;
CREATE INDEX IF NOT EXISTS games_league_seq ON games (league_id, rating_seq);
"""

# schema 2 -> 3: each league's secret chance key (arena.chance); leagues that exist get a fresh one
_MIGRATE_2_TO_3 = "ALTER TABLE leagues ADD COLUMN chance_key BLOB"
# schema 3 -> 4: a file bot is a snapshot (arena.snapshot): its whole file tree, and its digest as content_hash
_MIGRATE_3_TO_4 = "ALTER TABLE bots ADD COLUMN snapshot BLOB"
_BOT_COLUMNS = ("id, league_id, name, version, kind, spec, filename, source, content_hash, origin, games, trusted, "
                "status, status_reason, consecutive_failures, created")
"""Every column of ``bots`` but the snapshot (loaded only by :meth:`Store.snapshot`, when a game needs it)."""

UNRATED, RATED, PROVISIONAL = 0, 1, 2
"""Values of ``games.rated``: not folded yet; folded in schedule order; folded out of schedule order while
earlier games were still being played (made exact by one recomputation once they are all in)."""
_FLUSH = 10_000
"""History rows written per executemany while folding (keeps a 100,000-game recomputation's memory flat)."""

_RATING_FIELDS = ("mu", "sigma", "games", "wins", "draws", "losses", "timeouts", "crashes", "illegal", "memory",
                  "protocol")




def content_hash(text: str) -> str:
    """sha256 of a bot's source (or spec): a changed file is a new version."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class League:
    id: int
    name: str
    config: dict[str, Any]
    created: float
    updated: float


@dataclass
class Bot:
    """One version of a bot in a league."""

    id: int
    league_id: int
    name: str
    version: int
    kind: str
    """``builtin`` (``spec`` set) or ``file`` (a snapshot: :meth:`Store.snapshot`; ``filename`` + ``source`` are its
    entry file)."""
    spec: str | None
    filename: str | None
    source: str | None
    content_hash: str
    origin: str
    """``config`` (listed in the league file) or ``submit`` (entered with ``arena submit``)."""
    games: list[str] | None
    """The game specs this bot plays (None: every game of the league)."""
    trusted: bool
    status: str
    """``active``, ``probation`` (skipped until resubmitted) or ``retired`` (replaced by a newer version or
    removed from the league file)."""
    status_reason: str
    consecutive_failures: int
    created: float

    @property
    def label(self) -> str:
        return self.name if self.version == 1 else f"{self.name}@v{self.version}"

    def plays(self, game: str) -> bool:
        return self.games is None or game in self.games


@dataclass
class StoredGame:
    """One stored game (a :class:`arena.records.GameRecord` plus its place in the league)."""

    id: int
    league_id: int
    schedule_key: str
    base_game: str
    game: str
    round: int
    seed: int
    seats: list[int]
    players: list[str]
    history: list[int]
    returns: list[float]
    terminations: list[str]
    move_seats: list[int]
    wall_times: list[float]
    cpu_times: list[float]
    failures: list[dict[str, Any]]
    duration: float
    info: dict[str, Any] = field(default_factory=dict)
    rated: bool = False
    finished: float = 0.0
    rating_seq: int | None = None
    """Its place in the fold that made the current ratings (None while unrated)."""


_GAME_JSON = ("seats", "players", "history", "returns", "terminations", "move_seats", "wall_times", "cpu_times",
              "failures", "info")


class Store:
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
    def open(cls, path: str | os.PathLike[str], *, create: bool = False, readonly: bool = False) -> Store:
        """Opens (and with ``create=True`` creates) a store.

        An existing file is first opened read-only and checked (:mod:`leaderboards.storefile`: a regular file with
        an SQLite header, ``PRAGMA quick_check``, the application id and schema version; for a writer also a
        writable file, ``-wal``/``-shm`` and folder); a writer reopens it only when it passes, so a damaged,
        foreign or read-only file is refused and never written.

        Raises:
            ConfigError: the file does not exist and ``create`` is false.
            StoreError: one line naming the file, what is wrong and what to do: not an arena store, damaged,
                read-only (file or folder), full disk, or written by a newer arena.
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
                    raise StoreError(f"{path} is not an arena store (no tables); pass --db with an arena store")
            except BaseException:
                conn.close()
                raise
            if not readonly:
                conn.close()  # checked: now the writer's connection
        try:
            if not readonly:
                path.absolute().parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(path, timeout=storefile.BUSY_TIMEOUT, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a committed transaction survives the writer being killed (only a power
                # loss can lose the last transactions, never corrupt the file).
                conn.execute("PRAGMA synchronous=NORMAL")
                version = cls._schema_version(conn)  # (another writer may have created or migrated it meanwhile)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys=ON")
            if version is None:
                with _transaction(conn):
                    _script(conn, _SCHEMA)
                    conn.execute(f"PRAGMA application_id={storefile.APPLICATION_ID}")
                    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                                 (str(SCHEMA_VERSION),))
                version = SCHEMA_VERSION
            elif version > SCHEMA_VERSION:
                conn.close()
                raise StoreError(f"{path} was written by a newer arena (schema {version}, this arena reads up to "
                                 f"{SCHEMA_VERSION}); upgrade arena")
            store = cls(conn, path, version)
            if version < SCHEMA_VERSION and not readonly:
                try:
                    store._migrate()
                except BaseException:
                    conn.close()
                    raise
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(storefile.explain(exc, path)) from None
        return store

    def _migrate(self) -> None:
        """Up to the current schema in one transaction. 1 -> 2 adds the history columns, then recomputes every
        league's rated games (the same games, the same ratings) so that each of them gets its history;
        2 -> 3 gives every league a secret chance key (its games played before keep their public-seed chance)."""
        with _transaction(self.conn):
            version = self._schema_version(self.conn) or SCHEMA_VERSION  # another writer may have migrated it
            if version == 1:
                _script(self.conn, _MIGRATE_1_TO_2)
                self.schema_version = version = 2
                for league in self.leagues():
                    self._recompute(league.id, f"AND rated != {UNRATED}")
            if version == 2:
                if not any(r["name"] == "chance_key" for r in self.conn.execute("PRAGMA table_info(leagues)")):
                    self.conn.execute(_MIGRATE_2_TO_3)
                for (league_id,) in self.conn.execute("SELECT id FROM leagues WHERE chance_key IS NULL").fetchall():
                    self.conn.execute("UPDATE leagues SET chance_key=? WHERE id=?", (new_key(), league_id))
            if version <= 3:
                self._migrate_snapshots()
            self.schema_version = SCHEMA_VERSION
            self.conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))

    def _migrate_snapshots(self) -> None:
        """3 -> 4: every file bot (a single file until now) gets its snapshot, and the snapshot's digest as its
        content_hash, so an unchanged league file stays the same version."""
        from arena import snapshot
        if not any(r["name"] == "snapshot" for r in self.conn.execute("PRAGMA table_info(bots)")):
            self.conn.execute(_MIGRATE_3_TO_4)
        rows = self.conn.execute("SELECT id, filename, source FROM bots WHERE kind='file' AND snapshot IS NULL")
        for bot_id, filename, source in rows.fetchall():
            snap = snapshot.single(filename if (filename or "").endswith(".py") and "/" not in filename else "bot.py",
                                   source or "")
            self.conn.execute("UPDATE bots SET content_hash=?, snapshot=? WHERE id=?",
                              (snap.digest, snapshot.pack(snap), bot_id))

    @staticmethod
    def _schema_version(conn: sqlite3.Connection) -> int | None:
        row = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if row is None:
            return None
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else None

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
        with _transaction(self.conn):
            self.conn.execute(
                "INSERT INTO leagues (name, config, created, updated, chance_key) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET config=excluded.config, updated=excluded.updated",
                (name, json.dumps(config, sort_keys=True), now, now, new_key()))
        league = self.league(name)
        assert league is not None
        return league

    def chance_key(self, league_id: int) -> bytes | None:
        """The league's secret chance key: it keys every game's chance and bot seeds (:mod:`arena.chance`) and
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
        with _transaction(self.conn):
            self.conn.execute("DELETE FROM game_seats WHERE game_id IN (SELECT id FROM games WHERE league_id=?)",
                              (league.id,))
            for table in ("ratings", "games", "bots"):
                self.conn.execute(f"DELETE FROM {table} WHERE league_id=?", (league.id,))
            self.conn.execute(self._DECISIONS)  # (so that its rows referencing the league go too)
            self.conn.execute("DELETE FROM schedule_decisions WHERE league_id=?", (league.id,))
            self.conn.execute("DELETE FROM leagues WHERE id=?", (league.id,))
        return True

    @staticmethod
    def _league(row: sqlite3.Row) -> League:
        return League(row["id"], row["name"], json.loads(row["config"]), row["created"], row["updated"])

    # -- bots ------------------------------------------------------------------------------------
    def bots(self, league_id: int, *, include_retired: bool = True) -> list[Bot]:
        sql = f"SELECT {_BOT_COLUMNS} FROM bots WHERE league_id=?" + ("" if include_retired else " AND status != 'retired'")
        return [self._bot(r) for r in self.conn.execute(sql + " ORDER BY id", (league_id,))]

    def bot(self, bot_id: int) -> Bot:
        row = self.conn.execute(f"SELECT {_BOT_COLUMNS} FROM bots WHERE id=?", (bot_id,)).fetchone()
        if row is None:
            raise KeyError(bot_id)
        return self._bot(row)

    def current_bot(self, league_id: int, name: str) -> Bot | None:
        """The newest version of a bot by name."""
        row = self.conn.execute(f"SELECT {_BOT_COLUMNS} FROM bots WHERE league_id=? AND name=? ORDER BY version DESC "
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
        from arena import snapshot as snapshots
        kind = "builtin" if spec is not None else "file"
        blob = None
        if spec is None:
            snapshot = snapshot or snapshots.single(filename or "bot.py", source or "")
            filename, source, blob = snapshot.entry, snapshot.entry_text(), snapshots.pack(snapshot)
        digest = content_hash(spec) if spec is not None else snapshot.digest  # type: ignore[union-attr]
        games_json = None if games is None else json.dumps(list(games))
        with _transaction(self.conn):
            row = self.conn.execute(f"SELECT {_BOT_COLUMNS} FROM bots WHERE league_id=? AND name=? "
                                    "ORDER BY version DESC LIMIT 1",
                                    (league_id, name)).fetchone()
            if row is not None and row["content_hash"] == digest and row["kind"] == kind:
                updates: dict[str, Any] = {"games": games_json, "trusted": int(trusted), "origin": origin}
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
                "games, trusted, created, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (league_id, name, version, kind, spec, filename, source, digest, origin, games_json, int(trusted),
                 time.time(), blob))
            return self.bot(int(cur.lastrowid or 0)), True

    def snapshot(self, bot_id: int) -> Snapshot:
        """A file bot's snapshot, checked against its digest.

        Raises:
            KeyError: no such bot; SnapshotError: the stored bytes do not match the digest.
        """
        from arena import snapshot as snapshots
        cols = "filename, source, content_hash" + (", snapshot" if self.schema_version >= 4 else ", NULL")
        row = self.conn.execute(f"SELECT {cols} FROM bots WHERE id=? AND kind='file'", (bot_id,)).fetchone()
        if row is None:
            raise KeyError(bot_id)
        if row[3] is None:  # a read-only open of a store older than schema 4: a one-file bot
            return snapshots.single(row[0] or "bot.py", row[1] or "")
        return snapshots.unpack(bytes(row[3]), row[2])

    def retire_bot(self, bot_id: int, reason: str) -> None:
        with _transaction(self.conn):
            self.conn.execute("UPDATE bots SET status='retired', status_reason=? WHERE id=?", (reason, bot_id))

    def set_probation(self, bot_id: int, reason: str) -> None:
        with _transaction(self.conn):
            self.conn.execute("UPDATE bots SET status='probation', status_reason=? WHERE id=?", (reason, bot_id))

    def release_bot(self, bot_id: int) -> bool:
        """Lifts a bot's probation as it is (``arena league release``): active again, its run of failures and its
        failure-rate window start afresh. Returns False when it was not on probation."""
        with _transaction(self.conn):
            cur = self.conn.execute("UPDATE bots SET status='active', status_reason='', consecutive_failures=0 "
                                    "WHERE id=? AND status='probation'", (bot_id,))
            if cur.rowcount:
                self._restart_window(bot_id)
            return bool(cur.rowcount)

    def _restart_window(self, bot_id: int) -> None:
        """The failure-rate window of a bot counts only games stored from now on (inside a transaction)."""
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, (SELECT COALESCE(MAX(id), 0) FROM "
                          "games))", (f"probation_window_after:{bot_id}",))

    def _recent_failures(self, bot_id: int, window: int) -> list[bool]:
        """Whether each of a bot's latest ``window`` games failed, newest first, since its window restarted."""
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (f"probation_window_after:{bot_id}",)).fetchone()
        rows = self.conn.execute(
            "SELECT g.terminations, g.failures, s.seat FROM game_seats s JOIN games g ON g.id = s.game_id "
            "WHERE s.bot_id=? AND g.id > ? ORDER BY g.id DESC LIMIT ?", (bot_id, int(row[0]) if row else 0, window))
        return [bool(failure_reasons(json.loads(t), json.loads(f), seat)) for t, f, seat in rows]

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

    def record_game(self, league_id: int, schedule_key: str, base_game: str, round_: int, seats: Sequence[int],
                    record: dict[str, Any], *, probation: ProbationRule | None = None,
                    probation_after: int | None = None) -> int | None:
        """Stores one finished game (a :meth:`arena.records.GameRecord.to_dict`) in one transaction.

        Also updates each bot's run of consecutive failures and puts a failing bot on probation by the league's
        ``probation`` rule (:mod:`leaderboards.probation`: a run of failures, or a failure rate over its recent
        games); ``probation_after`` alone is the run rule only.

        Returns:
            The new game id, or None when a game with this schedule key is already stored (never twice).
        """
        with _transaction(self.conn):
            inserted = self._insert_game(league_id, schedule_key, base_game, round_, seats, record)
            if inserted is None:
                return None
            game_id, terminations = inserted
            if probation is None and probation_after:
                probation = ProbationRule(after=probation_after, failures=0)
            for seat, bot_id in enumerate(seats):
                reasons = failure_reasons(terminations, record.get("failures", []), seat)
                if not reasons:
                    self.conn.execute("UPDATE bots SET consecutive_failures=0 WHERE id=?", (bot_id,))
                    continue
                run = self.conn.execute("UPDATE bots SET consecutive_failures=consecutive_failures+1 WHERE id=? "
                                        "RETURNING consecutive_failures", (bot_id,)).fetchone()[0]
                if probation is None or not probation.active:
                    continue
                # the window is read only after a failure: only then can the rate cross the line
                why = probation.reason(run, self._recent_failures(bot_id, probation.window) if probation.failures
                                       else [], reasons, game_id)
                if why:
                    self.conn.execute("UPDATE bots SET status='probation', status_reason=? WHERE id=? AND "
                                      "status='active'", (why, bot_id))
            return game_id

    def record_games(self, league_id: int,
                     games: Iterable[tuple[str, str, int, Sequence[int], dict[str, Any]]]) -> int:
        """Stores many finished games, each ``(schedule key, base game, round, seats, record)``, in one
        transaction: a bulk import (synthetic stores for benchmarks, copies), without the probation
        bookkeeping of :meth:`record_game`. Keys already stored are skipped. Returns the games stored."""
        stored = 0
        with _transaction(self.conn):
            for key, base_game, round_, seats, record in games:
                stored += self._insert_game(league_id, key, base_game, round_, seats, record) is not None
        return stored

    def _insert_game(self, league_id: int, schedule_key: str, base_game: str, round_: int, seats: Sequence[int],
                     record: dict[str, Any]) -> tuple[int, list[str]] | None:
        """The ``games`` row and its ``game_seats`` rows (inside a transaction); None if the key exists."""
        returns = [float(x) for x in record["returns"]]
        terminations = list(record["terminations"])
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO games (league_id, schedule_key, base_game, game, round, seed, seats, players, "
            "history, returns, terminations, move_seats, wall_times, cpu_times, failures, duration, info, "
            "finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (league_id, schedule_key, base_game, record["game"], round_, int(record["seed"]),
             json.dumps(list(seats)), json.dumps(record["players"]), json.dumps(record["history"]),
             json.dumps(returns), json.dumps(terminations), json.dumps(record.get("move_seats", [])),
             json.dumps(record.get("wall_times", [])), json.dumps(record.get("cpu_times", [])),
             json.dumps(record.get("failures", [])), float(record.get("duration", 0.0)),
             json.dumps(record.get("info", {})), time.time()))
        if cur.rowcount == 0:
            return None
        game_id = int(cur.lastrowid or 0)
        self.conn.executemany(
            "INSERT INTO game_seats (game_id, seat, bot_id, score, result, termination) VALUES (?, ?, ?, ?, ?, ?)",
            [(game_id, seat, bot_id, returns[seat], result, terminations[seat])
             for (seat, bot_id), result in zip(enumerate(seats), seat_results(returns))])
        return game_id, terminations

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
              bot_id: int | None = None) -> list[StoredGame]:
        """A league's games, in schedule order (``order="schedule"``) or newest first (``order="recent"``)."""
        sql = "SELECT * FROM games WHERE league_id=?"
        args: list[Any] = [league_id]
        if bot_id is not None:
            sql += " AND id IN (SELECT game_id FROM game_seats WHERE bot_id=?)"
            args.append(bot_id)
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

    def count_games(self, league_id: int) -> int:
        return int(self.conn.execute("SELECT count(*) FROM games WHERE league_id=?", (league_id,)).fetchone()[0])

    def tamper(self, game_id: int, **fields: Any) -> None:
        """Overwrites stored fields of a game (for tests of ``arena replay --verify``)."""
        sets = ", ".join(f"{k}=?" for k in fields)
        values = [json.dumps(v) if k in _GAME_JSON else v for k, v in fields.items()]
        with _transaction(self.conn):
            self.conn.execute(f"UPDATE games SET {sets} WHERE id=?", (*values, game_id))

    @staticmethod
    def _game(row: sqlite3.Row) -> StoredGame:
        data = {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row iterates values
        for key in _GAME_JSON:
            data[key] = json.loads(data[key])
        data["rated"] = bool(data["rated"])
        return StoredGame(**data)

    # -- ratings ---------------------------------------------------------------------------------
    def ratings(self, league_id: int, scope: str = ALL) -> dict[int, BotRating]:
        """Stored ratings of a league: bot id -> rating (``scope`` is ``*`` or one game spec)."""
        rows = self.conn.execute("SELECT * FROM ratings WHERE league_id=? AND scope=?", (league_id, scope))
        return {r["bot_id"]: BotRating(**{f: r[f] for f in _RATING_FIELDS}) for r in rows}

    def scopes(self, league_id: int) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT scope FROM ratings WHERE league_id=? ORDER BY scope",
                                                (league_id,))]

    def _rated_games(self, league_id: int, where: str = "", args: Sequence[Any] = ()) -> Iterator[tuple[int, RatedGame]]:
        """(game id, what rating needs) of a league's games, in schedule order."""
        sql = (f"SELECT id, schedule_key, base_game, seats, returns, terminations, failures FROM games "
               f"WHERE league_id=? {where} ORDER BY schedule_key")
        for r in self.conn.execute(sql, (league_id, *args)):
            yield r[0], RatedGame(r[1], r[2], json.loads(r[3]), json.loads(r[4]), json.loads(r[5]),
                                  json.loads(r[6]))

    def recompute_ratings(self, league_id: int) -> dict[int, BotRating]:
        """Recomputes every rating of a league (and its history) from its stored games, in schedule order,
        and stores them."""
        with _transaction(self.conn):
            self._recompute(league_id)
        return self.ratings(league_id)

    def _recompute(self, league_id: int, where: str = "", args: Sequence[Any] = ()) -> int:
        """Folds the games selected by ``where`` from the prior, in schedule order, into fresh ratings and
        history; every other game becomes unrated. Call inside a transaction. Returns the games folded."""
        seq = self._next_seq(league_id)  # above every old number: a reader sees the history was rewritten
        games = list(self._rated_games(league_id, where, args))
        self.conn.execute(f"UPDATE games SET rated={UNRATED}, rating_seq=NULL WHERE league_id=? AND rated != "
                          f"{UNRATED}", (league_id,))
        rater = Rater()
        self._fold(rater, games, RATED, seq)
        self.conn.execute("DELETE FROM ratings WHERE league_id=?", (league_id,))
        self._write_ratings(league_id, rater, list(rater.table))
        return len(games)

    def _next_seq(self, league_id: int) -> int:
        return int(self.conn.execute("SELECT coalesce(max(rating_seq), 0) + 1 FROM games WHERE league_id=?",
                                     (league_id,)).fetchone()[0])

    def _fold(self, rater: Rater, games: Iterable[tuple[int, RatedGame]], status: int, seq: int) -> set[tuple[str, int]]:
        """Applies ``games`` in the given order to ``rater``, storing each seat's rating after its game (the
        history), the game's ``rated`` status and its place in the fold (``rating_seq``, from ``seq`` on).
        Returns the (scope, bot) entries changed."""
        touched: set[tuple[str, int]] = set()
        history: list[tuple[float, float, float, float, int, int]] = []
        marks: list[tuple[int, int, int]] = []
        table = rater.table
        for game_id, game in games:
            changed = rater.apply(game)
            if changed:  # a bot against itself is not rated: no history
                touched.update(changed)
                for seat, bot in enumerate(game.seats):
                    a, g = table[(ALL, bot)], table[(game.game, bot)]
                    history.append((a.mu, a.sigma, g.mu, g.sigma, game_id, seat))
            marks.append((status, seq, game_id))
            seq += 1
            if len(marks) >= _FLUSH:
                self._write_fold(history, marks)
                history, marks = [], []
        self._write_fold(history, marks)
        return touched

    def _write_fold(self, history: list[tuple[float, float, float, float, int, int]],
                    marks: list[tuple[int, int, int]]) -> None:
        self.conn.executemany("UPDATE game_seats SET mu=?, sigma=?, game_mu=?, game_sigma=? WHERE game_id=? AND seat=?",
                              history)
        self.conn.executemany("UPDATE games SET rated=?, rating_seq=? WHERE id=?", marks)

    def rate_pending(self, league_id: int, before: str | None = None) -> int:
        """Rates the stored, not yet rated games whose schedule key is below ``before`` (all when None): the
        writer passes the first key still being played, so everything below it is final.

        Games that come after every rated one (the normal case) are folded onto the stored ratings in schedule
        order. Games that sort before a rated one (a bot entered into a running league, a resumed run) are
        folded in too, but marked provisional, as long as an earlier game is still outstanding (``before`` at
        or below the highest rated key); once none is (``before`` above it, or None), the league is recomputed
        once in schedule order. So the stored ratings equal a schedule-order recomputation whenever no game
        is provisional, and entering a bot into a league of 100,000 games costs one recomputation, not one per
        game.

        Returns:
            The number of games newly rated.
        """
        bound, args = ("AND schedule_key < ?", [before]) if before is not None else ("", [])
        with _transaction(self.conn):
            low, high, count = self.conn.execute(
                f"SELECT min(schedule_key), max(schedule_key), count(*) FROM games WHERE league_id=? "
                f"AND rated={UNRATED} {bound}", (league_id, *args)).fetchone()
            provisional = self.conn.execute(f"SELECT 1 FROM games WHERE league_id=? AND rated={PROVISIONAL} LIMIT 1",
                                            (league_id,)).fetchone() is not None
            if not count and not provisional:
                return 0
            # two indexed max() lookups (a "rated != 0" would scan the league)
            top = max((k for (k,) in self.conn.execute(
                "SELECT max(schedule_key) FROM games WHERE league_id=? AND rated=? UNION ALL "
                "SELECT max(schedule_key) FROM games WHERE league_id=? AND rated=?",
                (league_id, RATED, league_id, PROVISIONAL)) if k is not None), default=None)
            if top is not None and (provisional or low < top):
                if before is None or before > max(top, high or top):  # nothing below the top is outstanding
                    self._recompute(league_id, bound, args)  # (even with nothing new: provisional games end)
                    return int(count)
                if not count:
                    return 0
                status = PROVISIONAL
            else:
                status = RATED
            pending = list(self._rated_games(league_id, f"AND rated={UNRATED} {bound}", args))
            rater = Rater()
            bots = {b for _, g in pending for b in g.seats}
            scopes = {ALL} | {g.game for _, g in pending}
            placeholders = ",".join("?" * len(bots))
            for r in self.conn.execute(f"SELECT * FROM ratings WHERE league_id=? AND bot_id IN ({placeholders})",
                                       (league_id, *bots)):
                if r["scope"] in scopes:
                    rater.table[(r["scope"], r["bot_id"])] = BotRating(**{f: r[f] for f in _RATING_FIELDS})
            touched = self._fold(rater, pending, status, self._next_seq(league_id))
            self._write_ratings(league_id, rater, touched)
        return len(pending)

    def _write_ratings(self, league_id: int, rater: Rater, keys: Iterable[tuple[str, int]]) -> None:
        now = time.time()
        rows = []
        for scope, bot in keys:
            r = rater.table[(scope, bot)]
            rows.append((league_id, scope, bot, *(getattr(r, f) for f in _RATING_FIELDS), now))
        self.conn.executemany(
            f"INSERT OR REPLACE INTO ratings (league_id, scope, bot_id, {', '.join(_RATING_FIELDS)}, updated) "
            f"VALUES ({', '.join('?' * (len(_RATING_FIELDS) + 4))})", rows)

    # -- views -----------------------------------------------------------------------------------
    def outcomes(self, league_id: int, scope: str = ALL) -> list[tuple[str, list[int], list[float]]]:
        """(schedule key, bot id per seat, returns) of a league's games in schedule order: what the batch Elo fit
        (leaderboards/elo.py) and the adaptive schedule need (``scope``: ``*`` or one game spec)."""
        sql = "SELECT schedule_key, seats, returns FROM games WHERE league_id=?"
        args: list[Any] = [league_id]
        if scope != ALL:
            sql += " AND base_game=?"
            args.append(scope)
        loads = json.loads
        return [(r[0], loads(r[1]), loads(r[2])) for r in self.conn.execute(sql + " ORDER BY schedule_key", args)]

    # The adaptive schedule's decisions (arena/adaptive.py): one row per batch. The table is created by the first
    # writer that records one (no schema bump: a store without it simply has no decisions, and an older arena
    # ignores a table it does not know).
    _DECISIONS = ("CREATE TABLE IF NOT EXISTS schedule_decisions (league_id INTEGER NOT NULL REFERENCES "
                  "leagues(id), batch INTEGER NOT NULL, decision TEXT NOT NULL, created REAL NOT NULL, "
                  "PRIMARY KEY (league_id, batch))")

    def record_decision(self, league_id: int, decision: dict[str, Any]) -> int:
        """Stores the next batch's decision (JSON) and returns its batch number (0, 1, ...)."""
        with _transaction(self.conn):
            self.conn.execute(self._DECISIONS)
            batch = self.conn.execute("SELECT coalesce(max(batch) + 1, 0) FROM schedule_decisions WHERE league_id=?",
                                      (league_id,)).fetchone()[0]
            self.conn.execute("INSERT INTO schedule_decisions (league_id, batch, decision, created) VALUES (?, ?, ?, ?)",
                              (league_id, batch, json.dumps(decision), time.time()))
        return int(batch)

    def decisions(self, league_id: int) -> list[dict[str, Any]]:
        """The adaptive schedule's recorded decisions, oldest first (empty when none was recorded)."""
        if self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='schedule_decisions'"
                             ).fetchone() is None:
            return []
        return [json.loads(r[0]) for r in self.conn.execute(
            "SELECT decision FROM schedule_decisions WHERE league_id=? ORDER BY batch", (league_id,))]

    def head_to_head(self, league_id: int, scope: str = ALL) -> dict[tuple[int, int], tuple[int, int, int]]:
        """(bot a, bot b) -> (games a won against b, draws, games a lost) over games where both sat.

        In multi-player games a "win against b" means a finished above b.
        """
        sql = ("SELECT a.bot_id, b.bot_id, "
               "sum(a.score > b.score), sum(a.score = b.score), sum(a.score < b.score) "
               "FROM game_seats a JOIN game_seats b ON a.game_id = b.game_id AND a.seat != b.seat "
               "JOIN games g ON g.id = a.game_id WHERE g.league_id=? AND a.bot_id != b.bot_id")
        args: list[Any] = [league_id]
        if scope != ALL:
            sql += " AND g.base_game=?"
            args.append(scope)
        sql += " GROUP BY a.bot_id, b.bot_id"
        return {(r[0], r[1]): (r[2], r[3], r[4]) for r in self.conn.execute(sql, args)}


def _script(conn: sqlite3.Connection, script: str) -> None:
    """Runs ``;``-separated statements one by one (``executescript`` would commit the open transaction)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rollback on error); nested uses join the outer transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.outer = False

    def __enter__(self) -> None:
        self.outer = not self.conn.in_transaction
        if self.outer:
            self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if not self.outer:
            return
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")
