"""The game registry: spec string -> Game. Game modules are imported on first use.

Three sources, looked up in this order:

1. arena's own games (below) and games registered in this process with :func:`register`;
2. installed packages that declare an ``arena.games`` entry point (``name = "module:Class"``): the public way
   to add a game from outside the repository (docs/adding-a-game.md). Entry points are read from the
   installed distributions' metadata, so the referee, a sandboxed bot process (which sees site-packages),
   a league and the TUI all find the same games;
3. ``openspiel:<name>(params)``: any game ``pyspiel.load_game`` accepts (:mod:`games.openspiel`).
"""
from __future__ import annotations

import importlib
from functools import lru_cache

from games.base import Game
from games.errors import GameSpecError
from games.spec import parse_spec

ENTRY_POINT_GROUP = "arena.games"
OPENSPIEL_PREFIX = "openspiel:"

# name -> "module:Class" (or a class registered in-process). Aliases map to the same class.
_GAMES: dict[str, str | type[Game]] = {
    "doublestep": "games.doublestep:DoubleStepGame",
    "nim": "games.nim:NimGame",
    "hex": "games.hex:HexGame",
    "colosseum": "games.colosseum:ColosseumGame",
    "sorry": "games.sorry:SorryGame",
}


@lru_cache(maxsize=1)
def _entry_points() -> dict[str, str]:
    """name -> "module:Class" of every installed ``arena.games`` entry point (read once per process)."""
    # start-up: read once, only when a name is not a built-in game
    from importlib.metadata import entry_points
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def register(name: str, target: str | type[Game]) -> None:
    """Registers a game in this process under ``name`` (``"module:Class"`` or the class itself).

    Only this process sees it: a sandboxed bot process rebuilds the game from its spec, so a game meant for
    bot files or leagues is installed as a package with an ``arena.games`` entry point instead.

    Raises:
        GameSpecError: ``name`` is not a valid spec name or is already taken by another game.
    """
    if not isinstance(name, str) or parse_spec(name) != (name, {}):
        raise GameSpecError(f"cannot register game {name!r}: a game name is letters, digits and _")
    known = _GAMES.get(name) or _entry_points().get(name)
    if known is not None and known != target:
        raise GameSpecError(f"cannot register game {name!r}: the name is taken by {known}")
    _GAMES[name] = target


def game_names() -> list[str]:
    """Every registered game name (arena's own first, then installed entry points)."""
    return list(_GAMES) + [n for n in _entry_points() if n not in _GAMES]


def game_class(name: str) -> type[Game]:
    """The Game class for a name.

    Raises:
        GameSpecError: unknown name (the message lists the valid ones).
    """
    if name == "openspiel":  # the class of every openspiel: game (the sandbox's fork server preloads it by name)
        # start-up: the OpenSpiel adapter loads only for openspiel: games
        from games.openspiel import OpenSpielGame, import_pyspiel
        import_pyspiel()
        return OpenSpielGame
    target = _GAMES.get(name) or _entry_points().get(name)
    if target is None:
        raise GameSpecError(f"unknown game {name!r}; valid games: {', '.join(game_names())}, "
                            "or openspiel:NAME") from None
    if not isinstance(target, str):
        return target
    module, cls = target.split(":")
    try:
        return getattr(importlib.import_module(module), cls)
    except ImportError as exc:  # an extension that was not compiled, or a broken installed game
        if module.startswith("games."):
            raise ImportError(f"game {name!r} is not built ({exc}); reinstall arena with `pip install .`") from exc
        raise ImportError(f"game {name!r} (entry point {target}) cannot be imported: {exc}") from exc


def has_draws(spec_or_name: str) -> bool:
    """Whether a game's rules allow a draw (``Game.has_draws``), from its spec or name. A game that is not
    installed here (a stored league of a removed game) counts as having none."""
    if spec_or_name.startswith(OPENSPIEL_PREFIX):
        # start-up: the OpenSpiel adapter loads only for openspiel: games
        from games.openspiel import OpenSpielGame
        return OpenSpielGame.has_draws
    try:
        return bool(game_class(spec_or_name.split("(", 1)[0].strip()).has_draws)
    except (GameSpecError, ImportError):
        return False


def load(spec: str | Game) -> Game:
    """Builds a game from a spec string such as ``hex(size=11,pie=true)`` or ``openspiel:tic_tac_toe``.

    Raises:
        GameSpecError (a ValueError): unknown game or parameter, bad value, malformed spec, or an
            ``openspiel:`` game when open_spiel is not installed.
    """
    if isinstance(spec, Game):
        return spec
    if isinstance(spec, str) and spec.strip().startswith(OPENSPIEL_PREFIX):
        # start-up: the OpenSpiel adapter loads only for openspiel: games
        from games.openspiel import OpenSpielGame
        return OpenSpielGame.from_spec(spec.strip()[len(OPENSPIEL_PREFIX):])
    name, params = parse_spec(spec)
    if name == "openspiel":
        raise GameSpecError(
            f"{spec!r}: an OpenSpiel game is written openspiel:NAME(params), e.g. openspiel:tic_tac_toe")
    return game_class(name)(**params)
