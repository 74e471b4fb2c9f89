"""``arena export games --league L [--db PATH] [--csv | --json]``: every game of a league, for a spreadsheet or a
script; ``arena export matches`` and ``arena export placings``: a tournament's matches and places.

Per game: id, time it finished (UTC), game, round, seed, players by seat, returns, terminations, failures with
their reasons, number of moves (bot decisions) and of actions (chance included), and move-time percentiles.
Names and failure details come from bots and users' files: CSV cells go through :func:`arena.text.csv_cell`,
JSON through :func:`arena.text.dumps` (docs/architecture.md, "Untrusted text").
"""
from __future__ import annotations

import csv
import sys
from collections.abc import Sequence
from typing import Any

import click

from arena.commands.locate import LEAGUE_HELP, league_store
from arena.errors import ConfigError
from arena.output import brackets
from arena.output.exports import (
    MATCH_FIELDS,
    PLACING_FIELDS,
    SWISS_FIELDS,
    csv_fields,
    csv_row,
    league_seats,
    match_rows,
    placing_rows,
    rows,
    tournament_csv_row,
)
from arena.text import dumps, shown
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


def _tournament(league: str | None, db: str | None, as_csv: bool, as_json: bool) -> brackets.Tournament:
    if as_csv and as_json:
        raise ConfigError("--json and --csv exclude each other; pick one")
    path, name = league_store(league, db)
    with Store.open(path, readonly=True) as store:  # an export never writes
        lg = store.find_league(name)
        t = brackets.tournament(store, lg, draw=False)
    if t is None:
        raise ConfigError(f"league {shown(lg.name)} is a {shown(lg.config.get('format', 'round_robin'))}, not a "
                          "tournament (format = \"swiss\", \"knockout\" or \"double_elimination\"); "
                          "`arena export games` exports its games")
    return t


def _write(t: brackets.Tournament, key: str, items: list[dict[str, Any]], fields: Sequence[str],
           as_json: bool) -> None:
    out = sys.stdout
    if as_json:
        out.write(dumps({"league": t.league, "format": t.format, "finished": t.finished, key: items}, indent=2)
                  + "\n")
    else:
        writer = csv.DictWriter(out, fieldnames=list(fields), lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        for item in items:
            writer.writerow(tournament_csv_row(item))
    out.flush()


@export.command("matches")
@click.option("--league", "league", metavar="NAME|FILE", default=None, help=LEAGUE_HELP)
@click.option("--db", default=None, metavar="PATH", help="The results store (default: the league file's, else "
              "arena.sqlite).")
@click.option("--csv", "as_csv", is_flag=True, help="CSV, one line per match (the default).")
@click.option("--json", "as_json", is_flag=True, help="JSON: {league, format, finished, matches: [...]}.")
def matches_command(league: str | None, db: str | None, as_csv: bool, as_json: bool) -> None:
    """Print a tournament's matches so far, round by round: both bots, their scores, the winner, how it stands,
    and the ids of its games."""
    t = _tournament(league, db, as_csv, as_json)
    _write(t, "matches", list(match_rows(t)), MATCH_FIELDS, as_json)


@export.command("placings")
@click.option("--league", "league", metavar="NAME|FILE", default=None, help=LEAGUE_HELP)
@click.option("--db", default=None, metavar="PATH", help="The results store (default: the league file's, else "
              "arena.sqlite).")
@click.option("--csv", "as_csv", is_flag=True, help="CSV, one line per bot (the default).")
@click.option("--json", "as_json", is_flag=True, help="JSON: {league, format, finished, placings: [...]}.")
def placings_command(league: str | None, db: str | None, as_csv: bool, as_json: bool) -> None:
    """Print a finished tournament's places (bots sharing a place share its number), with a Swiss tournament's
    points, Buchholz, Sonneborn-Berger and byes; nothing but the header before it is finished."""
    t = _tournament(league, db, as_csv, as_json)
    fields = PLACING_FIELDS + (SWISS_FIELDS if t.format == "swiss" else ())
    _write(t, "placings", placing_rows(t), fields, as_json)
