"""``arena submit BOT --league NAME [--name NAME] [--db PATH] [--max-bot-mb MB]``: validate a bot and enter it.

BOT is a ``.py`` file or a folder with ``bot.py``; it enters as a snapshot (:mod:`arena.submissions.snapshot`) of at
most ``--max-bot-mb`` (default: the league's ``max_bot_mb``).

Exit status: 0 entered; 2 usage errors (missing file, unknown league or store, a name taken by the league
file); 1 the bot was refused (it failed its validation games), with the reason.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from arena.commands.locate import league_store
from arena.errors import ArenaError, ConfigError
from arena.limits import Limits, LimitType
from arena.submissions.snapshot import MB, Snapshot
from arena.submissions.take import take
from arena.text import check_name, shown
from leaderboards import ledger
from leaderboards.store import DEFAULT_DB


class BotRefused(ArenaError):
    """The submitted bot failed validation (exit status 1)."""


@click.command("submit")
@click.argument("file", type=click.Path())
@click.option("--league", "league_name", required=True, metavar="NAME|FILE",
              help="The league to enter: its name, or its league file (the store is then found as `arena league run` "
                   "finds it).")
@click.option("--name", metavar="NAME", default=None,
              help="Display name (default: the file's name without .py, or the folder's name).")
@click.option("--db", default=None, metavar="PATH",
              help=f"The results store (default: the league file's, else {DEFAULT_DB}).")
@click.option("--max-bot-mb", type=LimitType("max_bot_mb"), default=None, metavar="MB",
              help="Largest bot (file or folder) accepted, in MB (default: the league's max_bot_mb).")
def submit(file: str, league_name: str, name: str | None, db: str | None, max_bot_mb: float | None = None) -> None:
    """Validate a bot (a .py file, or a folder with bot.py and its helper modules) in the sandbox (it loads and
    plays each league game from every seat against the league's built-in bots within the league's limits, as a
    league game: it cannot tell the two apart), store a snapshot of it, and enter it:
    the next `arena league run` plays only its games."""
    from arena.adapters import comp424  # start-up: the COMP 424 adapter and the duplicate check only when submitting
    from arena.adapters.comp424_names import is_agent_arg
    from arena.submissions.duplicates import twins, warning
    from arena.submissions.validation import reference_bots
    from arena.tournament.progress import frozen_field, is_tournament
    path = Path(comp424.parse_agent_arg(file)[0] if is_agent_arg(file) else file)  # comp424:PATH[@agent]
    if not path.exists():
        raise ConfigError(f"bot {file} not found (a .py file or a folder with bot.py)")
    # checked where it enters: a name is shown by every command and the dashboard (length, printable)
    name = check_name(name, what="bot name (--name)") if name is not None else \
        check_name(path.stem if path.is_file() else path.resolve().name, what="bot name (the file's name)",
                   hint="; pass --name NAME")
    path_db, found_name = league_store(league_name, db)
    with ledger.open_store(path_db) as store:
        league = store.find_league(found_name)
        if max_bot_mb is None:
            max_bot_mb = Limits.from_dict(league.config.get("limits", {})).max_bot_mb
        snapshot = (comp424.enter(file, int(max_bot_mb * MB)) if is_agent_arg(file)  # what is validated is
                    else take(file, max_bytes=int(max_bot_mb * MB)))  # what is stored and played
        if is_tournament(league.config) and frozen_field(store, league.id) is not None:
            raise ConfigError(f"league {shown(league.name)} is a tournament under way: its field was fixed when it "
                              "started, so a bot entered now would play no game; submit to the ladder instead")
        current = store.current_bot(league.id, name)
        if current is not None and current.origin == "config":
            raise ConfigError(f"{name!r} is a bot of the league file; submit under another --name")
        problem = validate(snapshot, league.config, store.chance_key(league.id), reference_bots(store, league.id),
                           league_book(league.config))
        if problem:
            raise BotRefused(f"bot {name!r} refused: {problem}")
        bot, new = store.upsert_bot(league.id, name, origin="submit", snapshot=snapshot, reactivate=True)
        same = twins(bot, store.bots(league.id), store.snapshot) if new else []
    if same:  # flagged, not refused: the organiser decides (arena/submissions/duplicates.py)
        click.echo(warning(bot, same), err=True)
    what = f"entered as {bot.label}" if new else f"unchanged ({bot.label}); probation lifted" \
        if current is not None and current.status == "probation" else f"unchanged ({bot.label})"
    click.echo(f"{shown(name)}: passed validation, {shown(what)} in league {shown(league.name)}; "
               f"run `arena league run` on the league file to play its games")


def league_book(config: dict[str, Any]) -> Any:
    """The league's openings book when it is a file (the store keeps only its name and size): read again from the
    league file the store names, so validation starts from the league's openings too; None when unreadable (then
    validation plays from the start: docs/leagues.md says so)."""
    if not (config.get("openings") or {}).get("file") or not config.get("path"):
        return None
    from arena.league.config import load_config  # start-up: the league schema only for a league with a book file
    try:
        return load_config(config["path"]).openings
    except ArenaError as exc:
        click.echo(f"arena: warning: the league's openings book could not be read ({shown(str(exc))}); validation "
                   "plays from the start", err=True)
        return None


def validate(snapshot: Snapshot, config: dict[str, Any], key: bytes | None = None,
             opponents: list[str] | None = None, book: Any = None) -> str | None:
    """Plays, for each league game, one game from every seat against the league's reference bots through the
    referee, as league games are played (:mod:`arena.submissions.validation`: a league plays every seat, so
    validation does; nothing a bot sees tells the two apart).

    Returns:
        None when the bot passed, else the reason it was refused.
    """
    # start-up: the sandboxed validation only when asked
    from arena.submissions.validation import validate as play_validation
    return play_validation(f"file:{snapshot.digest}", snapshot.name, {snapshot.digest: snapshot}, config, key=key,
                           opponents=opponents or (), book=book)
