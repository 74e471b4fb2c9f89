"""The course server's teams and scrimmages in the store (schema 7).

A store module (the SQL of these tables, as :mod:`leaderboards.accounts` holds the accounts'). A **side** is who
submits one bot of the ladder: a team (its members, the bot named as the team) or an account in no team (the bot
named as the account). An account is in at most one team (``team_members.account_id`` is its key; an account
belongs to one league). A **scrimmage** is a number of unrated games one side asked for between its current bot
and another side's; its games are kept in ``scrimmage_games``, never in ``games``, so no rating, schedule or
leaderboard of the ladder ever reads them.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from arena.errors import ConfigError
from leaderboards import accounts as acc
from leaderboards.schema import StoredGame, load_failures, transaction
from leaderboards.store import Store


@dataclass(frozen=True)
class Side:
    """Who submits one bot of the ladder: a team, or an account in no team."""

    name: str
    """The bot's name in the ladder: the team's name, or the account's."""
    team_id: int | None
    members: tuple[acc.Account, ...]
    """The team's accounts (by name), or the one account."""

    @property
    def member_ids(self) -> tuple[int, ...]:
        return tuple(a.id for a in self.members)

    @property
    def is_team(self) -> bool:
        return self.team_id is not None


@dataclass(frozen=True)
class Team:
    id: int
    league_id: int
    name: str
    members: tuple[acc.Account, ...]
    created: float
    updated: float


# -- teams --------------------------------------------------------------------------------------------------
def _members(store: Store, team_id: int) -> tuple[acc.Account, ...]:
    ids = [r[0] for r in store.conn.execute("SELECT account_id FROM team_members WHERE team_id=?", (team_id,))]
    found = [a for a in (acc.account(store, i) for i in ids) if a is not None]
    return tuple(sorted(found, key=lambda a: a.name))


def teams(store: Store, league_id: int) -> list[Team]:
    """The league's teams by name (a team without members is not listed)."""
    out = []
    for row in store.conn.execute("SELECT id, league_id, name, created, updated FROM teams WHERE league_id=? "
                                  "ORDER BY name", (league_id,)).fetchall():
        members = _members(store, row[0])
        if members:
            out.append(Team(row[0], row[1], row[2], members, row[3], row[4]))
    return out


def team_named(store: Store, league_id: int, name: str) -> Team | None:
    return next((t for t in teams(store, league_id) if t.name == name), None)


def team_name_taken(store: Store, league_id: int, name: str) -> bool:
    """Whether a team of the league has ever been called ``name``, members or not (its bot keeps the name: an
    account called so would be that team's side, seeing its scrimmages and submitting its bot)."""
    return store.conn.execute("SELECT 1 FROM teams WHERE league_id=? AND name=?", (league_id, name)).fetchone() \
        is not None


def side_of(store: Store, account: acc.Account) -> Side:
    """The account's side: its team, or the account alone."""
    row = store.conn.execute("SELECT t.id, t.name FROM team_members m JOIN teams t ON t.id = m.team_id "
                             "WHERE m.account_id=?", (account.id,)).fetchone()
    if row is None:
        return Side(account.name, None, (account,))
    return Side(row[1], row[0], _members(store, row[0]))


def side_named(store: Store, league_id: int, name: str) -> Side | None:
    """The side whose bot is called ``name`` (a team, or an account in no team), or None."""
    team = team_named(store, league_id, name)
    if team is not None:
        return Side(team.name, team.id, team.members)
    account = acc.account_named(store, league_id, name)
    if account is None:
        return None
    side = side_of(store, account)
    return side if side.name == name else None


def set_team(store: Store, league_id: int, name: str, members: list[acc.Account]) -> tuple[Team, list[str]]:
    """Makes team ``name`` exactly ``members`` (created if new; members of another team move to this one; former
    members leave it and are on their own again). Each member's own bot leaves the ladder (retired, "joined team
    NAME": the team's bot stands for them), and so does the bot of a team all of whose members moved here.
    Returns the team and the names of the accounts that left it.

    Raises:
        ConfigError: no member, or ``name`` is an account's name (an account's bot takes its name: the two would
            be one bot in the ladder), or for a new team the name of a bot the league has already (one entered with
            `arena submit`, say: the team would take over its versions and games).
    """
    if not members:
        raise ConfigError(f"team {name!r} needs at least one account")
    if acc.account_named(store, league_id, name) is not None:
        raise ConfigError(f"{name!r} is an account's name (its bot is called so); pick another team name")
    if not team_name_taken(store, league_id, name) and store.current_bot(league_id, name) is not None:
        raise ConfigError(f"the league has a bot called {name!r} already; pick another team name")
    now = time.time()
    ids = [a.id for a in members]
    with transaction(store.conn):
        store.conn.execute("INSERT INTO teams (league_id, name, created, updated) VALUES (?, ?, ?, ?) "
                           "ON CONFLICT(league_id, name) DO UPDATE SET updated=excluded.updated",
                           (league_id, name, now, now))
        team_id = store.conn.execute("SELECT id FROM teams WHERE league_id=? AND name=?",
                                     (league_id, name)).fetchone()[0]
        marks = ",".join("?" * len(ids))
        left = [r[0] for r in store.conn.execute(
            f"SELECT a.name FROM team_members m JOIN accounts a ON a.id = m.account_id WHERE m.team_id=? AND "
            f"m.account_id NOT IN ({marks}) ORDER BY a.name", (team_id, *ids))]
        store.conn.execute(f"DELETE FROM team_members WHERE team_id=? AND account_id NOT IN ({marks})",
                           (team_id, *ids))
        moved_from = {r[0] for r in store.conn.execute(
            f"SELECT team_id FROM team_members WHERE account_id IN ({marks}) AND team_id != ?", (*ids, team_id))}
        store.conn.execute(f"INSERT OR REPLACE INTO team_members (account_id, team_id) SELECT id, ? FROM accounts "
                           f"WHERE id IN ({marks})", (team_id, *ids))
        if moved_from:  # (their teams changed too: a watcher of `updated` sees it)
            store.conn.execute(f"UPDATE teams SET updated=? WHERE id IN ({','.join('?' * len(moved_from))})",
                               (now, *moved_from))
            # a team whose every member moved here: its bot would stay in the ladder (and a final) as a second
            # entry of these accounts, with nobody to stand for it
            for (emptied,) in store.conn.execute(
                    f"SELECT name FROM teams WHERE id IN ({','.join('?' * len(moved_from))}) AND id NOT IN "
                    "(SELECT team_id FROM team_members)", tuple(moved_from)).fetchall():
                store.conn.execute("UPDATE bots SET status='retired', status_reason=? WHERE league_id=? AND "
                                   "origin='submit' AND status != 'retired' AND name=?",
                                   (f"team {emptied} has no members left", league_id, emptied))
        store.conn.execute(f"UPDATE bots SET status='retired', status_reason=? WHERE league_id=? AND "
                           f"origin='submit' AND status != 'retired' AND name IN ({marks})",
                           (f"joined team {name}", league_id, *[a.name for a in members]))
    team = team_named(store, league_id, name)
    assert team is not None
    return team, left


def changed(store: Store, league_id: int) -> tuple[int, float]:
    """A cheap signature of the league's teams (a watcher's test for a change made by another process)."""
    row = store.conn.execute("SELECT count(*), coalesce(max(updated), 0) FROM teams WHERE league_id=?",
                             (league_id,)).fetchone()
    return int(row[0]), float(row[1])


def stale_upload(store: Store, sub: acc.Submission) -> str | None:
    """Why a submission may no longer enter the ladder because its account changed sides since the upload (its
    bot would be a second entry of one side), or None."""
    account = acc.account(store, sub.account_id)
    if account is None:
        return None
    side = side_of(store, account)
    if side.name == sub.bot_name:
        return None
    now = f"team {side.name}" if side.is_team else "no team"
    return (f"sent for {sub.bot_name}, but the account is now in {now}: upload it again to enter it as "
            f"{side.name}'s bot")


# -- a side's submissions (the hourly limit, the withdrawn files and identical uploads are the side's) ----------
def _in(ids: tuple[int, ...]) -> str:
    return ",".join("?" * len(ids)) or "NULL"


def side_submitted_since(store: Store, league_id: int, side: Side, since: float) -> list[float]:
    """When the side's uploads since ``since`` were sent (sent for its bot name, or by a member before it was
    one: a student who joins a team cannot double the team's rate), oldest first."""
    ids = side.member_ids
    return [float(r[0]) for r in store.conn.execute(
        f"SELECT created FROM submissions WHERE league_id=? AND (bot_name=? OR account_id IN ({_in(ids)})) AND "
        "created >= ? ORDER BY created", (league_id, side.name, *ids, since))]


def side_submissions(store: Store, league_id: int, side: Side, *, limit: int = 200) -> list[acc.Submission]:
    """The side's uploads (sent for its bot, by any member), newest first."""
    return [acc.submission(store, r[0]) for r in store.conn.execute(  # type: ignore[misc]
        "SELECT id FROM submissions WHERE league_id=? AND bot_name=? ORDER BY id DESC LIMIT ?",
        (league_id, side.name, limit))]


def side_withdrawn_twin(store: Store, league_id: int, side: Side, files_hash: str) -> acc.Submission | None:
    """A withdrawn submission of these files by any member or for the side's bot (it stays withdrawn)."""
    ids = side.member_ids
    row = store.conn.execute(
        f"SELECT id FROM submissions WHERE league_id=? AND (bot_name=? OR account_id IN ({_in(ids)})) AND "
        "files_hash=? AND status='withdrawn' ORDER BY id DESC LIMIT 1",
        (league_id, side.name, *ids, files_hash)).fetchone()
    return acc.submission(store, row[0]) if row else None


def side_same_upload(store: Store, league_id: int, side: Side, digest: str, before: int = 1 << 62
                     ) -> acc.Submission | None:
    """The side's newest upload of these very files older than ``before`` (None: none)."""
    row = store.conn.execute("SELECT id FROM submissions WHERE league_id=? AND bot_name=? AND digest=? AND id < ? "
                             "ORDER BY id DESC LIMIT 1", (league_id, side.name, digest, before)).fetchone()
    return acc.submission(store, row[0]) if row else None


# -- scrimmages -----------------------------------------------------------------------------------------------
SCRIMMAGE_STATUSES = ("queued", "playing", "done", "failed")


@dataclass(frozen=True)
class Scrimmage:
    id: int
    league_id: int
    asked_by: int
    side: str
    """The bot name of the side that asked."""
    opponent: str
    bot_id: int
    opponent_bot_id: int
    games: int
    status: str
    reason: str
    created: float
    updated: float

    def involves(self, name: str) -> bool:
        return name in (self.side, self.opponent)


_SCRIMMAGE = "id, league_id, asked_by, side, opponent, bot_id, opponent_bot_id, games, status, reason, created, updated"


def add_scrimmage(store: Store, league_id: int, asked_by: int, side: str, opponent: str, bot_id: int,
                  opponent_bot_id: int, games: int, *, per_hour: int, now: float) -> int:
    """Queues a scrimmage and returns its id; 0 when the side asked for ``per_hour`` in the last hour already
    (counted in the same write transaction as the insert: requests sent at once cannot pass it together)."""
    with transaction(store.conn):
        if len(scrimmage_times(store, league_id, side, now - 3600)) >= per_hour:
            return 0
        cur = store.conn.execute(
            "INSERT INTO scrimmages (league_id, asked_by, side, opponent, bot_id, opponent_bot_id, games, created, "
            "updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (league_id, asked_by, side, opponent, bot_id, opponent_bot_id, games, now, now))
    return int(cur.lastrowid or 0)


def scrimmage_times(store: Store, league_id: int, side: str, since: float) -> list[float]:
    """When the side asked for its scrimmages since ``since``, oldest first."""
    return [float(r[0]) for r in store.conn.execute(
        "SELECT created FROM scrimmages WHERE league_id=? AND side=? AND created >= ? ORDER BY created",
        (league_id, side, since))]


def scrimmage(store: Store, scrimmage_id: int) -> Scrimmage | None:
    row = store.conn.execute(f"SELECT {_SCRIMMAGE} FROM scrimmages WHERE id=?", (scrimmage_id,)).fetchone()
    return Scrimmage(*row) if row else None


def scrimmages_of(store: Store, league_id: int, name: str, *, limit: int = 20) -> list[Scrimmage]:
    """The scrimmages a side asked for or was asked to, newest first."""
    return [Scrimmage(*r) for r in store.conn.execute(
        f"SELECT {_SCRIMMAGE} FROM scrimmages WHERE league_id=? AND (side=? OR opponent=?) ORDER BY id DESC LIMIT ?",
        (league_id, name, name, limit))]


def all_scrimmages(store: Store, league_id: int, *, limit: int = 200) -> list[Scrimmage]:
    """The league's scrimmages, newest first (the organisers' list)."""
    return [Scrimmage(*r) for r in store.conn.execute(
        f"SELECT {_SCRIMMAGE} FROM scrimmages WHERE league_id=? ORDER BY id DESC LIMIT ?", (league_id, limit))]


def claim_scrimmage(store: Store, league_id: int) -> Scrimmage | None:
    """The oldest queued scrimmage, marked ``playing`` in the same transaction."""
    with transaction(store.conn):
        row = store.conn.execute("SELECT id FROM scrimmages WHERE league_id=? AND status='queued' ORDER BY id LIMIT 1",
                                 (league_id,)).fetchone()
        if row is None:
            return None
        store.conn.execute("UPDATE scrimmages SET status='playing', updated=? WHERE id=?", (time.time(), row[0]))
    return scrimmage(store, row[0])


def requeue_scrimmages(store: Store, league_id: int) -> int:
    """Scrimmages left ``playing`` by a stopped or killed server go back to the queue (their stored games stay)."""
    with transaction(store.conn):
        return store.conn.execute("UPDATE scrimmages SET status='queued' WHERE league_id=? AND status='playing'",
                                  (league_id,)).rowcount


def finish_scrimmage(store: Store, scrimmage_id: int, status: str, reason: str = "") -> None:
    assert status in SCRIMMAGE_STATUSES
    with transaction(store.conn):
        store.conn.execute("UPDATE scrimmages SET status=?, reason=?, updated=? WHERE id=?",
                           (status, reason, time.time(), scrimmage_id))


def add_scrimmage_game(store: Store, scrimmage_id: int, number: int, seats: list[int], record: dict[str, Any]
                       ) -> None:
    """Stores a scrimmage's game ``number`` (a record's :meth:`GameRecord.to_dict`); a number stored already is
    left as it was (a resumed scrimmage never doubles a game)."""
    with transaction(store.conn):
        store.conn.execute("INSERT OR IGNORE INTO scrimmage_games (scrimmage_id, number, seats, record, finished) "
                           "VALUES (?, ?, ?, ?, ?)", (scrimmage_id, number, json.dumps(seats), json.dumps(record),
                                                      time.time()))


def scrimmage_games(store: Store, s: Scrimmage) -> list[StoredGame]:
    """The scrimmage's stored games by number, as :class:`StoredGame` rows (their ``id`` is the game's number,
    ``round`` too; ``league_id`` the ladder's), so the report's views and replay viewer read them as any game."""
    out = []
    for number, seats, record, finished in store.conn.execute(
            "SELECT number, seats, record, finished FROM scrimmage_games WHERE scrimmage_id=? ORDER BY number",
            (s.id,)):
        r = json.loads(record)
        out.append(StoredGame(number, s.league_id, f"scrimmage {s.id}/{number}", r["game"], r["game"], number,
                              r["seed"], json.loads(seats), r["players"], r["history"], r["returns"],
                              r["terminations"], r["move_seats"], r["wall_times"], r["cpu_times"],
                              load_failures(r["failures"]), r["duration"], r.get("info", {}), False, finished))
    return out


def played_numbers(store: Store, scrimmage_id: int) -> set[int]:
    return {r[0] for r in store.conn.execute("SELECT number FROM scrimmage_games WHERE scrimmage_id=?",
                                             (scrimmage_id,))}
