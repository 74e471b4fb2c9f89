"""Board renderers for the TUI: each game draws its own board (:meth:`games.base.Game.render_board`, in the
game's package), from ``state.observation()`` alone, so the replay viewer works on any state rebuilt from
(spec, history) and the tests can feed hand-made positions. :func:`render` asks the game.

The built-in games' renderers and layout helpers are re-exported here under their old names.
"""
from __future__ import annotations

from typing import Any

import games
from games.base import Game
from games.board import CHANCE, DIM, SEAT_NAMES, SEAT_STYLES, TERMINAL, Names, Observation, seat_style
from games.colosseum.board import COLOSSEUM_MARKS, render_colosseum
from games.doublestep.board import LANE_MAX_CELLS, render_doublestep
from games.hex.board import HEX_MARKS, render_hex
from games.nim.board import NIM_MAX_DRAWN, render_nim
from games.sorry.board import SLIDES, render_sorry, sorry_colours, sorry_layout

__all__ = [
    "CHANCE", "COLOSSEUM_MARKS", "DIM", "HEX_MARKS", "LANE_MAX_CELLS", "NIM_MAX_DRAWN", "SEAT_NAMES",
    "SEAT_STYLES", "SLIDES", "TERMINAL", "render", "render_colosseum", "render_doublestep", "render_hex",
    "render_nim", "render_sorry", "seat_style", "sorry_colours", "sorry_layout",
]


def render(game: Any, obs: Observation, names: Names = None) -> Any:
    """Draws ``obs`` (an observation of ``game``: a Game, or a registry name); ``names`` are the players per
    seat. A game that cannot be found here falls back to the base protocol's board (the observation's
    ``text`` field, else its raw fields)."""
    if isinstance(game, Game):
        return game.render_board(obs, names)
    try:
        cls = games.game_class(str(game))
    except (ValueError, ImportError):
        cls = Game
    return cls.render_board(obs, names)


