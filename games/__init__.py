"""arena's game engines: ``games.load(spec)`` gives a Game; ``game.new_initial_state()`` a State.

The rules of each game are compiled (Cython) and share one State API, written once in
:mod:`games._core`; compiled bots drive the same states through ``games/_core.pxd``.
"""
from __future__ import annotations

from games.base import CHANCE, TERMINAL, Action, Game, Player
from games.errors import GameSpecError, IllegalActionError, InvalidActionError
from games.registry import game_class, game_names, load

__all__ = [
    "CHANCE", "TERMINAL", "Action", "Game", "Player", "GameSpecError", "IllegalActionError",
    "InvalidActionError", "game_class", "game_names", "load",
]
