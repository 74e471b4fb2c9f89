"""Single-pile Nim and its coin variant (rules: shared/specs/games.md)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from games.base import Game
from games.nim._nim import HEADS, TAILS, NimState
from games.seeding import seeded_int
from games.spec import Param

__all__ = ["NimGame", "NimState", "HEADS", "TAILS"]

MAX_PILE = 100_000


class NimGame(Game):
    name: ClassVar[str] = "nim"
    description: ClassVar[str] = "single-pile Nim: take 1..k counters, whoever takes the last one wins"
    length_rule: ClassVar[str] = "at most n moves: each takes at least one counter"
    params: ClassVar[dict[str, Param]] = {
        "n": Param(int, None, "starting pile (default: drawn uniformly from 20..50 by seed)", min=1, max=MAX_PILE),
        "k": Param(int, 3, "most counters one move may take", min=1, max=1000),
        "coin": Param(bool, False, "coin variant: after each move, heads removes one more counter"),
        "seed": Param(int, 0, "seed of the random starting pile", min=0, max=2**63 - 1),
    }

    @property
    def has_chance(self) -> bool:  # type: ignore[override]
        return bool(self.param("coin"))

    def starting_pile(self) -> int:
        n = self.param("n")
        return n if n is not None else seeded_int(self.param("seed"), 20, 50)

    @classmethod
    def render_board(cls, observation: Mapping[str, Any], names: Sequence[str] | None = None) -> Any:
        from games.nim.board import render_nim  # start-up: Rich, only when a board is drawn
        return render_nim(observation, names)

    def new_initial_state(self) -> NimState:
        return NimState(self, self.starting_pile(), self.param("k"), self.param("coin"))

    def num_distinct_actions(self) -> int:
        return self.param("k") + 1

    def max_game_length(self) -> int:
        return self.starting_pile()
