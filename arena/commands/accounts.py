"""``arena accounts add|import|list|revoke|team|teams --league NAME|FILE``: the course server's accounts and teams
(docs/server.md).

``add`` and ``import`` print one line per new account, ``NAME TOKEN``: the token (256 random bits) is shown this
once; the store keeps only its HMAC (:mod:`leaderboards.accounts`). An account's bot enters the league under the
account's name, so names are checked like bot names and may not be a bot of the league file. A team's members
submit one bot, named as the team (:mod:`leaderboards.teams`): a team name is checked the same way and may not be an
account's name.
"""
from __future__ import annotations

import csv
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from arena.commands.locate import LEAGUE_HELP, is_league_file, league_store
from arena.errors import ConfigError
from arena.text import check_name, shown
from leaderboards import accounts as acc
from leaderboards import ledger
from leaderboards import teams as tm
from leaderboards.store import League, Store

_league = click.option("--league", "league_name", required=True, metavar="NAME|FILE", help=LEAGUE_HELP)
_db = click.option("--db", default=None, metavar="PATH", help="The store (default: the league file's, else "
                   "arena.sqlite).")


@contextmanager
def league_for_accounts(league_name: str, db: str | None) -> Iterator[tuple[Store, League, set[str]]]:
    """The store and league that accounts belong to; with a league FILE the league is created in the store if it
    is not there yet (accounts are usually made before the first `arena serve`). The set: the names of the league
    file's bots (an account may not take one)."""
    path, name = league_store(league_name, db, must_exist=not is_league_file(league_name))
    with ledger.open_store(path, create=is_league_file(league_name)) as store:
        league = store.league(name) if name is not None else None
        reserved: set[str] = set()
        if is_league_file(league_name):
            from arena.league.config import load_config  # start-up: the league schema (pydantic) only for a league file
            cfg = load_config(league_name)
            reserved = {entry.name for entry in cfg.bots}
            if league is None:
                league = store.ensure_league(cfg.name, cfg.to_dict())
        league = league if league is not None else store.find_league(name)
        yield store, league, reserved | {b.name for b in store.bots(league.id) if b.origin == "config"}


def create(store: Store, league: League, reserved: set[str], name: str, *, email: str = "",
           organiser: bool = False) -> str:
    """Checks the name and creates the account; returns its token."""
    name = check_name(name, what="account name")
    if name in reserved:
        raise ConfigError(f"{name!r} is a bot of the league file; an account's bot takes the account's name, pick "
                          "another")
    if tm.team_name_taken(store, league.id, name):  # (an emptied team's too: its bot keeps the name)
        raise ConfigError(f"{name!r} is a team's name (its bot is called so); pick another")
    return acc.add_account(store, league.id, name, email=email, organiser=organiser)[1]


@click.group("accounts")
def accounts() -> None:
    """Accounts of `arena serve`: students and organisers who log in with a token (docs/server.md)."""


@accounts.command("add")
@_league
@_db
@click.option("--organiser", is_flag=True, help="Organiser accounts: every account and submission, and the "
              "organiser's actions.")
@click.argument("names", nargs=-1, required=True)
def add(league_name: str, db: str | None, organiser: bool, names: tuple[str, ...]) -> None:
    """Create accounts NAMES...; prints `NAME TOKEN` per account (the token is shown only now)."""
    checked = [check_name(n, what="account name") for n in names]  # all checked before any is created
    if len(set(checked)) != len(checked):
        raise ConfigError("an account name is given twice")
    with league_for_accounts(league_name, db) as (store, league, reserved):
        for name in checked:
            click.echo(f"{name} {create(store, league, reserved, name, organiser=organiser)}")


@accounts.command("import")
@_league
@_db
@click.argument("roster", type=click.Path(dir_okay=False))
def import_roster(league_name: str, db: str | None, roster: str) -> None:
    """Create an account per row of ROSTER.csv (a `name` column, optional `email`); prints `NAME TOKEN` lines
    (names that have an account already are skipped and said on stderr)."""
    path = Path(roster)
    if not path.is_file():
        raise ConfigError(f"roster {roster} not found (a CSV file with a `name` column)")
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or "name" not in rows[0]:
        raise ConfigError(f"roster {roster} has no `name` column (a header line `name,email`)")
    people = [(check_name(r.get("name") or "", what=f"account name on line {i + 2} of {roster}"),
               (r.get("email") or "").strip()) for i, r in enumerate(rows)]
    with league_for_accounts(league_name, db) as (store, league, reserved):
        for name, email in people:
            if acc.account_named(store, league.id, name) is not None:
                click.echo(f"arena: {shown(name)} has an account already; skipped", err=True)
                continue
            click.echo(f"{name} {create(store, league, reserved, name, email=email)}")


@accounts.command("list")
@_league
@_db
def list_accounts(league_name: str, db: str | None) -> None:
    """List the league's accounts: name, role, state, email, submissions, team (- for none)."""
    with league_for_accounts(league_name, db) as (store, league, _):
        for a in acc.accounts(store, league.id):
            n = len(acc.submissions(store, league.id, a.id))
            side = tm.side_of(store, a)
            click.echo(f"{shown(a.name)}\t{'organiser' if a.organiser else 'student'}\t"
                       f"{'active' if a.active else 'revoked'}\t{shown(a.email) or '-'}\t{n} submissions\t"
                       f"{shown(side.name) if side.is_team else '-'}")


@accounts.command("revoke")
@_league
@_db
@click.argument("name")
def revoke(league_name: str, db: str | None, name: str) -> None:
    """Revoke account NAME: its token and sessions stop working at once, its waiting uploads are withdrawn and its
    bot leaves the league (its games stay)."""
    with league_for_accounts(league_name, db) as (store, league, _):
        account = acc.account_named(store, league.id, name)
        if account is None:
            raise ConfigError(f"no account {name!r} in league {league.name!r}; see `arena accounts list`")
        acc.revoke(store, account.id)
        acc.record_action(store, league.id, "(command line)", "revoke", account.name)
    click.echo(f"{shown(name)}: revoked")


@accounts.command("team")
@_league
@_db
@click.argument("team")
@click.argument("names", nargs=-1, required=True)
def team(league_name: str, db: str | None, team: str, names: tuple[str, ...]) -> None:
    """Make team TEAM of accounts NAMES...: any member submits the team's bot, which plays the ladder under the
    team's name; a member's own bot leaves the ladder. Run again with other NAMES to change the team (an account
    is in one team at most: one in another team moves here)."""
    team = check_name(team, what="team name")
    checked = [check_name(n, what="account name") for n in names]
    if len(set(checked)) != len(checked):
        raise ConfigError("an account name is given twice")
    with league_for_accounts(league_name, db) as (store, league, reserved):
        if team in reserved:
            raise ConfigError(f"{team!r} is a bot of the league file; a team's bot takes the team's name, pick "
                              "another")
        members = []
        for name in checked:
            a = acc.account_named(store, league.id, name)
            if a is None:
                raise ConfigError(f"no account {name!r} in league {league.name!r}; see `arena accounts list`")
            members.append(a)
        made, left = tm.set_team(store, league.id, team, members)
        acc.record_action(store, league.id, "(command line)", "team", made.name,
                          ", ".join(a.name for a in made.members))
    click.echo(f"{shown(made.name)}: {', '.join(shown(a.name) for a in made.members)}"
               + (f" ({', '.join(shown(n) for n in left)} left it)" if left else ""))


@accounts.command("teams")
@_league
@_db
def list_teams(league_name: str, db: str | None) -> None:
    """List the league's teams: name, then its members."""
    with league_for_accounts(league_name, db) as (store, league, _):
        for t in tm.teams(store, league.id):
            click.echo(f"{shown(t.name)}\t{', '.join(shown(a.name) for a in t.members)}")
