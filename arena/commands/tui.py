"""``arena tui [--db PATH] [--league NAME]``: the live dashboard."""
from __future__ import annotations

import click

from arena.commands.locate import is_league_file, league_store
from leaderboards.store import DEFAULT_DB


@click.command("tui")
@click.option("--db", "db", default=None, type=click.Path(dir_okay=False),
              help=f"The results store (SQLite) to show (default: the league file's, else {DEFAULT_DB}).")
@click.option("--league", default=None, metavar="NAME|FILE",
              help="The league to show first (default: the first one): its name, or its league file (the store is "
                   "then found as `arena league run` finds it).")
@click.option("--poll", default=0.5, show_default=True, type=click.FloatRange(min=0.05),
              help="Seconds between checks of the store for new games.")
def tui(db: str | None, league: str | None, poll: float) -> None:
    """Open the dashboard: live leaderboard, head-to-head, games with replays, bot details.

    It only reads the store, so it can run next to `arena league run` writing the same file. A missing
    or empty store shows a message and the dashboard waits for it.
    """
    if league is not None and is_league_file(league):
        path, league = league_store(league, db, must_exist=False)  # the dashboard waits for the store
        db = str(path)
    from arena.tui.app import ArenaApp  # start-up: textual is imported only when the command runs

    ArenaApp(db or DEFAULT_DB, league=league, poll_interval=poll).run()
