"""``arena final --league LADDER --format knockout --from-ladder [-o FILE]``: a course's final from its ladder."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import click

from arena.commands.locate import LEAGUE_HELP, league_store
from arena.errors import ConfigError
from arena.text import shown
from arena.tournament import FORMATS
from arena.tournament.finals import final_table
from leaderboards.store import Store


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=True)  # a TOML basic string: JSON's escapes are TOML's


@click.command("final")
@click.option("--league", "league_name", metavar="NAME|FILE", required=True, help=LEAGUE_HELP + " The ladder.")
@click.option("--db", default=None, metavar="PATH", help="The store (default: the league file's, else arena.sqlite).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="knockout",
              show_default=True, help="The final's format (docs/tournaments.md).")
@click.option("--from-ladder", is_flag=True, required=True,
              help="The field: the current version of every bot submitted to the ladder, seeded by its ratings.")
@click.option("--game", "games", metavar="SPEC", multiple=True,
              help="The final's games (repeat for several; default: the ladder's). Maps the ladder never played, "
                   "e.g. --game 'colosseum(size=12)'.")
@click.option("--games-per-pairing", type=click.IntRange(1, 1000), default=2, show_default=True,
              help="Games of each game spec in a match.")
@click.option("--name", "final_name", metavar="NAME", default=None, help="The final's league name (default: the "
              "ladder's name followed by 'final').")
@click.option("-o", "--output", metavar="FILE", default=None,
              help="The league file to write (default: final.toml; an existing file is not overwritten).")
def final(league_name: str, db: str | None, fmt: str, from_ladder: bool, games: tuple[str, ...],
          games_per_pairing: int, final_name: str | None, output: str | None) -> None:
    """Write the league file of a course's final: every submitted bot's current version in the ladder, seeded by
    the ladder's ratings, in the same database (so `arena serve`, `arena bracket` and the report see it). Run it
    with `arena league run FILE`; its games and limits may differ from the ladder's."""
    path, name = league_store(league_name, db)
    with Store.open(str(path), readonly=True) as store:
        ladder = store.find_league(name)
        entrants = [b for b in store.bots(ladder.id, include_retired=False, source=False)
                    if b.origin == "submit" and b.status == "active"]
    if len(entrants) < 2:
        raise ConfigError(f"league {shown(ladder.name)} has {len(entrants)} submitted bots in play; a final needs at "
                          "least 2 (bots on probation or withdrawn do not enter)")
    target = Path(output or "final.toml")
    if target.exists():
        raise ConfigError(f"{shown(str(target))} exists; pass -o NEW.toml (a final's file is written once)")
    table = final_table(ladder.config, path.resolve(), fmt, games, games_per_pairing, final_name)
    limits = table.pop("limits", {})
    text = "".join(f"{k} = {_toml(v)}\n" for k, v in table.items())
    if limits:
        text += "[limits]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in limits.items())
    from arena.league.config import parse_config  # start-up: the league schema only when a file is written
    parse_config(tomllib.loads(text), base=target.parent, where=str(target))  # what is written loads
    target.write_text(text)
    click.echo(f"wrote {shown(str(target))}: {fmt.replace('_', ' ')} of {len(entrants)} bots from "
               f"{shown(ladder.name)}; play it with `arena league run {shown(str(target))}`, watch it with "
               f"`arena bracket --league {shown(str(target))}`")
