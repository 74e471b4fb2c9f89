"""``arena tui [--db PATH] [--league NAME]``: the live dashboard."""
from __future__ import annotations

import click

from leaderboards.store import DEFAULT_DB


@click.command("tui")
@click.option("--db", "db", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False),
              help="The results store (SQLite) to show.")
@click.option("--league", default=None, metavar="NAME", help="The league to show first (default: the first one).")
@click.option("--poll", default=0.5, show_default=True, type=click.FloatRange(min=0.05),
              help="Seconds between checks of the store for new games.")
def tui(db: str, league: str | None, poll: float) -> None:
    """Open the dashboard: live leaderboard, head-to-head, games with replays, bot details.

    It only reads the store, so it can run next to `arena league run` writing the same file. A missing
    or empty store shows a message and the dashboard waits for it.
    """
    from arena.tui.app import ArenaApp  # textual is imported only when the command runs

    ArenaApp(db, league=league, poll_interval=poll).run()
