"""The store's schema: its tables, their migrations, the typed rows read from them, and the transaction every
write runs in. Only the store's modules (:mod:`leaderboards.store`, :mod:`leaderboards.store_views`) use it:
nothing else sees SQL (docs/store.md describes the tables).
"""
from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arena.results.outcome import COUNTERS
from arena.results.records import Failure

SCHEMA_VERSION = 7

SCHEMA = """
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
    files_hash TEXT,
    UNIQUE (league_id, name, version)
);
CREATE INDEX IF NOT EXISTS bots_files ON bots (league_id, files_hash);
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

# schema 5: the course server's accounts, their submissions, login sessions and the organisers' actions
# (arena serve, docs/server.md). Tokens and session keys are stored only as HMACs.
SERVER_SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    id INTEGER PRIMARY KEY,
    league_id INTEGER NOT NULL REFERENCES leagues(id),
    name TEXT NOT NULL,
    email TEXT NOT NULL DEFAULT '',
    token_hash TEXT NOT NULL UNIQUE,
    organiser INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    revoked REAL,
    UNIQUE (league_id, name)
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY,
    league_id INTEGER NOT NULL REFERENCES leagues(id),
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    bot_name TEXT NOT NULL,
    filename TEXT NOT NULL,
    digest TEXT NOT NULL,
    size INTEGER NOT NULL,
    snapshot BLOB NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'validating', 'accepted', 'refused', 'withdrawn')),
    reason TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    bot_id INTEGER REFERENCES bots(id),
    created REAL NOT NULL,
    updated REAL NOT NULL,
    files_hash TEXT
);
CREATE INDEX IF NOT EXISTS submissions_account ON submissions (account_id, id);
CREATE INDEX IF NOT EXISTS submissions_status ON submissions (status, id);
CREATE TABLE IF NOT EXISTS sessions (
    key_hash TEXT PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    csrf TEXT NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS actions (
    id INTEGER PRIMARY KEY,
    league_id INTEGER NOT NULL REFERENCES leagues(id),
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL
);
"""
SCHEMA += SERVER_SCHEMA

# schema 7: teams of accounts (a team's members submit one bot, named as the team) and scrimmages (unrated games a
# student asks for between their side's current bot and another side's, played beside the ladder and stored here,
# never in ``games``: the ladder's ratings never see them; arena/server/scrimmages.py, docs/server.md)
TEAMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS teams (
    id INTEGER PRIMARY KEY,
    league_id INTEGER NOT NULL REFERENCES leagues(id),
    name TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    UNIQUE (league_id, name)
);
CREATE TABLE IF NOT EXISTS team_members (
    account_id INTEGER PRIMARY KEY REFERENCES accounts(id),
    team_id INTEGER NOT NULL REFERENCES teams(id)
);
CREATE INDEX IF NOT EXISTS team_members_team ON team_members (team_id);
CREATE TABLE IF NOT EXISTS scrimmages (
    id INTEGER PRIMARY KEY,
    league_id INTEGER NOT NULL REFERENCES leagues(id),
    asked_by INTEGER NOT NULL REFERENCES accounts(id),
    side TEXT NOT NULL,
    opponent TEXT NOT NULL,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    opponent_bot_id INTEGER NOT NULL REFERENCES bots(id),
    games INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'playing', 'done', 'failed')),
    reason TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS scrimmages_side ON scrimmages (league_id, side, created);
CREATE INDEX IF NOT EXISTS scrimmages_opponent ON scrimmages (league_id, opponent, created);
CREATE INDEX IF NOT EXISTS scrimmages_status ON scrimmages (league_id, status, id);
CREATE TABLE IF NOT EXISTS scrimmage_games (
    id INTEGER PRIMARY KEY,
    scrimmage_id INTEGER NOT NULL REFERENCES scrimmages(id),
    number INTEGER NOT NULL,
    seats TEXT NOT NULL,
    record TEXT NOT NULL,
    finished REAL NOT NULL,
    UNIQUE (scrimmage_id, number)
);
"""
SCHEMA += TEAMS_SCHEMA

# schema 1 -> 2: the rating history (the store is then recomputed so that every rated game has it)
MIGRATE_1_TO_2 = """
ALTER TABLE games ADD COLUMN rating_seq INTEGER;
ALTER TABLE game_seats ADD COLUMN mu REAL;
ALTER TABLE game_seats ADD COLUMN sigma REAL;
ALTER TABLE game_seats ADD COLUMN game_mu REAL;
ALTER TABLE game_seats ADD COLUMN game_sigma REAL;
CREATE INDEX IF NOT EXISTS games_league_seq ON games (league_id, rating_seq);
"""

# schema 2 -> 3: each league's secret chance key (arena.chance); leagues that exist get a fresh one
MIGRATE_2_TO_3 = "ALTER TABLE leagues ADD COLUMN chance_key BLOB"
# schema 3 -> 4: a file bot is a snapshot (arena.snapshot): its whole file tree, and its digest
# as content_hash
MIGRATE_3_TO_4 = "ALTER TABLE bots ADD COLUMN snapshot BLOB"
# schema 4 -> 5: the server's tables (created empty), as schema 5 made them (6 added submissions.files_hash)
MIGRATE_4_TO_5 = SERVER_SCHEMA.replace("    updated REAL NOT NULL,\n    files_hash TEXT\n);",
                                       "    updated REAL NOT NULL\n);")
# schema 5 -> 6: each file bot's and submission's files fingerprint (arena.snapshot.files_digest),
# stored once, so that byte-identical bots are found by an indexed lookup instead of reading every snapshot; the
# store fills it for the rows that exist
MIGRATE_5_TO_6 = """
ALTER TABLE bots ADD COLUMN files_hash TEXT;
ALTER TABLE submissions ADD COLUMN files_hash TEXT;
CREATE INDEX IF NOT EXISTS bots_files ON bots (league_id, files_hash);
"""
# schema 6 -> 7: the teams and scrimmages tables (created empty: every account starts without a team)
MIGRATE_6_TO_7 = TEAMS_SCHEMA
BOT_COLUMNS = ("id, league_id, name, version, kind, spec, filename, source, content_hash, origin, games, trusted, "
                "status, status_reason, consecutive_failures, created")
"""Every column of ``bots`` but the snapshot (loaded only by :meth:`Store.snapshot`, when a game needs it)."""

UNRATED, RATED, PROVISIONAL = 0, 1, 2
"""Values of ``games.rated``: not folded yet; folded in schedule order; folded out of schedule order while
earlier games were still being played (made exact by one recomputation once they are all in)."""
FLUSH = 10_000
"""History rows written per executemany while folding (keeps a 100,000-game recomputation's memory flat)."""

RATING_FIELDS = ("mu", "sigma", "games", "wins", "draws", "losses", *COUNTERS)
"""The columns of ``ratings`` that hold a :class:`leaderboards.ratings.BotRating`: one counter per failure reason of
:class:`arena.results.outcome.Termination` (the ``CREATE TABLE ratings`` above lists them as shipped: a new reason is a
migration; tests/arena/results/test_termination_vocabulary.py checks the two agree)."""


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
    """A file bot's listed name: its entry file, or for a COMP424 agent ``comp424:FOLDER[@agent]``
    (:func:`arena.comp424_names.listed_as`), what the user gave."""
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
    """One stored game (a :class:`arena.results.records.GameRecord` plus its place in the league)."""

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
    failures: list[Failure]
    """Typed as the referee wrote them (:func:`load_failures`)."""
    duration: float
    info: dict[str, Any] = field(default_factory=dict)
    rated: bool = False
    finished: float = 0.0
    rating_seq: int | None = None
    """Its place in the fold that made the current ratings (None while unrated)."""

    @property
    def clock_readings(self) -> list[float | None]:
        """In a game with game clocks, its mover's clock in seconds after each bot move (aligned with
        ``wall_times``; None where nothing was charged, or the store holds no number); empty for any other game."""
        stored = self.info.get("clock_left")
        if not self.info.get("time_control") or not isinstance(stored, list):
            return []
        return [_seconds(x) for x in stored]


def _seconds(value: Any) -> float | None:
    """A stored clock reading as finite seconds, else None (a store edited by hand can hold text, NaN or 10**400)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except OverflowError:
        return None
    return seconds if math.isfinite(seconds) else None


def load_failures(stored: str | list[Any]) -> list[Failure]:
    """A game's failures from their stored JSON (a ``failures`` column's text, or that text already parsed): every
    store read decodes them here, through :meth:`Failure.from_dict` (which says what an old or unknown row becomes),
    so no reader indexes a failure's dict."""
    return [Failure.from_dict(f) for f in (json.loads(stored) if isinstance(stored, str) else stored)]


GAME_JSON = ("seats", "players", "history", "returns", "terminations", "move_seats", "wall_times", "cpu_times",
              "failures", "info")


DECISIONS_TABLE = ("CREATE TABLE IF NOT EXISTS schedule_decisions (league_id INTEGER NOT NULL REFERENCES "
                   "leagues(id), batch INTEGER NOT NULL, decision TEXT NOT NULL, created REAL NOT NULL, "
                   "PRIMARY KEY (league_id, batch))")
"""The adaptive schedule's decisions (arena/league/adaptive.py): one row per batch. Created by the first writer that
records one (no schema bump: a store without it simply has no decisions), so any version may have it."""

OPTIONAL_TABLES = (DECISIONS_TABLE,)
"""Tables of arena's that a store of any schema version may or may not have (the strict schema check accepts
each, exactly as written here)."""


class Connected(Protocol):
    """An open store, as the SQL modules see it: :class:`leaderboards.store.Store`, whose methods they are (each
    module's functions take the store first and the store binds them: docs/architecture.md, "The store")."""

    conn: sqlite3.Connection
    path: Path
    schema_version: int
    """The schema of the open file (below :data:`SCHEMA_VERSION` only in a read-only open of an old store)."""


def script(conn: sqlite3.Connection, script: str) -> None:
    """Runs ``;``-separated statements one by one (``executescript`` would commit the open transaction)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


class transaction:
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
