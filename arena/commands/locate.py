"""Where a viewer command's league lives: ``--league`` takes a league NAME or the league FILE itself.

With the file, the store is found the way ``arena league run`` finds it (``--db``, else the file's
``database``, else arena.sqlite in the current directory), so ``arena leaderboard --league course.toml`` works
whatever ``database`` the file sets. Used by ``leaderboard``, ``tui``, ``export`` and ``report``.
"""
from __future__ import annotations

from pathlib import Path

from arena.errors import ConfigError
from leaderboards.store import DEFAULT_DB

LEAGUE_HELP = "The league: its NAME, or its league FILE (the store is then found as `arena league run` finds it)."


def is_league_file(value: str) -> bool:
    return value.endswith(".toml") or Path(value).is_file()


def league_store(league: str | None, db: str | None) -> tuple[Path, str | None]:
    """(the store's path, the league's name or None for "the only one") for ``--league`` and ``--db``.

    Raises:
        ConfigError: a league file that does not load; or no store where one was looked for, with what to pass.
    """
    if league is not None and is_league_file(league):
        # start-up: the league schema (pydantic) only when a league file is read
        from arena.league import load_config
        cfg = load_config(league)  # the same checks and the same database as `arena league run`
        return (Path(db) if db else (cfg.database or Path(DEFAULT_DB))), cfg.name
    path = Path(db or DEFAULT_DB)
    if not path.exists():
        hint = "" if db else " (a league file that sets `database`: pass the file, e.g. --league course.toml)"
        raise ConfigError(f"no store at {path}; pass --db PATH or run `arena league run LEAGUE.toml` first{hint}")
    return path, league
