"""``arena export games --league L [--db PATH] [--csv | --json]``: every game of a league, for a spreadsheet or a
script.

Per game: id, time it finished (UTC), game, round, seed, players by seat, returns, terminations, failures with
their reasons, number of moves (bot decisions) and of actions (chance included), and move-time percentiles.
Names and failure details come from bots and users' files: CSV cells go through :func:`arena.text.csv_cell`,
JSON through :func:`arena.text.dumps` (docs/architecture.md, "Untrusted text").
"""
from __future__ import annotations

import csv
import sys

import click

from arena.commands.locate import LEAGUE_HELP, league_store
from arena.errors import ConfigError
from arena.output.exports import csv_fields, csv_row, league_seats, rows
from arena.text import dumps
from leaderboards.store import Store


@click.group("export")
def export() -> None:
    """Export a league's results (docs/report.md)."""


@export.command("games")
@click.option("--league", "league", metavar="NAME|FILE", default=None, help=LEAGUE_HELP)
@click.option("--db", default=None, metavar="PATH", help="The results store (default: the league file's, else "
              "arena.sqlite).")
@click.option("--csv", "as_csv", is_flag=True, help="CSV, one line per game (the default).")
@click.option("--json", "as_json", is_flag=True, help="JSON: {league, games: [...]} with every failure's full detail.")
def games_command(league: str | None, db: str | None, as_csv: bool, as_json: bool) -> None:
    """Print every game of a league: id, time, game, players by seat, returns, terminations, failures with their
    reasons, number of moves and move-time percentiles."""
    if as_csv and as_json:
        raise ConfigError("--json and --csv exclude each other; pick one")
    path, name = league_store(league, db)
    out = sys.stdout
    with Store.open(path, readonly=True) as store:  # an export never writes
        lg = store.find_league(name)
        if as_json:  # streamed: a 100,000-game league is not held in memory twice
            out.write('{"league": ' + dumps(lg.name) + ', "games": [')
            for i, row in enumerate(rows(store, lg.id)):
                out.write(("," if i else "") + "\n" + dumps(row))
            out.write("\n]}\n")
        else:
            seats = league_seats(lg.config)
            writer = csv.DictWriter(out, fieldnames=csv_fields(seats), lineterminator="\n", extrasaction="ignore")
            writer.writeheader()
            for row in rows(store, lg.id):
                writer.writerow(csv_row(row))
    out.flush()
