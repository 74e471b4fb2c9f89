"""Task functions run by :class:`arena.experiments.core.Runner` workers (module level, so they pickle).

Each takes its cell's arguments, then ``n_games`` and the task's ``seed``, and returns a count vector
``[wins of seat 0, ..., wins of seat k-1, draws]``.
"""
from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import bots
import games
from arena.experiments.core import TIE_CODES, derive_seed
from bots._selfplay import play_mc_games
from bots.base import Limit

# The module (the package's ``arena.play`` is the function), so a test's patch of its ``play`` is seen.
_PLAY = importlib.import_module("arena.referee.loop")


@lru_cache(maxsize=64)
def _game(spec: str) -> Any:

    return games.load(spec)


def mc_games(spec: str, ns: Sequence[int], ties: Sequence[str], n_games: int, seed: int) -> list[int]:
    """Seat s is MC(ns[s]) (0: uniformly random) with tie rule ties[s]; whole games played in C
    (``bots._selfplay``)."""
    state = _game(spec).new_initial_state()
    return play_mc_games(state, list(ns), [TIE_CODES[t] for t in ties], n_games, seed)


def bot_games(spec: str, bot_specs: Sequence[str], max_moves: int | None, n_games: int, seed: int) -> list[int]:
    """Seat s is ``bots.make(bot_specs[s])``: games through the in-process referee (``arena.play``)."""
    play = _PLAY.play  # looked up per call: the experiment tests record games by patching arena.referee.loop.play
    game = _game(spec)
    k = len(bot_specs)
    counts = [0] * (k + 1)
    for g in range(n_games):
        players = [bots.make(b, game, s, derive_seed(seed, g, s)) for s, b in enumerate(bot_specs)]
        record = play(game, players, seed=derive_seed(seed, g, "chance"), max_moves=max_moves)
        winner = record.winner()
        counts[k if winner is None else winner] += 1
    return counts


def rotation_games(spec_template: str, a_spec: str, b_spec: str, max_moves: int | None, move_time: float,
                   n_deals: int, seed: int) -> list[int]:
    """Bot A against bot B in every other seat, in duplicate: each of ``n_deals`` deals is one set-up seed
    (``{seed}`` in ``spec_template``: Colosseum's board, Sorry!'s options) and one chance seed, played once
    with A in each seat (k games for k players), so every bot sits in every seat equally often on the same
    boards and chance streams. ``move_time`` > 0 gives every move that many seconds (bots without an
    iteration count use it). Returns [A's wins, the others' wins, draws] over the ``n_deals * k`` games."""
    play = _PLAY.play  # looked up per call: the experiment tests record games by patching arena.referee.loop.play
    limit = Limit(time=move_time) if move_time > 0 else None

    counts = [0, 0, 0]
    for g in range(n_deals):
        game = games.load(spec_template.format(seed=derive_seed(seed, g, "setup") % 2**31))
        k = game.num_players()
        chance = derive_seed(seed, g, "chance")
        for a_seat in range(k):
            # A keeps its seed across seats; each B seat its own, the same in every game of the deal.
            players = [bots.make(a_spec, game, s, derive_seed(seed, g, "a")) if s == a_seat
                       else bots.make(b_spec, game, s, derive_seed(seed, g, "b", s)) for s in range(k)]
            winner = play(game, players, seed=chance, max_moves=max_moves, limit=limit).winner()
            counts[2 if winner is None else (0 if winner == a_seat else 1)] += 1
    return counts


def deals_for(games_wanted: int, players: int) -> int:
    """Deals of ``players`` games each that give at least ``games_wanted`` games (a seat rotation is whole)."""
    return max(1, -(-games_wanted // players))
