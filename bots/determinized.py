"""determinized: determinized MCTS for games with chance (Thompson & Rooney 2021).

For each of ``d`` determinizations every future chance event is fixed in advance (the game's joint
sample from ``c_chance_sequence``, e.g. a random order of the cards left in the Sorry! draw pile, or,
for memoryless chance, one fixed seed per determinization and chance index), ``s`` UCT iterations run
on that deterministic game, and each root action's win rate is added to its score; the best sum is
played. The tree is the same compiled one as ``uct`` (:class:`bots._uct.Search`), with expand=one,
one random playout per iteration and the constant ``c``.

Budget: ``d * s`` iterations; under a referee time limit each determinization also stops at its equal
share of ``limit.think_time - min(margin, limit.think_time / 10)``.
"""
from __future__ import annotations

import time
from typing import Any, ClassVar

from bots._uct import Search
from bots.base import BaseBot, Limit, think_time
from bots.uct import move_seed
from games.spec import Param


class DeterminizedBot(BaseBot):
    """d determinizations x s UCT iterations; the summed root win rates decide."""

    name: ClassVar[str] = "determinized"
    params: ClassVar[dict[str, Param]] = {
        "c": Param(float, 1.4, "UCB exploration constant", min=0.0, max=1000.0),
        "d": Param(int, 25, "number of determinizations", min=1, max=10**6),
        "s": Param(int, 100, "UCT iterations per determinization", min=1, max=10**9),
        "margin": Param(float, 0.1, "seconds kept in hand under a move time limit (at most a tenth of it)",
                        min=0.0, max=3600.0),
    }

    def __init__(self, game: Any, seat: int, seed: int, c: float = 1.4, d: int = 25, s: int = 100,
                 margin: float = 0.1) -> None:
        super().__init__(game, seat, seed)
        self.c = self.params["c"].convert("c", c)
        self.d = self.params["d"].convert("d", d)
        self.s = self.params["s"].convert("s", s)
        self.margin = self.params["margin"].convert("margin", margin)
        self.search = Search(c=self.c, annealed=False, expand_all=False, sims_per_leaf=1, seed=seed)
        self.moves = 0
        self.last_search: dict[str, Any] = {}

    def step(self, state: Any, limit: Limit) -> int:
        started = time.monotonic()
        deadline = 0.0
        budget = think_time(limit)  # move_time on every move: the first move's longer limit is for start-up
        if budget is not None:
            deadline = started + budget - min(self.margin, budget / 10)
        self.search.reseed(move_seed(self.seed, self.moves))
        self.moves += 1
        action = int(self.search.determinized(state, self.d, self.s, deadline))
        self.last_search = {
            "iterations": self.search.iterations, "playouts": self.search.playouts,
            "scores": dict(self.search.last_scores), "seconds": time.monotonic() - started,
        }
        return action

    def restart(self) -> None:
        self.moves = 0
