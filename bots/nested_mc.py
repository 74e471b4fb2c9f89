"""hmc: nested ("high level") Monte Carlo, HMC(n) (Rafiq 2013).

MC(n) whose playouts are played by MC(n) one level down, by every player, chance sampled:
``level=1`` is ``mc``, ``level=2`` is Rafiq's HMC(n), ``level=3`` plays its playouts with HMC(n), ...
A decision costs about ``(n * actions * game length)^(level-1)`` random playouts times ``n * actions``,
so the whole recursion is compiled (``bots._mc.MCSearch``, one scratch state per depth). The budget
rules are those of :mod:`bots.flat_mc` except that ``n`` must be at least 1 (it is also the count of every
nested decision); a move time caps the root's round-robin and also interrupts the nested decisions.
"""
from __future__ import annotations

from typing import Any, ClassVar

from bots.flat_mc import FlatMCBot
from games.spec import Param


class NestedMCBot(FlatMCBot):
    """HMC(n) at any nesting ``level``; ``level=1`` plays exactly like ``mc`` with the same seed."""

    name: ClassVar[str] = "hmc"
    params: ClassVar[dict[str, Param]] = {
        # n >= 1: the nested levels need a count; a move time still caps the root's round-robin.
        "n": Param(int, 16, "playouts per candidate action, at every level", min=1, max=10**9),
        "level": Param(int, 2, "nesting depth: 1 is mc, 2 is HMC(n), 3 plays its playouts with HMC(n)",
                       min=1, max=6),
        "tie_break": FlatMCBot.params["tie_break"],
        "margin": FlatMCBot.params["margin"],
    }

    def __init__(self, game: Any, seat: int, seed: int, n: int = 16, level: int = 2,
                 tie_break: str = "random", margin: float = 0.1) -> None:
        super().__init__(game, seat, seed, n=n, tie_break=tie_break, margin=margin)
        self.level = self.params["level"].convert("level", level)
