"""Validation of a submitted bot before it enters a league (``arena submit``): for each game of the league, one
game from every seat against ``random``, through the real sandboxed referee and the league's limits.

Every seat, because a league plays every seat equally often: a bot that crashes only in seat 1 passed a
seat-0 validation and then failed half of its league games.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import games as games_pkg
from arena.league.task import Task, TaskFailure, play_task
from arena.limits import Limits
from arena.results.records import headline


def validation_games(bot: str, name: str, files: Mapping[str, Any], config: Mapping[str, Any]
                     ) -> Iterator[tuple[str, int, Any]]:
    """(game spec, the bot's seat, task) for each validation game, in the order they are played.

    Args:
        bot: the bot as a task names it (``file:<digest>``).
        name: its display name in the records.
        files: what the task carries for ``bot`` (digest -> snapshot).
        config: the league's stored config (games, seed, limits).
    """
    limits = Limits.from_dict(config.get("limits", {}))
    for i, spec in enumerate(config.get("games", [])):
        k = games_pkg.load(spec).num_players()
        for seat in range(k):
            bots = tuple(bot if s == seat else "random" for s in range(k))
            names = tuple(name if s == seat else "random" for s in range(k))
            yield spec, seat, Task(key=f"validate|{spec}|{seat}", game=spec, round=0, seats=tuple(range(k)),
                                   bots=bots, names=names, seed=int(config.get("seed", 0)) + i, limits=limits,
                                   on_failure="lose", files=dict(files))


def validate(bot: str, name: str, files: Mapping[str, Any], config: Mapping[str, Any]) -> str | None:
    """Plays the validation games (:func:`validation_games`) until one fails.

    Returns:
        None when the bot passed every game from every seat, else the reason it was refused.
    """
    return verdict(bot, name, files, config)[0]


def verdict(bot: str, name: str, files: Mapping[str, Any], config: Mapping[str, Any],
            play: Callable[[Task], Any] | None = None) -> tuple[str | None, str]:
    """:func:`validate` with the failure's whole detail (the bot's own traceback, for its author), each game
    played by ``play`` (default: here; ``arena serve`` plays them in a worker process of its own).

    Returns:
        (None, "") when the bot passed, else (the one-line reason, the detail).
    """
    for spec, seat, task in validation_games(bot, name, files, config):
        record = (play or play_task)(task)
        if isinstance(record, TaskFailure):
            return f"the referee could not play the validation game of {spec}: {record.error}", ""
        reason = record.terminations[seat]
        if reason != "normal":
            details = [f.detail for f in record.failures if f.seat == seat]
            detail = headline(details[0]) if details and details[0] else record.info.get("error", "")
            syntax = _SYNTAX.match(detail)
            if syntax:  # the bot never ran: its code does not parse (named so, not a crash of the bot)
                kind, message, file, line = syntax.groups()
                what = "syntax error" if kind == "SyntaxError" else f"syntax error ({kind})"
                return f"{what} in {file}, line {line}: {message[:200]}", "\n".join(d for d in details if d)
            return (f"{reason} in its validation game of {spec} from seat {seat}" +
                    (f" ({detail[:300]})" if detail else ""), "\n".join(d for d in details if d))
    return None, ""


_SYNTAX = re.compile(r"(SyntaxError|IndentationError|TabError): (.*) \(at (?:/bot/)?(.+?), line (\d+)(?:, in .*)?\)$")
"""A failure's headline (:func:`arena.results.records.headline`) when the bot's own code does not parse."""
