"""random: a uniformly random legal action."""
from __future__ import annotations

import random
from typing import Any, ClassVar

from bots.base import BaseBot, Limit
from games.spec import Param


class RandomBot(BaseBot):
    """A uniformly random legal action."""

    name: ClassVar[str] = "random"
    params: ClassVar[dict[str, Param]] = {}

    def __init__(self, game: Any, seat: int, seed: int) -> None:
        super().__init__(game, seat, seed)
        self._rng = random.Random(seed)

    def step(self, state: Any, limit: Limit) -> int:
        return self._rng.choice(state.legal_actions())
