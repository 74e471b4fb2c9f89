"""greedy (Nim, Telepchuk 2020): take ``pile mod (k+1)`` when that is not zero, else take 1."""
from __future__ import annotations

from typing import Any, ClassVar

from bots.base import BaseBot, Limit
from games.spec import Param


class GreedyNimBot(BaseBot):
    """Nim only: leave the opponent a multiple of k+1 (perfect play in plain Nim)."""

    name: ClassVar[str] = "greedy"
    params: ClassVar[dict[str, Param]] = {}

    @staticmethod
    def supports(game: Any, params: dict[str, Any]) -> str | None:
        if game.name != "nim":
            return "greedy plays only Nim (valid bots for every game: random, mc, hmc, uct, mcts_reuse, determinized)"
        return None

    def step(self, state: Any, limit: Limit) -> int:
        obs = state.observation()
        take = obs["pile"] % (obs["k"] + 1)
        return take if take > 0 else 1
