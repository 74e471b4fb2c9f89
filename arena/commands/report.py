"""``arena report --league L --out DIR``: a league's results as static files to hand out (docs/report.md); the
pages are :mod:`arena.output.report`'s."""
from __future__ import annotations

from pathlib import Path

import click

from arena.commands.locate import LEAGUE_HELP, league_store
from arena.errors import ConfigError
from arena.output.report import write_report
from arena.text import shown
from leaderboards.store import Store


@click.command("report")
@click.option("--league", "league", metavar="NAME|FILE", default=None, help=LEAGUE_HELP)
@click.option("--db", default=None, metavar="PATH", help="The results store (default: the league file's, else "
              "arena.sqlite).")
@click.option("--out", "out_dir", required=True, metavar="DIR", type=click.Path(file_okay=False),
              help="Folder to write the report into (created; files an earlier report wrote are replaced or "
                   "removed, other files are left alone).")
@click.option("--replays", default=2000, show_default=True, type=click.IntRange(min=0), metavar="N",
              help="Replays of the newest N games (each game is listed on its bots' pages in any case).")
def report(league: str | None, db: str | None, out_dir: str, replays: int) -> None:
    """Write a league's report: a static HTML leaderboard, one page per bot (results, head-to-head, every failure
    with its traceback and game id, slowest moves) and a replay viewer. Open DIR/index.html in a browser; the
    folder works from disk or any web host."""
    path, name = league_store(league, db)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a folder")
    with Store.open(path, readonly=True) as store:  # a report never writes the store
        pages, replayed = write_report(store, name, out, replays)
    click.echo(f"report written to {shown(out)}: index.html (leaderboard), {pages} bot pages in bots/, "
               f"replay.html ({replayed} replays)")
