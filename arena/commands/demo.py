"""``arena demo [--db PATH] [--concurrency N] [--fresh]``: the README's main job in one command.

A small league of built-in bots on two games, played with the real runner (sandboxed bots, the store,
TrueSkill), ending with the leaderboard and the head-to-head matrix. Re-running it resumes (instant when
it is complete); ``--fresh`` plays it again from scratch.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from leaderboards import ledger
from leaderboards.store import DEFAULT_DB

# The same league as examples/leagues/demo.toml (a test keeps them equal).
DEMO: dict[str, Any] = {
    "name": "demo",
    "games": ["nim", "hex(size=5)"],
    "games_per_pairing": 8,
    "seed": 2026,
    "bots": [
        {"name": "random", "spec": "random"},
        {"name": "greedy", "spec": "greedy", "games": ["nim"]},
        {"name": "mc-100", "spec": "mc(n=100)"},
        {"name": "uct-300", "spec": "uct(iterations=300)"},
    ],
}


@click.command("demo")
@click.option("--db", default=DEFAULT_DB, show_default=True, metavar="PATH", help="The results store.")
@click.option("--concurrency", "-j", type=click.IntRange(min=1), default=None,
              help="Games at once (default: the number of cores).")
@click.option("--fresh", is_flag=True, help="Forget the demo league's stored games and play it again.")
def demo(db: str, concurrency: int | None, fresh: bool) -> None:
    """Play a small league of built-in bots on Nim and Hex 5x5 and print the leaderboard."""
    # start-up: the league schema (pydantic) only when a league file is read
    from arena.commands.league import play_and_report
    from arena.league.config import parse_config

    config = parse_config(DEMO, where="demo league")
    if fresh and Path(db).exists():
        with ledger.open_store(db) as store:
            store.delete_league(config.name)
    click.echo(f"arena demo: {len(config.bots)} built-in bots on {' and '.join(config.games)}, "
               f"{config.games_per_pairing} games per pairing, store {db}")
    play_and_report(config, db=db, concurrency=concurrency, h2h=True)
    click.echo(f"next: `arena leaderboard --db {db}`, `arena replay GAME_ID --db {db}`, `arena tui --db {db}`")
