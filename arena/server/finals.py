"""A course's final on ``arena serve``: an organiser starts it from /admin; the ladder's loop plays it (the ladder's
own games wait meanwhile: a course ends with its final); /bracket shows it as it is played.

The final is a tournament league of its own in the ladder's database (:mod:`arena.tournament.finals`: the same
league ``arena final`` would write), so it survives a restart: the next start finds it unfinished and plays on.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from arena.errors import ConfigError
from arena.league.config import LeagueConfig, parse_config
from arena.league.planning import stored_config
from arena.tournament import finals
from arena.tournament.progress import current, is_tournament
from leaderboards.schema import League
from leaderboards.store import Store

MAX_GAMES_PER_PAIRING = 100
FORMATS = finals.FORMATS


def final_of(store: Store, ladder: str) -> League | None:
    """The final of league ``ladder`` (a tournament named after it that takes its field from it), or None."""
    lg = store.league(finals.final_name(ladder))
    if lg is None or not is_tournament(lg.config) or lg.config.get("tournament", {}).get("field_from") != ladder:
        return None
    return lg


def due(store: Store, ladder: LeagueConfig, db: Path) -> LeagueConfig | None:
    """The ladder's final while it is not finished (the ladder's loop plays it), else None."""
    lg = final_of(store, ladder.name)
    if lg is None:
        return None
    state = current(store, lg.id, lg.config)
    if state is not None and state.finished:
        return None
    try:
        return parse_config(finals.table_of(lg.config, db), where=f"the final of {ladder.name}")
    except ConfigError as exc:  # (a store edited by hand: the ladder goes on, the organiser is told)
        print(f"arena serve: the final cannot be played: {exc}", file=sys.stderr, flush=True)
        return None


def bracket_league(store: Store, ladder: str) -> League:
    """The league /bracket shows: the served league when it is a tournament, else its final when there is one."""
    lg = store.find_league(ladder)
    if is_tournament(lg.config):
        return lg
    return final_of(store, ladder) or lg


def ladder_pages(store: Store, ladder: str, shown: League) -> Callable[[int], str]:
    """A bot's page for a bracket of league ``shown``: the ladder's page of the bot of that name (a final's bots are
    copies of the ladder's, which have the pages)."""
    if shown.name == ladder:
        return lambda b: f"/bots/{int(b)}"
    lg = store.find_league(ladder)
    ladder_ids = {b.name: b.id for b in store.bots(lg.id, include_retired=False, source=False)}
    names = {b.id: b.name for b in store.bots(shown.id, source=False)}
    return lambda b: f"/bots/{ladder_ids.get(names.get(int(b), ''), 0)}"


def start(store: Store, ladder: LeagueConfig, db: Path, fmt: str, games: list[str], games_per_pairing: str) -> None:
    """Starts the ladder's final (the ladder's loop plays it once woken).

    Raises:
        ConfigError: one line for the organiser: a final exists, too few bots, a bad format, game or number."""
    if final_of(store, ladder.name) is not None or store.league(finals.final_name(ladder.name)) is not None:
        raise ConfigError("this ladder has a final already (one final per ladder: its bracket is on /bracket)")
    if fmt not in finals.FORMATS:
        raise ConfigError(f"format {fmt!r} is not a final's format; pick one of {', '.join(finals.FORMATS)}")
    try:
        gpp = int(games_per_pairing or "2")
    except ValueError:
        gpp = 0
    if not 1 <= gpp <= MAX_GAMES_PER_PAIRING:
        raise ConfigError(f"games per pairing must be a whole number from 1 to {MAX_GAMES_PER_PAIRING}")
    lg = store.find_league(ladder.name)
    entrants = [b for b in store.bots(lg.id, include_retired=False, source=False)
                if b.origin == "submit" and b.status == "active"]
    if len(entrants) < 2:
        raise ConfigError(f"the ladder has {len(entrants)} submitted bots in play; a final needs at least 2")
    table = finals.final_table(lg.config, db, fmt, games, gpp)
    config = parse_config(table, where="the final")
    store.ensure_league(config.name, stored_config(store, config))
