"""League files for the tests, written in one place: a test names only what differs from the usual small league
(Nim, two games a pairing, the built-in random and greedy bots, limits roomy enough for a loaded machine)."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

ROOMY_LIMITS: Mapping[str, Any] = {"move_time": 2.0, "first_move_time": 20.0}
"""Limits no honest bot misses on a loaded 2-core machine (a timeout in these tests would be the machine's)."""
BUILT_INS: tuple[Mapping[str, Any], ...] = ({"spec": "random"}, {"spec": "greedy"})


def toml_value(value: Any) -> str:
    """``value`` as TOML: booleans, numbers, strings (escaped as JSON escapes them, which TOML reads) and lists."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Sequence):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def bot_tables(bots: Sequence[Mapping[str, Any]]) -> str:
    """``[[bots]]`` tables, one per mapping (``{"spec": "random"}``, ``{"name": "mine", "file": "mine.py"}``)."""
    return "".join("[[bots]]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in bot.items()) for bot in bots)


def league_toml(name: str, *, seed: int, database: str | None = None, games: Sequence[str] = ("nim",),
                games_per_pairing: int = 2, limits: Mapping[str, Any] | None = ROOMY_LIMITS,
                bots: Sequence[Mapping[str, Any]] = BUILT_INS, **keys: Any) -> str:
    """A league file: ``name``, ``games``, ``games_per_pairing``, ``seed``, ``database`` (when given) and any other
    top-level ``keys`` (``probation_after=0``), then ``[limits]`` (None: the league's defaults) and the bots."""
    top = {"name": name, "games": list(games), "games_per_pairing": games_per_pairing, "seed": seed}
    if database is not None:
        top["database"] = database
    text = "".join(f"{k} = {toml_value(v)}\n" for k, v in {**top, **keys}.items())
    if limits is not None:
        text += "[limits]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in limits.items())
    return text + bot_tables(bots)
