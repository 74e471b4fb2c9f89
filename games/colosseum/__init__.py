"""Colosseum Survival!, the McGill COMP 424 (2022) game (rules: shared/specs/colosseum.md; docs/colosseum.md)."""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from games.base import Game
from games.colosseum._colosseum import DIRECTION_NAMES, ColosseumState
from games.seeding import seeded_int
from games.spec import Param

__all__ = ["ColosseumGame", "ColosseumState", "DIRECTION_NAMES", "MIN_SIZE", "MAX_SIZE", "max_step"]

MIN_SIZE, MAX_SIZE = 3, 20
# M = 2 cannot be set up: its one symmetric wall pair always walls the mirrored players apart (spec §3
# would rebuild forever), so 3 is the smallest board.
DEFAULT_SIZES = (6, 12)
"""The default size is drawn uniformly from this inclusive range (the handout's "between 6 and 12")."""


def max_step(size: int) -> int:
    """K, the most steps one turn may walk: (M + 1) // 2."""
    return (size + 1) // 2


class ColosseumGame(Game):
    name: ClassVar[str] = "colosseum"
    description: ClassVar[str] = ("walk up to (M+1)//2 steps and build a wall; "
                                  "when the players are walled apart, the bigger region wins")
    length_rule: ClassVar[str] = "at most 2M(M-1) - 2K moves: each builds one of the interior walls not standing yet"
    params: ClassVar[dict[str, Param]] = {
        "size": Param(int, None, "board side M (default: drawn uniformly from 6..12 by seed)",
                      min=MIN_SIZE, max=MAX_SIZE),
        "seed": Param(int, 0, "seed of the random board (and of the default size)", min=0, max=2**63 - 1),
    }
    has_draws: ClassVar[bool] = True
    """Equal regions are a tie."""

    def board_size(self) -> int:
        """M: the ``size`` parameter, or a uniform draw from 6..12 determined by ``seed``."""
        size = self.param("size")
        return size if size is not None else seeded_int(self.param("seed"), *DEFAULT_SIZES)

    @classmethod
    def render_board(cls, observation: Mapping[str, Any], names: Sequence[str] | None = None) -> Any:
        from games.colosseum.board import render_colosseum  # start-up: Rich, only when a board is drawn
        return render_colosseum(observation, names)

    def new_initial_state(self) -> ColosseumState:
        return ColosseumState(self, self.board_size(), self.param("seed"))

    def num_distinct_actions(self) -> int:
        return self.board_size() ** 2 * 4

    def observation_arrays(self, state: Any) -> dict[str, Any]:
        """As every game's, with ``walls`` unpacked from the state's wall bytes (``games.colosseum.arrays``:
        about 3x faster than converting the nested lists)."""
        # start-up: numpy only for the bots that ask for arrays
        import numpy as np

        from games.colosseum.arrays import chess_board, positions
        return {"walls": chess_board(state), "positions": positions(state), "size": np.asarray(state.size),
                "max_step": np.asarray(state.max_step), "scores": np.asarray(state.scores()),
                "current_player": np.asarray(state.current_player())}

    def substitute_action(self, state: Any, legal: Sequence[int], rng: random.Random) -> int:
        """The COMP424 engine's own rule for a failed agent: its random walk (spec §5), drawn from ``rng``."""
        return int(state.random_walk_action(rng.getrandbits(63)))

    def max_game_length(self) -> int:
        # Every move builds one of the 2M(M-1) interior walls; 2K of them stand at the start.
        m = self.board_size()
        return 2 * m * (m - 1) - 2 * max_step(m)
