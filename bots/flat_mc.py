"""mc: flat Monte Carlo, MC(n) (Althöfer 2008; Rafiq 2013; Radović & Raičević 2015).

For each legal action, ``n`` random playouts from the state after it; play the action whose playouts
the mover won most often (a draw counts 1/2; with 3-4 players only a win counts). The search itself is
compiled (``bots._mc.MCSearch``); this module only turns a spec and a move budget into one call.

Budget semantics (docs/bots-mc.md):

* ``n > 0``: ``n`` playouts per candidate, spread round-robin. When the referee also gives a move time,
  the search stops early at ``limit.think_time - margin`` (the scores so far, as win rates, decide).
* ``n = 0``: as many round-robin playouts as ``limit.think_time - margin`` allows. Without a time limit
  the bot falls back to ``FALLBACK_N`` playouts per candidate.

The margin is ``min(margin, limit.think_time / 2)`` seconds, so a tiny limit still leaves half of it in hand.
"""
from __future__ import annotations

import time
from typing import Any, ClassVar

from bots._mc import TIE_BREAKS, MCSearch
from bots.base import BaseBot, Limit, think_time
from games.spec import Param

FALLBACK_N = 100
"""Playouts per candidate for ``n=0`` when the referee gives no time limit."""

_MASK64 = (1 << 64) - 1


def move_seed(seed: int, move: int) -> int:
    """The 64-bit seed of one search: a bot's seed and its move counter, mixed (same pair, same seed)."""
    return (seed * 0x9E3779B97F4A7C15 + move * 0xBF58476D1CE4E5B9 + 0x632BE59BD9B4E019) & _MASK64


class FlatMCBot(BaseBot):
    """MC(n): ``n`` random playouts per candidate action; the mover's best win count is played."""

    name: ClassVar[str] = "mc"
    params: ClassVar[dict[str, Param]] = {
        "n": Param(int, 100, "playouts per candidate action; 0: as many as the move time allows",
                   min=0, max=10**9),
        "tie_break": Param(str, "random", "how equal scores are decided", choices=tuple(TIE_BREAKS)),
        "margin": Param(float, 0.1, "seconds kept in hand under a move time limit (at most half the limit)",
                        min=0.0, max=3600.0),
    }

    def __init__(self, game: Any, seat: int, seed: int, n: int = 100, tie_break: str = "random",
                 margin: float = 0.1) -> None:
        super().__init__(game, seat, seed)
        # Direct construction (not through bots.make) gets the same checks as a spec string.
        self.n = self.params["n"].convert("n", n)
        self.tie_break = self.params["tie_break"].convert("tie_break", tie_break)
        self.margin = self.params["margin"].convert("margin", margin)
        self.level = 1      # nesting depth of the search (NestedMCBot raises it)
        self.moves = 0
        self.last_search: dict[str, Any] = {}
        self._search: MCSearch | None = None

    def step(self, state: Any, limit: Limit) -> int:
        started = time.monotonic()
        budget = self.budget(limit)
        deadline = 0.0 if budget is None else started + budget
        n = self.n if self.n > 0 or budget is not None else FALLBACK_N
        if self._search is None or not self._search.fits(state):
            self._search = MCSearch(state, self.level)
        seed = move_seed(self.seed, self.moves)
        self.moves += 1
        action = self._search.search(state, n, TIE_BREAKS[self.tie_break], seed, deadline)
        if action < 0:
            raise RuntimeError(f"{state.game} offers no legal action in a non-terminal state")
        self.last_search = self._search.stats()
        self.last_search["seconds"] = time.monotonic() - started
        return int(action)

    def budget(self, limit: Limit) -> float | None:
        """Seconds this move may search: the thinking time (``move_time``, also on the first move, whose longer
        limit is for start-up) minus ``min(margin, half of it)``; None without a limit."""
        think = think_time(limit)
        if think is None:
            return None
        return think - min(self.margin, think / 2)

    def restart(self) -> None:
        self.moves = 0
