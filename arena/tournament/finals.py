"""A course's final: a tournament of a ladder's submitted bots, in the ladder's database (``arena final`` and the
organiser's button on ``arena serve``'s /admin). Both build the final's league-file table here, from the ladder's
stored config, so a final started either way is the same league."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.tournament import FORMATS

__all__ = ["FORMATS", "final_name", "final_table", "table_of"]  # (FORMATS: a final may have every tournament's)


def final_name(ladder: str) -> str:
    return f"{ladder} final"


def final_table(ladder: Mapping[str, Any], database: Path, fmt: str, games: Sequence[str] = (),
                games_per_pairing: int = 2, name: str | None = None) -> dict[str, Any]:
    """The league-file table of a final of the ladder whose stored config is ``ladder``: every submitted, active bot
    of the ladder (``field_from``), seeded by its ratings, with its seed and limits, playing ``games`` (default: the
    ladder's)."""
    limits = {k: v for k, v in ladder.get("limits", {}).items() if v is not None}
    return {"name": name or final_name(str(ladder["name"])), "games": list(games) or list(ladder.get("games", [])),
            "format": fmt, "games_per_pairing": games_per_pairing, "seed": int(ladder.get("seed", 0)),
            "database": str(database), "field_from": ladder["name"], "seeding": "ratings",
            "seeding_league": ladder["name"], **({"limits": limits} if limits else {})}


def table_of(stored: Mapping[str, Any], database: Path) -> dict[str, Any]:
    """The league-file table a tournament's stored config (``LeagueConfig.to_dict``) was made from, for a final
    with no league file (one started on ``arena serve``): the keys that decide its games."""
    fmt = stored["format"]
    keys = {"seeding", "seeding_league", "field_from"} | (
        {"rounds", "bye_points"} if fmt == "swiss" else
        {"tiebreak_games", "sudden_death"} | ({"bracket_reset"} if fmt == "double_elimination" else set()))
    t = {k: v for k, v in stored.get("tournament", {}).items() if k in keys and v is not None}
    limits = {k: v for k, v in stored.get("limits", {}).items() if v is not None}
    return {"name": stored["name"], "games": list(stored["games"]), "format": stored["format"],
            "games_per_pairing": stored["games_per_pairing"], "seed": stored["seed"], "database": str(database),
            "on_failure": stored.get("on_failure", "lose"), **t, **({"limits": limits} if limits else {})}
