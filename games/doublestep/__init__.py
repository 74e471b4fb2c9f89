"""Double Step, Althöfer's race on two lanes (rules: shared/specs/games.md)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from games.base import Game, check
from games.doublestep._doublestep import DoubleStepState
from games.spec import Param

__all__ = ["DoubleStepGame", "DoubleStepState"]

MAX_LENGTH = 100_000
PASS_BOUND = 4
"""With ``overshoot=pass``, a game lasts at most this many times the two lanes' lengths (max_game_length)."""


class DoubleStepGame(Game):
    name: ClassVar[str] = "doublestep"
    description: ClassVar[str] = "race on two lanes, steps of 1 or 2; first to land exactly on its goal wins"
    length_rule: ClassVar[str] = ("forbid: at most length0 + length1 moves (each advances a stone); pass: a "
                                  "player 1 square away may pass for ever, so a game ends as a draw after "
                                  f"{PASS_BOUND} x (length0 + length1) moves")
    params: ClassVar[dict[str, Param]] = {
        "length": Param(int, 10, "both lanes' length (squares to the goal)", min=1, max=MAX_LENGTH),
        "length0": Param(int, None, "player 0's lane length (DSR-k-vs-m); overrides length", min=1, max=MAX_LENGTH),
        "length1": Param(int, None, "player 1's lane length; overrides length", min=1, max=MAX_LENGTH),
        "overshoot": Param(str, "pass", "a 2-step from 1 square away: pass (Rafiq) or forbid (Althöfer)",
                           choices=("pass", "forbid")),
    }

    def lengths(self) -> tuple[int, int]:
        base = self.param("length")
        l0, l1 = self.param("length0"), self.param("length1")
        return (base if l0 is None else l0, base if l1 is None else l1)

    def _validate(self) -> None:
        check(not ("length" in self._given and ("length0" in self._given or "length1" in self._given)),
              "give either length or length0/length1, not both")

    @classmethod
    def render_board(cls, observation: Mapping[str, Any], names: Sequence[str] | None = None) -> Any:
        from games.doublestep.board import render_doublestep  # start-up: Rich, only when a board is drawn
        return render_doublestep(observation, names)

    def new_initial_state(self) -> DoubleStepState:
        l0, l1 = self.lengths()
        return DoubleStepState(self, l0, l1, self.param("overshoot") == "pass")

    def num_distinct_actions(self) -> int:
        return 3

    def max_game_length(self) -> int:
        """``forbid``: every move advances a stone, so at most the two lengths. ``pass``: a player 1 square away
        may pass for ever, so the rule bounds the game at four times the lengths (twice the longest game without
        passes, which no game of honest players reaches): the referee ends it there as a draw."""
        if self.param("overshoot") == "forbid":
            return sum(self.lengths())
        return PASS_BOUND * sum(self.lengths())
