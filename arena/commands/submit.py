"""``arena submit FILE --league NAME [--name NAME] [--db PATH]``: validate a bot file and enter it.

Exit status: 0 entered; 2 usage errors (missing file, unknown league or store, a name taken by the league
file); 1 the bot was refused (it failed its validation games), with the reason.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from arena.errors import ArenaError, ConfigError
from arena.text import check_name, shown
from leaderboards.store import DEFAULT_DB, Store


class BotRefused(ArenaError):
    """The submitted bot failed validation (exit status 1)."""


@click.command("submit")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--league", "league_name", required=True, metavar="NAME", help="The league to enter.")
@click.option("--name", metavar="NAME", default=None, help="Display name (default: the file name without .py).")
@click.option("--db", default=DEFAULT_DB, show_default=True, metavar="PATH", help="The results store.")
def submit(file: str, league_name: str, name: str | None, db: str) -> None:
    """Validate a bot file in the sandbox (it loads and plays each league game against random within the
    league's limits), store a copy, and enter it: the next `arena league run` plays only its games."""
    path = Path(file)
    if not path.is_file():
        raise ConfigError(f"bot file {file} not found")
    if path.suffix != ".py":
        raise ConfigError(f"a bot is a Python file defining class Bot; {file} does not end in .py")
    source = path.read_text()
    # checked where it enters: a name is shown by every command and the dashboard (length, printable)
    name = check_name(name, what="bot name (--name)") if name is not None else \
        check_name(path.stem, what="bot name (the file's name)", hint="; pass --name NAME")
    with Store.open(db) as store:
        league = store.find_league(league_name)
        current = store.current_bot(league.id, name)
        if current is not None and current.origin == "config":
            raise ConfigError(f"{name!r} is a bot of the league file; submit under another --name")
        problem = validate(path.name, source, league.config)
        if problem:
            raise BotRefused(f"bot {name!r} refused: {problem}")
        bot, new = store.upsert_bot(league.id, name, origin="submit", filename=path.name, source=source,
                                    reactivate=True)
    what = f"entered as {bot.label}" if new else f"unchanged ({bot.label}); probation lifted" \
        if current is not None and current.status == "probation" else f"unchanged ({bot.label})"
    click.echo(f"{shown(name)}: passed validation, {shown(what)} in league {shown(league.name)}; "
               f"run `arena league run` on the league file to play its games")


def validate(filename: str, source: str, config: dict[str, Any]) -> str | None:
    """Plays, for each league game, one game from every seat against ``random`` through the referee
    (:mod:`arena.validation`: a league plays every seat, so validation does).

    Returns:
        None when the bot passed, else the reason it was refused.
    """
    from arena.validation import validate as play_validation
    from leaderboards.store import content_hash
    digest = content_hash(source)
    return play_validation(f"file:{digest}", filename, {digest: (filename, source)}, config)
