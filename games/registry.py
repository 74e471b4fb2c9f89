"""The game registry: spec string -> Game. Game modules are imported on first use."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from games.errors import GameSpecError
from games.spec import parse_spec

if TYPE_CHECKING:
    from games.base import Game

# name -> "module:Class". Aliases map to the same class.
_GAMES: dict[str, str] = {
    "doublestep": "games.doublestep:DoubleStepGame",
    "nim": "games.nim:NimGame",
    "hex": "games.hex:HexGame",
    "colosseum": "games.colosseum:ColosseumGame",
    "sorry": "games.sorry:SorryGame",
}


def game_names() -> list[str]:
    """Every registered game name."""
    return list(_GAMES)


def game_class(name: str) -> type["Game"]:
    """The Game class for a name.

    Raises:
        GameSpecError: unknown name (the message lists the valid ones).
    """
    try:
        target = _GAMES[name]
    except KeyError:
        raise GameSpecError(f"unknown game {name!r}; valid games: {', '.join(_GAMES)}") from None
    module, cls = target.split(":")
    try:
        return getattr(importlib.import_module(module), cls)
    except ImportError as exc:  # an extension that was not compiled
        raise ImportError(f"game {name!r} is not built ({exc}); reinstall arena with `pip install .`") from exc


def load(spec: "str | Game") -> "Game":
    """Builds a game from a spec string such as ``hex(size=11,pie=true)``.

    Raises:
        GameSpecError (a ValueError): unknown game or parameter, bad value, malformed spec.
    """
    from games.base import Game
    if isinstance(spec, Game):
        return spec
    name, params = parse_spec(spec)
    return game_class(name)(**params)
