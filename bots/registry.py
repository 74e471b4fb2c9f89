"""The bot registry: ``make(spec, game, seat, seed)`` builds a built-in bot from a spec string.

Each bot class declares ``params`` (the same :class:`games.spec.Param` schema as games) and an optional
``supports(game)`` check. Bot modules are imported on first use.
"""
from __future__ import annotations

import importlib
from typing import Any

import games as games_pkg
from games._core import CoreState
from games.errors import GameSpecError
from games.spec import parse_spec, resolve_params

# name -> ("module:Class", fixed parameters). mcts_reuse is uct with reuse=true.
_BOTS: dict[str, tuple[str, dict[str, Any]]] = {
    "random": ("bots.random_bot:RandomBot", {}),
    "greedy": ("bots.greedy:GreedyNimBot", {}),
    "mc": ("bots.flat_mc:FlatMCBot", {}),
    "hmc": ("bots.nested_mc:NestedMCBot", {}),
    "uct": ("bots.uct:UCTBot", {}),
    "mcts_reuse": ("bots.uct:UCTBot", {"reuse": True}),
    "determinized": ("bots.determinized:DeterminizedBot", {}),
    "openspiel:random": ("bots.openspiel_bots:OpenSpielRandomBot", {}),
    "openspiel:mcts": ("bots.openspiel_bots:OpenSpielMCTSBot", {}),
}
OPENSPIEL_PREFIX = "openspiel:"


# The generic path (bots/generic.py): the same bot names over the public State API, for games whose states are
# not compiled (OpenSpiel games, games from outside arena). Bots without one name it in their refusal.
_GENERIC: dict[str, str] = {
    "mc": "bots.generic:GenericMCBot",
    "uct": "bots.generic:GenericUCTBot",
    "mcts_reuse": "bots.generic:GenericUCTBot",
}
_COMPILED_ONLY = {"hmc": "mc or uct", "determinized": "uct"}


def is_compiled(game: Any) -> bool:
    """Whether ``game``'s states are arena's compiled states (the fast path of mc, hmc, uct, determinized)."""
    return isinstance(game.new_initial_state(), CoreState)


def _generic(name: str, game: Any) -> type | None:
    """The generic class of bot ``name`` for a game without compiled states (None: use the registered class).

    Raises:
        GameSpecError: a compiled-only bot asked to play such a game.
    """
    if (name not in _GENERIC and name not in _COMPILED_ONLY) or is_compiled(game):
        return None
    if name in _COMPILED_ONLY:
        raise GameSpecError(f"bot {name!r} cannot play {game}: it needs one of arena's compiled games "
                            f"(try {_COMPILED_ONLY[name]} instead: it has a generic path)")
    module, cls = _GENERIC[name].split(":")
    return getattr(importlib.import_module(module), cls)


def bot_names() -> list[str]:
    return list(_BOTS)


def bot_class(name: str) -> tuple[type, dict[str, Any]]:
    """The class and fixed parameters for a bot name.

    Raises:
        GameSpecError: unknown bot (lists the valid names).
    """
    try:
        target, fixed = _BOTS[name]
    except KeyError:
        raise GameSpecError(f"unknown bot {name!r}; valid bots: {', '.join(_BOTS)} (or a path to a bot file)") from None
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls), fixed


def parse_bot_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Validates a bot spec without a game: returns (name, every parameter's value).

    Raises:
        GameSpecError: malformed spec, unknown bot or parameter, bad value.
    """
    prefix = OPENSPIEL_PREFIX if isinstance(spec, str) and spec.strip().startswith(OPENSPIEL_PREFIX) else ""
    name, raw = parse_spec(spec.strip()[len(prefix):] if prefix else spec)
    name = prefix + name
    cls, fixed = bot_class(name)
    schema = getattr(cls, "params", {})
    for key in fixed:
        if key in raw:
            raise GameSpecError(f"parameter {key!r} is fixed for bot {name!r}")
    params = resolve_params(f"bot {name!r}", schema, raw)
    params.update(fixed)
    return name, params


def make(spec: str, game: Any, seat: int, seed: int) -> Any:
    """Builds a built-in bot for ``seat`` of ``game`` from a spec such as ``uct(iterations=2000,c=annealed)``.

    Raises:
        GameSpecError (a ValueError): unknown bot or parameter, bad value, or a bot that cannot play this game.
    """
    game = games_pkg.load(game) if isinstance(game, str) else game
    name, params = parse_bot_spec(spec)
    cls = _generic(name, game) or bot_class(name)[0]
    supports = getattr(cls, "supports", None)
    if supports is not None:
        problem = supports(game, params)
        if problem:
            raise GameSpecError(f"bot {name!r} cannot play {game}: {problem}")
    if not 0 <= seat < game.num_players():
        raise GameSpecError(f"seat {seat} does not exist in {game} (seats 0..{game.num_players() - 1})")
    return cls(game, seat, seed, **params)
