"""Openings: games that start from varied positions (a league's ``openings = { plies = N }`` or ``{ file = ... }``).

Two deterministic bots replay one game forever; an opening makes each round's games different while keeping the
pairing fair. A fixture's opening depends only on its game spec, its seed and its round, so every seat rotation of
a table in a round (the games that share a seed, :mod:`arena.league.schedule`) starts from the same opening: each
opening is played once in each seat order.

- ``plies = N``: N legal moves drawn uniformly at random from a generator seeded by the fixture's seed (public,
  like the seed: an opening is no secret). It stops early rather than end the game or cross a chance node (the
  game's chance stays keyed by the league's secret).
- ``file``: one opening per line, actions as integers; round r plays line ``r mod lines``.

The opening is applied before the first decision (bots are told its moves as they are told an opponent's), is
recorded in the game record (``info["opening"]``), and ``arena replay --verify`` checks the stored history starts
with it.

This module is the book and its use, imported by every game's referee (bot processes and the sandbox's fork
server included: it stays light). Reading a book from a league file or ``arena match --openings`` is
:mod:`arena.league.opening_books`.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import games as games_pkg


@dataclass(frozen=True)
class OpeningBook:
    """A league's openings: random ones of ``plies`` moves, or the ``lines`` of a file."""

    plies: int | None = None
    lines: tuple[tuple[int, ...], ...] = ()
    file: str | None = None

    def opening(self, game: str, seed: int, round_: int) -> tuple[int, ...]:
        """The opening of the fixtures of ``game`` with ``seed`` in ``round_``."""
        if self.plies is not None:
            return random_opening(game, self.plies, seed)
        return self.lines[round_ % len(self.lines)] if self.lines else ()

    def to_dict(self) -> dict[str, Any]:
        return {"plies": self.plies} if self.plies is not None else {"file": self.file, "lines": len(self.lines)}


def seeded(game: str, seed: int) -> Any:
    """The game as the referee plays it with ``seed`` (its seed parameter set)."""
    g = games_pkg.load(game)
    return g.with_params(seed=seed) if "seed" in g.params else g


def random_opening(game: str, plies: int, seed: int) -> tuple[int, ...]:
    """Up to ``plies`` uniformly random legal moves from the start of ``game`` seeded by ``seed``."""
    rng = random.Random(f"opening|{game}|{seed}")  # (str seeds are hashed with SHA-512: stable across runs)
    state = seeded(game, seed).new_initial_state()
    moves: list[int] = []
    while len(moves) < plies and not state.is_terminal() and state.current_player() >= 0:
        legal = state.legal_actions()
        action = rng.choice(legal)
        after = state.clone()
        after.apply_action(action)
        if after.is_terminal():
            break  # an opening never decides the game
        moves.append(action)
        state = after
    return tuple(moves)


def apply_opening(state: Any, opening: Sequence[int]) -> list[int]:
    """Plays the opening's moves on ``state`` while each is legal, never ending the game; returns the moves played
    (what the record keeps). Chance nodes are not crossed: an opening lists decisions from the start."""
    played: list[int] = []
    for action in opening:
        if state.is_terminal() or state.current_player() < 0 or action not in state.legal_actions():
            break
        after = state.clone()
        after.apply_action(action)
        if after.is_terminal():
            break
        state.apply_action(action)
        played.append(action)
    return played

