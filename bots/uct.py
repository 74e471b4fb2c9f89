"""uct: UCT over the compiled search; mcts_reuse is ``uct(reuse=true)``.

Defaults: ``uct`` is the strongest configuration measured at equal time (C = ``DEFAULT_C`` = 0.3, one
child per iteration; docs/bots-uct.md, "Defaults", has the table and its command). The study preset is
one parameter away: ``uct(c=annealed)`` is the Colosseum study's agent (Baier-Reinio & MacDonald 2022:
annealed C = e^(1/depth) - 1 and, unless ``expand`` is given, every child of a leaf at once with 11
playouts each, highest win rate), because ``expand`` defaults to ``all`` with annealed C and to ``one``
otherwise (:func:`default_expand`).

The search is compiled (:class:`bots._uct.Search`, a flat node pool over the games' C-level interface);
this module turns a spec and the referee's move budget into one call per move. docs/bots-uct.md has
the details.

Budget: ``iterations=N`` runs N iterations (still cut short by the referee's time limit, if any);
without it the bot searches until ``limit.think_time - min(margin, limit.think_time / 10)``. With neither an
iteration budget nor a time limit it runs ``FALLBACK_ITERATIONS`` iterations.
"""
from __future__ import annotations

import time
from typing import Any, ClassVar

from bots._uct import NODE_BYTES, Search
from bots.base import BaseBot, Limit, think_time
from games.spec import Param

FALLBACK_ITERATIONS = 1000
"""Iterations per move when there is neither an ``iterations`` parameter nor a time limit."""

SIMS_PER_LEAF = {"all": 11, "one": 1}
"""Default playouts per new child: 11 with expand=all (the study's choice after testing 2..12)."""

DEFAULT_C = 0.3
"""uct's exploration constant when none is given: the strongest measured (docs/bots-uct.md, Defaults)."""


def default_expand(c: str | float) -> str:
    """``expand`` when not given: ``all`` with annealed C (the study preset), ``one`` otherwise."""
    return "all" if c == "annealed" else "one"

_MASK64 = (1 << 64) - 1


def move_seed(seed: int, move: int) -> int:
    """The 64-bit seed of one search: the bot's seed and its move counter, mixed."""
    return (seed * 0x9E3779B97F4A7C15 + move * 0xBF58476D1CE4E5B9 + 0x2545F4914F6CDD1D) & _MASK64


def parse_c(text: str) -> str | float:
    """``annealed`` or a number >= 0 (the UCB exploration constant)."""
    if text.strip().lower() == "annealed":
        return "annealed"
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise ValueError("must be annealed or a number >= 0")
    return value


class _CParam(Param):
    def describe(self) -> str:
        return "annealed or a number >= 0"


def memory_node_cap(memory_mb: int | None) -> int | None:
    """Most nodes that fit in a quarter of the memory limit (compaction briefly holds two pools)."""
    if memory_mb is None:
        return None
    return max(1000, memory_mb * 2**20 // 4 // NODE_BYTES)


class UCTBot(BaseBot):
    """Monte Carlo tree search with the UCB1 tree policy, negamax perspective, chance nodes."""

    name: ClassVar[str] = "uct"
    params: ClassVar[dict[str, Param]] = {
        "iterations": Param(int, None, "iterations per move (default: use the move time limit)", min=1, max=10**12),
        "c": _CParam(str, str(DEFAULT_C), "exploration constant: a number, or annealed (C = e^(1/depth) - 1: the "
                     "study preset, with expand=all unless given)", parser=parse_c),
        "expand": Param(str, None, "all: add every child of a leaf; one: one untried child per iteration "
                        "(default: all with c=annealed, else one)", choices=("all", "one")),
        "sims_per_leaf": Param(int, None, "playouts per new child (default 11 with expand=all, 1 with one)",
                               min=1, max=10**6),
        "rollout": Param(str, "random", "playout policy: random, or greedy (the game's heuristic move)",
                         choices=("random", "greedy")),
        "final": Param(str, "winrate", "final choice: highest win rate or most visits among root children",
                       choices=("winrate", "visits")),
        "margin": Param(float, 0.1, "seconds kept in hand under a move time limit (at most a tenth of it)",
                        min=0.0, max=3600.0),
        "reuse": Param(bool, False, "keep the subtree of the position reached between moves"),
        "max_nodes": Param(int, 2_000_000, "node cap: when reached, leaves stop expanding and are simulated",
                           min=1000, max=2**31 - 1),
    }

    def __init__(self, game: Any, seat: int, seed: int, iterations: int | None = None,
                 c: str | float = DEFAULT_C, expand: str | None = None, sims_per_leaf: int | None = None,
                 rollout: str = "random", final: str = "winrate", margin: float = 0.1, reuse: bool = False,
                 max_nodes: int = 2_000_000) -> None:
        super().__init__(game, seat, seed)
        given = {"iterations": iterations, "c": c, "expand": expand, "sims_per_leaf": sims_per_leaf,
                 "rollout": rollout, "final": final, "margin": margin, "reuse": reuse, "max_nodes": max_nodes}
        # Direct construction gets the same checks as a spec string.
        p: dict[str, Any] = {k: (v if v is None else self.params[k].convert(k, v)) for k, v in given.items()}
        self.iterations: int | None = p["iterations"]
        self.c: str | float = p["c"]
        self.expand: str = p["expand"] or default_expand(self.c)
        self.sims_per_leaf: int = p["sims_per_leaf"] or SIMS_PER_LEAF[self.expand]
        self.rollout: str = p["rollout"]
        self.final: str = p["final"]
        self.margin: float = p["margin"]
        self.reuse: bool = p["reuse"]
        self.max_nodes: int = p["max_nodes"]
        annealed = self.c == "annealed"
        self.search = Search(c=0.0 if annealed else float(self.c), annealed=annealed,
                             expand_all=self.expand == "all", sims_per_leaf=self.sims_per_leaf,
                             greedy=self.rollout == "greedy", final_visits=self.final == "visits",
                             max_nodes=self.max_nodes, seed=seed)
        self.moves = 0
        self._root_history: list[int] | None = None
        self.last_search: dict[str, Any] = {}

    def _reuse_tree(self, history: list[int]) -> bool:
        """Moves the tree's root to the current position if the tree has it; else empties the tree."""
        old = self._root_history
        if old is None or len(history) < len(old) or history[:len(old)] != old:
            self.search.reset()
            return False
        return bool(self.search.advance(history[len(old):]))

    def step(self, state: Any, limit: Limit) -> int:
        started = time.monotonic()
        deadline = 0.0
        budget = think_time(limit)  # move_time on every move: the first move's longer limit is for start-up
        if budget is not None:
            deadline = started + budget - min(self.margin, budget / 10)
        iterations = self.iterations
        if iterations is None and deadline <= 0:
            iterations = FALLBACK_ITERATIONS
        history = list(state.history())
        if self.reuse:
            reused = self._reuse_tree(history)
        else:
            self.search.reset()
            reused = False
        start_visits = self.search.root_visits
        cap = memory_node_cap(limit.memory_mb)
        self.search.max_nodes = min(self.max_nodes, cap) if cap else self.max_nodes
        self.search.reseed(move_seed(self.seed, self.moves))
        self.moves += 1
        action = int(self.search.search(state, iterations or 0, deadline))
        self._root_history = history if self.reuse else None
        self.last_search = {
            "iterations": self.search.iterations, "playouts": self.search.playouts,
            "nodes": self.search.n_nodes, "reused": reused, "start_visits": start_visits,
            "root_visits": self.search.root_visits, "pool_full": self.search.pool_full,
            "seconds": time.monotonic() - started,
        }
        return action

    def restart(self) -> None:
        self.search.reset()
        self._root_history = None
        self.moves = 0
