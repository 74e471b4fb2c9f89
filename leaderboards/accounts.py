"""The course server's rows in the store (schemas 5 and 6): accounts, submissions, login sessions and organiser actions.

A store module (it holds the SQL of these tables, as :mod:`leaderboards.store` holds the rest; docs/store.md).
Tokens and session keys never reach the store in clear: each is kept as its HMAC-SHA256 under the store's own
secret (``meta.account_key``), so a copy of the store (a backup, a leaked file) logs nobody in, and a lookup
compares the HMAC again in constant time.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from arena import snapshot as snapshots
from arena.errors import ConfigError
from arena.snapshot import Snapshot
from leaderboards.schema import transaction
from leaderboards.store import Store

TOKEN_BYTES = 32
MAX_SESSIONS = 20
"""Live sessions per account (a login past it ends the oldest): each login added a row for 7 days, and a student
logging in in a loop grew the store and took the writer's lock from the league without limit."""
"""Random bytes of a login token (256 bits, ``secrets.token_urlsafe``)."""
STATUSES = ("queued", "validating", "accepted", "refused", "withdrawn")


@dataclass(frozen=True)
class Account:
    id: int
    league_id: int
    name: str
    email: str
    organiser: bool
    created: float
    revoked: float | None

    @property
    def active(self) -> bool:
        return self.revoked is None


@dataclass(frozen=True)
class Submission:
    id: int
    league_id: int
    account_id: int
    bot_name: str
    filename: str
    digest: str
    size: int
    status: str
    reason: str
    detail: str
    bot_id: int | None
    created: float
    updated: float


_ACCOUNT = "id, league_id, name, email, organiser, created, revoked"
_SUBMISSION = ("id, league_id, account_id, bot_name, filename, digest, size, status, reason, detail, bot_id, created, "
               "updated")


def _account(row: tuple) -> Account:
    return Account(row[0], row[1], row[2], row[3], bool(row[4]), row[5], row[6])


def _submission(row: tuple) -> Submission:
    return Submission(*row)


def _key(store: Store) -> bytes:
    """The store's HMAC secret, made (32 random bytes) the first time it is needed."""
    row = store.conn.execute("SELECT value FROM meta WHERE key='account_key'").fetchone()
    if row is not None:
        return bytes.fromhex(row[0])
    with transaction(store.conn):
        store.conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('account_key', ?)",
                           (secrets.token_hex(32),))
    return bytes.fromhex(store.conn.execute("SELECT value FROM meta WHERE key='account_key'").fetchone()[0])


def secret_hash(store: Store, secret: str) -> str:
    """HMAC-SHA256 (hex) of a token or session key under the store's secret."""
    return hmac.new(_key(store), secret.encode(), hashlib.sha256).hexdigest()


# -- accounts -------------------------------------------------------------------------------------------
def add_account(store: Store, league_id: int, name: str, *, email: str = "", organiser: bool = False
                ) -> tuple[Account, str]:
    """Creates an account and returns it with its token (shown once: only its HMAC is stored).

    Raises:
        ConfigError: the league has an account of that name already.
    """
    token = secrets.token_urlsafe(TOKEN_BYTES)
    digest = secret_hash(store, token)
    with transaction(store.conn):
        if store.conn.execute("SELECT 1 FROM accounts WHERE league_id=? AND name=?", (league_id, name)).fetchone():
            raise ConfigError(f"an account {name!r} exists already in this league; revoke it or pick another name")
        cur = store.conn.execute("INSERT INTO accounts (league_id, name, email, token_hash, organiser, created) "
                                 "VALUES (?, ?, ?, ?, ?, ?)", (league_id, name, email, digest, int(organiser),
                                                               time.time()))
    return account(store, int(cur.lastrowid or 0)), token  # type: ignore[return-value]


def account(store: Store, account_id: int) -> Account | None:
    row = store.conn.execute(f"SELECT {_ACCOUNT} FROM accounts WHERE id=?", (account_id,)).fetchone()
    return _account(tuple(row)) if row else None


def account_named(store: Store, league_id: int, name: str) -> Account | None:
    row = store.conn.execute(f"SELECT {_ACCOUNT} FROM accounts WHERE league_id=? AND name=?",
                             (league_id, name)).fetchone()
    return _account(tuple(row)) if row else None


def accounts(store: Store, league_id: int) -> list[Account]:
    return [_account(tuple(r)) for r in store.conn.execute(
        f"SELECT {_ACCOUNT} FROM accounts WHERE league_id=? ORDER BY name", (league_id,))]


def by_token(store: Store, league_id: int, token: str) -> Account | None:
    """The active account whose token this is (None: unknown or revoked). The HMAC is found by its index, then
    compared again in constant time (the index lookup's timing only reveals bits of an HMAC, never the token)."""
    digest = secret_hash(store, token)
    row = store.conn.execute(f"SELECT {_ACCOUNT}, token_hash FROM accounts WHERE league_id=? AND token_hash=? "
                             "AND revoked IS NULL", (league_id, digest)).fetchone()
    if row is None or not hmac.compare_digest(row[-1], digest):
        return None
    return _account(tuple(row)[:-1])


def revoked_by_token(store: Store, league_id: int, token: str) -> Account | None:
    """The revoked account whose token this is (None: unknown or active), so its holder can be told why the token
    stopped working (found and compared as :func:`by_token` does)."""
    digest = secret_hash(store, token)
    row = store.conn.execute(f"SELECT {_ACCOUNT}, token_hash FROM accounts WHERE league_id=? AND token_hash=? "
                             "AND revoked IS NOT NULL", (league_id, digest)).fetchone()
    if row is None or not hmac.compare_digest(row[-1], digest):
        return None
    return _account(tuple(row)[:-1])


REVOKED = "account revoked"
"""The reason a revoked account's waiting submissions and bots carry."""
WITHDRAWN = "withdrawn by "
"""How the reason of a version an organiser withdrew begins (``withdrawn by NAME``)."""


def taken_out(status: str, reason: str | None) -> bool:
    """Whether a bot was taken out of its league by an organiser (its version withdrawn, or its account revoked):
    such a bot is ranked nowhere, neither on `arena serve`'s leaderboard nor on the dashboard (its games stay)."""
    return status == "retired" and bool(reason) and (reason == REVOKED or str(reason).startswith(WITHDRAWN))


def revoke(store: Store, account_id: int) -> None:
    """Revokes an account: its token and its sessions stop working at once, its uploads still waiting or being
    validated are withdrawn (never entered), and its submitted bot leaves the league (retired; its games stay)."""
    with transaction(store.conn):
        store.conn.execute("UPDATE accounts SET revoked=? WHERE id=? AND revoked IS NULL", (time.time(), account_id))
        # (its sessions stay, inert: session() answers only for an active account; a browser that still holds one
        # is told at the login page that the account was revoked: revoked_session())
        store.conn.execute("UPDATE submissions SET status='withdrawn', reason=?, updated=? WHERE account_id=? AND "
                           "status IN ('queued', 'validating')", (REVOKED, time.time(), account_id))
        store.conn.execute("UPDATE bots SET status='retired', status_reason=? WHERE origin='submit' AND "
                           "status != 'retired' AND (league_id, name) IN (SELECT league_id, name FROM accounts "
                           "WHERE id=?)", (REVOKED, account_id))


def revoked_count(store: Store, league_id: int) -> int:
    """How many of the league's accounts are revoked (a watcher's cheap test for a revoke made elsewhere)."""
    return int(store.conn.execute("SELECT count(*) FROM accounts WHERE league_id=? AND revoked IS NOT NULL",
                                  (league_id,)).fetchone()[0])


# -- sessions -------------------------------------------------------------------------------------------
def new_session(store: Store, account_id: int, ttl: float) -> tuple[str, str]:
    """A login session: returns (the cookie's key, the session's CSRF token)."""
    key, csrf = secrets.token_urlsafe(TOKEN_BYTES), secrets.token_urlsafe(TOKEN_BYTES)
    now = time.time()
    with transaction(store.conn):
        store.conn.execute("DELETE FROM sessions WHERE expires < ?", (now,))
        store.conn.execute("DELETE FROM sessions WHERE account_id=? AND key_hash NOT IN (SELECT key_hash FROM "
                           "sessions WHERE account_id=? ORDER BY created DESC LIMIT ?)",
                           (account_id, account_id, MAX_SESSIONS - 1))
        store.conn.execute("INSERT INTO sessions (key_hash, account_id, csrf, created, expires) VALUES (?, ?, ?, ?, ?)",
                           (secret_hash(store, key), account_id, csrf, now, now + ttl))
    return key, csrf


def session(store: Store, key: str) -> tuple[Account, str] | None:
    """(the account, its CSRF token) of a live session of an active account, else None."""
    row = store.conn.execute(
        "SELECT s.account_id, s.csrf FROM sessions s JOIN accounts a ON a.id = s.account_id "
        "WHERE s.key_hash=? AND s.expires >= ? AND a.revoked IS NULL", (secret_hash(store, key), time.time())
    ).fetchone()
    if row is None:
        return None
    acct = account(store, row[0])
    return (acct, row[1]) if acct else None


def revoked_session(store: Store, key: str) -> Account | None:
    """The revoked account a session key was given to (None: no such session, or its account is active)."""
    row = store.conn.execute("SELECT s.account_id FROM sessions s JOIN accounts a ON a.id = s.account_id "
                             "WHERE s.key_hash=? AND a.revoked IS NOT NULL", (secret_hash(store, key),)).fetchone()
    return account(store, row[0]) if row else None


def end_session(store: Store, key: str) -> None:
    with transaction(store.conn):
        store.conn.execute("DELETE FROM sessions WHERE key_hash=?", (secret_hash(store, key),))


# -- submissions ----------------------------------------------------------------------------------------
def add_submission(store: Store, league_id: int, account_id: int, bot_name: str, filename: str,
                   snapshot: Snapshot) -> int:
    """Queues an upload (its snapshot kept) and returns its id; ids give the order one account's submissions are
    handled in (accounts take turns: :func:`claim_next`). 0: the account was revoked meanwhile (the upload began
    before the revoke and ended after it), checked in the same write transaction as the insert, so a revoke is
    either before it (nothing queued) or after it (the revoke withdraws it)."""
    now = time.time()
    with transaction(store.conn):
        row = store.conn.execute("SELECT revoked FROM accounts WHERE id=?", (account_id,)).fetchone()
        if row is None or row[0] is not None:
            return 0
        cur = store.conn.execute(
            "INSERT INTO submissions (league_id, account_id, bot_name, filename, digest, size, snapshot, created, "
            "updated, files_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (league_id, account_id, bot_name, filename, snapshot.digest, snapshot.size, snapshots.pack(snapshot),
             now, now, snapshots.files_digest(snapshot)))
    return int(cur.lastrowid or 0)


def submission(store: Store, submission_id: int) -> Submission | None:
    row = store.conn.execute(f"SELECT {_SUBMISSION} FROM submissions WHERE id=?", (submission_id,)).fetchone()
    return _submission(tuple(row)) if row else None


def submissions(store: Store, league_id: int, account_id: int | None = None, *, limit: int | None = None
                ) -> list[Submission]:
    """Newest first (the newest ``limit`` only, when given); one account's when ``account_id`` is given."""
    sql, args = f"SELECT {_SUBMISSION} FROM submissions WHERE league_id=?", [league_id]
    if account_id is not None:
        sql += " AND account_id=?"
        args.append(account_id)
    sql += " ORDER BY id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return [_submission(tuple(r)) for r in store.conn.execute(sql, args)]


def submission_counts(store: Store, league_id: int) -> dict[int, int]:
    """Each account's number of submissions (account id -> count; accounts without any left out)."""
    return {r[0]: int(r[1]) for r in store.conn.execute(
        "SELECT account_id, count(*) FROM submissions WHERE league_id=? GROUP BY account_id", (league_id,))}


def submission_snapshot(store: Store, submission_id: int) -> Snapshot:
    row = store.conn.execute("SELECT snapshot, digest FROM submissions WHERE id=?", (submission_id,)).fetchone()
    return snapshots.unpack(row[0], row[1])


def withdrawn_twin(store: Store, account_id: int, files_hash: str) -> Submission | None:
    """The account's submission with files of these contents (whatever they are called) that an organiser
    withdrew, if any: such files stay withdrawn (a re-upload is refused, never validated nor entered)."""
    row = store.conn.execute(f"SELECT {_SUBMISSION} FROM submissions WHERE account_id=? AND files_hash=? AND "
                             "status='withdrawn' ORDER BY id DESC LIMIT 1", (account_id, files_hash)).fetchone()
    return _submission(tuple(row)) if row else None


def submitted_since(store: Store, account_id: int, since: float) -> int:
    return int(store.conn.execute("SELECT count(*) FROM submissions WHERE account_id=? AND created >= ?",
                                  (account_id, since)).fetchone()[0])


def submission_times(store: Store, account_id: int, since: float) -> list[float]:
    """When the account's submissions since ``since`` were sent, oldest first."""
    return [float(r[0]) for r in store.conn.execute(
        "SELECT created FROM submissions WHERE account_id=? AND created >= ? ORDER BY created", (account_id, since))]


def same_upload(store: Store, account_id: int, digest: str, before: int = 1 << 62) -> Submission | None:
    """The account's newest submission of these very files (the same snapshot digest) older than the submission
    ``before`` (None: none)."""
    row = store.conn.execute(f"SELECT {_SUBMISSION} FROM submissions WHERE account_id=? AND digest=? AND id < ? "
                             "ORDER BY id DESC LIMIT 1", (account_id, digest, before)).fetchone()
    return _submission(tuple(row)) if row else None


def claim_next(store: Store, league_id: int, turns: dict[int, int]) -> Submission | None:
    """The next queued submission, marked ``validating`` in the same transaction (one validator takes it).

    Accounts take turns: ``turns`` (account id -> the number of the claim that last served it, kept by the caller
    and updated here) picks the first waiting submission of the account served least recently, an account never
    served first, the oldest among equals. A revoked account's are left waiting."""
    with transaction(store.conn):
        firsts = store.conn.execute(  # (a revoked account's uploads stay queued: never validated nor entered)
            "SELECT account_id, min(id) FROM submissions WHERE league_id=? AND status='queued' AND account_id IN "
            "(SELECT id FROM accounts WHERE revoked IS NULL) GROUP BY account_id", (league_id,)).fetchall()
        if not firsts:
            return None
        account_id, sid = min(firsts, key=lambda row: (turns.get(row[0], -1), row[1]))
        store.conn.execute("UPDATE submissions SET status='validating', updated=? WHERE id=?", (time.time(), sid))
    turns[account_id] = max(turns.values(), default=-1) + 1
    return submission(store, sid)


def requeue_unfinished(store: Store, league_id: int) -> int:
    """Submissions left ``validating`` by a server that was stopped or killed go back to the queue."""
    with transaction(store.conn):
        return store.conn.execute("UPDATE submissions SET status='queued' WHERE league_id=? AND status='validating'",
                                  (league_id,)).rowcount


def finish(store: Store, submission_id: int, status: str, *, reason: str = "", detail: str = "",
           bot_id: int | None = None) -> None:
    assert status in STATUSES
    with transaction(store.conn):
        store.conn.execute("UPDATE submissions SET status=?, reason=?, detail=?, bot_id=coalesce(?, bot_id), "
                           "updated=? WHERE id=?", (status, reason, detail, bot_id, time.time(), submission_id))


# -- organiser actions -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Action:
    id: int
    actor: str
    action: str
    target: str
    detail: str
    created: float


def record_action(store: Store, league_id: int, actor: str, action: str, target: str, detail: str = "") -> None:
    with transaction(store.conn):
        store.conn.execute("INSERT INTO actions (league_id, actor, action, target, detail, created) "
                           "VALUES (?, ?, ?, ?, ?, ?)", (league_id, actor, action, target, detail, time.time()))


def actions(store: Store, league_id: int, *, limit: int = -1) -> list[Action]:
    """Newest first (the newest ``limit`` only, when given)."""
    return [Action(*r) for r in store.conn.execute(
        "SELECT id, actor, action, target, detail, created FROM actions WHERE league_id=? ORDER BY id DESC LIMIT ?",
        (league_id, limit))]
