"""``arena league release BOT --league NAME|FILE [--db PATH]``: lift a bot's probation as it is.

For a bot whose failures were not its fault (a machine that was overloaded, a limit the organiser has since
raised). A bot that was at fault is better fixed: a changed file or spec enters a new version, which starts
active (docs/leagues.md, "Submissions and probation").
"""
from __future__ import annotations

import click

from arena.commands.locate import LEAGUE_HELP, league_store
from arena.errors import ConfigError
from arena.text import shown
from leaderboards import ledger
from leaderboards.store import DEFAULT_DB


@click.command("release")
@click.argument("bot")
@click.option("--league", "league_name", metavar="NAME|FILE", default=None,
              help=LEAGUE_HELP + " Needed when the store holds several leagues.")
@click.option("--db", default=None, metavar="PATH",
              help=f"The results store (default: the league file's, else {DEFAULT_DB}).")
def release(bot: str, league_name: str | None, db: str | None) -> None:
    """Lift the probation of BOT (its current version): the next `arena league run` plays its games again,
    and its failure count starts afresh."""
    path, league_name = league_store(league_name, db)
    with ledger.open_store(path) as store:
        league = store.find_league(league_name)
        current = store.current_bot(league.id, bot)
        if current is None:
            raise ConfigError(f"no bot {bot!r} in league {league.name}; `arena leaderboard --all` lists them")
        if current.status != "probation":
            raise ConfigError(f"{current.label} is not on probation ({current.status}); nothing to lift")
        store.release_bot(current.id)
    click.echo(f"{shown(current.label)}: probation lifted in league {shown(league.name)} (it was: "
               f"{shown(current.status_reason)}); run `arena league run` on the league file to play its games")
