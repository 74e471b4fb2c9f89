"""Where a viewer command's league lives: ``--league`` takes a league NAME or the league FILE itself.

With the file, the store is found the way ``arena league run`` finds it (``--db``, else the file's
``database``, else arena.sqlite in the current directory), so ``arena leaderboard --league course.toml`` works
whatever ``database`` the file sets. Used by every command that reads a store: ``leaderboard``, ``tui``,
``export``, ``report``, ``replay``, ``submit`` and ``league release`` (tests/arena/league/test_league_file_everywhere.py
checks that each command with ``--db`` has this ``--league``).
"""
from __future__ import annotations

from pathlib import Path

from arena.errors import ConfigError
from leaderboards.store import DEFAULT_DB

LEAGUE_HELP = "The league: its NAME, or its league FILE (the store is then found as `arena league run` finds it)."


def is_league_file(value: str) -> bool:
    return value.endswith(".toml") or Path(value).is_file()


def league_store(league: str | None, db: str | None, *, must_exist: bool = True) -> tuple[Path, str | None]:
    """(the store's path, the league's name or None for "the only one") for ``--league`` and ``--db``.

    ``must_exist=False`` for the dashboard, which waits for a store that is not there yet.

    Raises:
        ConfigError: a league file that does not load; or no store where one was looked for, with what to pass.
    """
    if league is not None and is_league_file(league):
        # start-up: the league schema (pydantic) only when a league file is read
        from arena.league.config import load_config
        cfg = load_config(league)  # the same checks and the same database as `arena league run`
        path = Path(db) if db else (cfg.database or Path(DEFAULT_DB))
        if must_exist and not path.exists():  # (a writer such as `league release` would create an empty one)
            raise ConfigError(f"no store at {path} (the store of {league}): run `arena league run {league}` first")
        return path, cfg.name
    path = Path(db or DEFAULT_DB)
    if must_exist and not path.exists():
        hint = "" if db else " (a league file that sets `database`: pass the file, e.g. --league course.toml)"
        raise ConfigError(f"no store at {path}; pass --db PATH or run `arena league run LEAGUE.toml` first{hint}")
    return path, league
