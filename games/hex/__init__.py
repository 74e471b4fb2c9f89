"""Hex on an N x N rhombus, with OpenSpiel's conventions and an optional pie rule
(rules: shared/specs/games.md; conventions and playouts: docs/hex.md)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from games.base import Game
from games.hex._hex import SWAP_NAME, HexState, playouts_fill, playouts_move_by_move
from games.spec import Param

__all__ = ["HexGame", "HexState", "SWAP_NAME", "playouts_fill", "playouts_move_by_move"]

MIN_SIZE, MAX_SIZE = 2, 25   # 25: one column letter per column (a..y)


class HexGame(Game):
    name: ClassVar[str] = "hex"
    description: ClassVar[str] = "connect your two sides of an N x N rhombus; x: top-bottom, o: left-right"
    length_rule: ClassVar[str] = "at most N*N moves (+1 for the swap): each fills a cell, a full board has a winner"
    params: ClassVar[dict[str, Param]] = {
        "size": Param(int, 7, "board size N (N x N cells)", min=MIN_SIZE, max=MAX_SIZE),
        "pie": Param(bool, False, "pie rule: player 1's first decision may be 'swap' (action N*N)"),
    }

    @property
    def size(self) -> int:
        return int(self.param("size"))

    @classmethod
    def render_board(cls, observation: Mapping[str, Any], names: Sequence[str] | None = None) -> Any:
        from games.hex.board import render_hex  # start-up: Rich, only when a board is drawn
        return render_hex(observation, names)

    def observation_arrays(self, state: Any) -> dict[str, Any]:
        """As every game's, with ``board`` as an ``(N, N)`` int8 array (-1 empty, 0 x, 1 o; row r, column c)."""
        arrays = super().observation_arrays(state)
        arrays["board"] = arrays["board"].astype("int8").reshape(self.size, self.size)
        return arrays

    def openspiel_twin(self) -> str:
        """OpenSpiel's ``hex`` with this board and rule: the same action numbers, move for move (tested)."""
        return f"hex(board_size={self.size},swap={'true' if self.param('pie') else 'false'})"

    def new_initial_state(self) -> HexState:
        return HexState(self, self.size, bool(self.param("pie")))

    def num_distinct_actions(self) -> int:
        """N*N cells plus the swap id N*N (present even without the pie rule, so ids are stable)."""
        return self.size * self.size + 1

    def max_game_length(self) -> int:
        return self.size * self.size + (1 if self.param("pie") else 0)
