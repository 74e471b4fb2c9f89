"""The results store: one SQLite file, opened here, read and written through :class:`Store` (schema: docs/store.md).

One file holds any number of leagues. WAL mode lets readers (``arena leaderboard``, ``arena tui``) read
while one writer (the league runner) stores results. Every finished game is committed as soon as the
runner reads it (with the rating fold it made due; games read together share a transaction), so a writer
killed at any moment (SIGKILL included) leaves a consistent store and loses no committed game.
``UNIQUE(league_id, schedule_key)`` makes it impossible to count a game twice. Since schema 2 every rated game also
stores, per seat, the rating its bot had right after that game (the history the dashboard draws its trends from).

This module is the connection's life (open, check, migrate, close, transactions) and the façade every caller uses.
The SQL is in modules with one job each, all in one style: functions whose first parameter is the open store,
bound here as :class:`Store`'s methods (``store.games(...)`` is :func:`leaderboards.game_rows.games`):
:mod:`~leaderboards.migrations` (schema versions), :mod:`~leaderboards.league_rows`, :mod:`~leaderboards.bot_rows`,
:mod:`~leaderboards.game_rows`, :mod:`~leaderboards.fold_rows` (the rating fold's reads and writes),
:mod:`~leaderboards.decision_rows` (the adaptive schedule's) and :mod:`~leaderboards.store_views` (aggregate reads).

The store reads and writes rows; what a stored game means for a league (its bots' failure runs, probation, the
rating fold) is the writer's, in :mod:`leaderboards.ledger`.
"""
from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from arena.errors import ConfigError
from leaderboards import (
    bot_rows,
    decision_rows,
    fold_rows,
    game_rows,
    league_rows,
    migrations,
    store_views,
    storefile,
)
from leaderboards.bot_rows import content_hash
from leaderboards.schema import (
    PROVISIONAL,
    RATED,
    SCHEMA_VERSION,
    UNRATED,
    Bot,
    League,
    StoredGame,
    transaction,
)
from leaderboards.storefile import StoreError

DEFAULT_DB = "arena.sqlite"
__all__ = ["DEFAULT_DB", "PROVISIONAL", "RATED", "SCHEMA_VERSION", "UNRATED", "Bot", "League", "Store", "StoreError",
           "StoredGame", "content_hash"]


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
                version = migrations.schema_version(conn)  # (another writer may have created or migrated it)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys=ON")
            if version is None:
                migrations.create(conn)
                version = SCHEMA_VERSION
            elif version > SCHEMA_VERSION:
                conn.close()
                raise StoreError(storefile.newer(path, version))
            store = cls(conn, path, version)
            if version < SCHEMA_VERSION and not readonly:
                try:
                    migrations.migrate(store, None if rebuild_history is None else
                                       lambda league_id: rebuild_history(store, league_id))
                except BaseException:
                    conn.close()
                    raise
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(storefile.explain(exc, path)) from None
        return store

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

    def settled(self) -> bool:
        """Whether this connection, kept for reuse (a web thread's: :meth:`another`), reads the store as it is now:
        no statement left pending and no transaction left open pins an old snapshot
        (:func:`leaderboards.storefile.settled`)."""
        return storefile.settled(self.conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:  # noqa: PYI034 - Store is not meant to be subclassed
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self.close()
        if isinstance(exc, sqlite3.Error):
            # every command uses the store in a with block: this is where any store failure gets its one line
            raise StoreError(storefile.explain(exc, self.path)) from exc

    def transaction(self) -> transaction:
        """``with store.transaction():`` several writes commit together (nested uses join the outer one)."""
        return transaction(self.conn)

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

    # -- the SQL modules' functions, bound as methods (each module's docstrings say what they do) ---------------
    # leagues (leaderboards/league_rows.py)
    leagues = league_rows.leagues
    league = league_rows.league
    find_league = league_rows.find_league
    ensure_league = league_rows.ensure_league
    chance_key = league_rows.chance_key
    delete_league = league_rows.delete_league
    # bots (leaderboards/bot_rows.py)
    bots = bot_rows.bots
    bot = bot_rows.bot
    current_bot = bot_rows.current_bot
    upsert_bot = bot_rows.upsert_bot
    snapshot = bot_rows.snapshot
    same_files = bot_rows.same_files
    bot_source = bot_rows.bot_source
    retire_bot = bot_rows.retire_bot
    set_probation = bot_rows.set_probation
    end_failure_run = bot_rows.end_failure_run
    add_failure = bot_rows.add_failure
    release_bot = bot_rows.release_bot
    latest_outcomes = bot_rows.latest_outcomes
    # games and stored ratings (leaderboards/game_rows.py)
    schedule_keys = game_rows.schedule_keys
    sorted_schedule_keys = game_rows.sorted_schedule_keys
    insert_game = game_rows.insert_game
    record_games = game_rows.record_games
    game = game_rows.game
    games = game_rows.games
    iter_games = game_rows.iter_games
    ratings = game_rows.ratings
    scopes = game_rows.scopes
    # the rating fold's reads and writes (leaderboards/fold_rows.py; its policy: leaderboards/rating_fold.py)
    rated_games = fold_rows.rated_games
    next_rating_seq = fold_rows.next_rating_seq
    unrate_games = fold_rows.unrate_games
    delete_ratings = fold_rows.delete_ratings
    write_fold = fold_rows.write_fold
    write_ratings = fold_rows.write_ratings
    stored_ratings = fold_rows.stored_ratings
    unrated_span = fold_rows.unrated_span
    has_provisional = fold_rows.has_provisional
    top_rated_key = fold_rows.top_rated_key
    # the adaptive schedule's decisions (leaderboards/decision_rows.py)
    record_decision = decision_rows.record_decision
    decisions = decision_rows.decisions
    # aggregate reads (leaderboards/store_views.py)
    count_games = store_views.count_games
    change_token = store_views.change_token
    standings_token = store_views.standings_token
    recent_games = store_views.recent_games
    last_key = store_views.last_key
    head_to_head_since = store_views.head_to_head_since
    count_provisional = store_views.count_provisional
    history_bounds = store_views.history_bounds
    read_transaction = store_views.read_transaction
    seq_after = store_views.seq_after
    rating_history = store_views.rating_history
    bot_moves = store_views.bot_moves
    head_to_head_of = store_views.head_to_head_of
    bot_history = store_views.bot_history
    outcomes = store_views.outcomes
    keyed_outcomes = store_views.keyed_outcomes
    head_to_head = store_views.head_to_head
