"""Validation of a submitted bot before it enters a league (``arena submit``, ``arena serve``): for each game of the
league, one game from every seat, through the real sandboxed referee and the league's limits.

Every seat, because a league plays every seat equally often: a bot that crashes only in seat 1 would pass a
seat-0 validation and then fail half of its league games.

Nothing a bot sees tells a validation game from a league game: the same game specs and limits, the league's secret
chance key, a seed drawn like a league game's (62 bits, derived from that key, so unpredictable), and opponents drawn
from the league's reference bots (its built-in bots) as league opponents are (:func:`reference_bots`). A bot that
plays well only in validation would otherwise be accepted and then fail in the league.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import games as games_pkg
from arena.league.task import Task, TaskFailure, play_task
from arena.limits import Limits
from arena.referee.openings import OpeningBook
from arena.results.records import headline


def reference_bots(store: Any, league_id: int) -> list[str]:
    """The league's built-in bots in play (the league file's ``spec`` bots): the opponents a validation game draws
    from, as a league game's table does. Empty: validation plays ``random``."""
    return sorted({b.spec for b in store.bots(league_id)
                   if b.kind == "builtin" and b.spec and b.status != "retired"})


def _draws(key: bytes | None, bot: str, spec: str, seat: int) -> Iterator[int]:
    """64-bit numbers keyed by the league's secret (a fresh secret without one): the same submission validated
    again meets the same games, and nobody without the key can predict them."""
    secret = key if key is not None else secrets.token_bytes(32)
    for i in range(1_000):
        digest = hmac.new(secret, f"validate|{bot}|{spec}|{seat}|{i}".encode(), hashlib.sha256).digest()
        yield int.from_bytes(digest[:8], "big")


def validation_games(bot: str, name: str, files: Mapping[str, Any], config: Mapping[str, Any], *,
                     key: bytes | None = None, opponents: Sequence[str] = (), book: OpeningBook | None = None
                     ) -> Iterator[tuple[str, int, Any]]:
    """(game spec, the bot's seat, task) for each validation game, in the order they are played.

    Args:
        bot: the bot as a task names it (``file:<digest>``).
        name: its display name in the records.
        files: what the task carries for ``bot`` (digest -> snapshot).
        config: the league's stored config (games, limits).
        key: the league's chance key (:meth:`leaderboards.store.Store.chance_key`): keys the games' chance and
            seeds as in the league.
        opponents: built-in bot specs to draw each other seat from (:func:`reference_bots`; empty: ``random``).
        book: the league's openings (the league file's; None: the stored config's random openings, if any), so
            a validation game starts as a league game does.
    """
    limits = Limits.from_dict(config.get("limits", {}))
    plies = (config.get("openings") or {}).get("plies")
    book = book if book is not None else OpeningBook(plies=int(plies)) if plies is not None else None
    field = list(opponents) or ["random"]
    for spec in config.get("games", []):
        k = games_pkg.load(spec).num_players()
        for seat in range(k):
            draws = _draws(key, bot, spec, seat)
            seed = next(draws) >> 2  # a league game's seed: 0 .. 2**62-1 (arena.league.schedule.game_seed)
            others = {s: field[next(draws) % len(field)] for s in range(k) if s != seat}
            opening = book.opening(spec, seed, next(draws) % 1_000_000) if book is not None else ()
            bots = tuple(bot if s == seat else others[s] for s in range(k))
            names = tuple(name if s == seat else others[s] for s in range(k))
            yield spec, seat, Task(key=f"validate|{spec}|{seat}", game=spec, round=0, seats=tuple(range(k)),
                                   bots=bots, names=names, seed=seed, limits=limits, on_failure="lose",
                                   files=dict(files), chance_key=key, opening=opening)


def validate(bot: str, name: str, files: Mapping[str, Any], config: Mapping[str, Any], *,
             key: bytes | None = None, opponents: Sequence[str] = (), book: OpeningBook | None = None) -> str | None:
    """Plays the validation games (:func:`validation_games`) until one fails.

    Returns:
        None when the bot passed every game from every seat, else the reason it was refused.
    """
    return verdict(bot, name, files, config, key=key, opponents=opponents, book=book)[0]


def verdict(bot: str, name: str, files: Mapping[str, Any], config: Mapping[str, Any],
            play: Callable[[Task], Any] | None = None, *, key: bytes | None = None,
            opponents: Sequence[str] = (), book: OpeningBook | None = None) -> tuple[str | None, str]:
    """:func:`validate` with the failure's whole detail (the bot's own traceback, for its author), each game
    played by ``play`` (default: here; ``arena serve`` plays them in a worker process of its own).

    Returns:
        (None, "") when the bot passed, else (the one-line reason, the detail).
    """
    for spec, seat, task in validation_games(bot, name, files, config, key=key, opponents=opponents, book=book):
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
