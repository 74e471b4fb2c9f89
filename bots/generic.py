"""The generic path of arena's search bots: ``mc``, ``uct`` and ``mcts_reuse`` in Python over the public State API,
for games whose states are not compiled (OpenSpiel games, games from outside arena: docs/openspiel.md).

arena's own games keep the compiled fast path (:mod:`bots._mc`, :mod:`bots._uct`); :func:`bots.registry.make`
picks this path only when the game's state is not a compiled ``CoreState``. The specs and their parameters are the
same (a spec checked for one path is valid for the other); the parameters that need the compiled game's hooks
are refused with a reason (``rollout = greedy``: a compiled game's heuristic).

Returns are scaled to [0, 1] by the game's utility range, so a draw of a zero-sum game scores 1/2 and 3-4 player
games keep each seat's own result.
"""
from __future__ import annotations

import math
import random
import time
from typing import Any, ClassVar

from bots import uct as uct_module
from bots.base import BaseBot, Limit, think_time
from bots.flat_mc import FlatMCBot
from bots.uct import FALLBACK_ITERATIONS, UCTBot, move_seed, parse_c
from games.python_state import random_move
from games.spec import Param


def _scale(game: Any) -> tuple[float, float]:
    lo, hi = float(game.min_utility()), float(game.max_utility())
    return lo, (hi - lo) or 1.0


def _playout(state: Any, rng: random.Random) -> list[float]:
    """Uniformly random moves (chance by its probabilities) to the end of a clone; the returns."""
    while not state.is_terminal():
        state.apply_action(random_move(state, rng))
    return state.returns()


class _GenericBot(BaseBot):
    """What both generic searches do at the start of a move."""

    _moves = 0

    def _start_move(self, state: Any) -> tuple[random.Random, list[int]]:
        """This move's generator (the bot's seed and its move counter) and the legal actions."""
        rng = random.Random(move_seed(self.seed, self._moves))
        self._moves += 1
        return rng, state.legal_actions()


def _deadline(limit: Limit, margin: float, share: float) -> float | None:
    budget = think_time(limit)
    if budget is None:
        return None
    return time.perf_counter() + max(0.0, budget - min(margin, budget * share))


class GenericMCBot(_GenericBot):
    """MC(n) over the State API: ``n`` random playouts per candidate, round-robin, the best mean return wins."""

    name: ClassVar[str] = "mc"
    params: ClassVar[dict[str, Param]] = FlatMCBot.params

    def __init__(self, game: Any, seat: int, seed: int, n: int = 100, tie_break: str = "random",
                 margin: float = 0.1) -> None:
        super().__init__(game, seat, seed)
        self.n, self.tie_break, self.margin = n, tie_break, margin
        self._lo, self._span = _scale(game)

    def step(self, state: Any, limit: Limit) -> int:
        rng, legal = self._start_move(state)
        if len(legal) == 1:
            return legal[0]
        mover = state.current_player()
        deadline = _deadline(limit, self.margin, 0.5)
        per = self.n if self.n > 0 else (10**9 if deadline is not None else 100)
        totals = [0.0] * len(legal)
        counts = [0] * len(legal)
        slowest = 0.0  # the longest playout so far: none is started that would end past the deadline
        for _ in range(per):
            for i, action in enumerate(legal):
                started = time.perf_counter()
                if deadline is not None and started + slowest >= deadline and counts[-1]:
                    break
                child = state.clone()
                child.apply_action(action)
                totals[i] += (_playout(child, rng)[mover] - self._lo) / self._span
                counts[i] += 1
                slowest = max(slowest, time.perf_counter() - started)
            else:
                continue
            break
        means = [t / c if c else 0.0 for t, c in zip(totals, counts)]
        best = max(means)
        ties = [a for a, m in zip(legal, means) if m == best]
        return ties[0] if self.tie_break == "first" else rng.choice(ties)


class _Node:
    __slots__ = ("children", "untried", "visits", "totals", "player")

    def __init__(self, state: Any, n_players: int) -> None:
        self.player = state.current_player()
        self.children: dict[int, _Node] = {}
        self.untried: list[int] = [] if self.player < 0 else list(state.legal_actions())
        self.visits = 0
        self.totals = [0.0] * n_players


class GenericUCTBot(_GenericBot):
    """UCT over the State API: UCB1 per seat's own scaled return, chance outcomes sampled on the way down."""

    name: ClassVar[str] = "uct"
    params: ClassVar[dict[str, Param]] = UCTBot.params

    @staticmethod
    def supports(game: Any, params: dict[str, Any]) -> str | None:
        if params.get("rollout", "random") != "random":
            return "rollout=greedy needs a compiled arena game's heuristic (this game runs the generic path)"
        return None

    def __init__(self, game: Any, seat: int, seed: int, iterations: int | None = None, c: str | float = "annealed",
                 expand: str | None = None, sims_per_leaf: int | None = None, rollout: str = "random",
                 final: str = "winrate", margin: float = 0.1, reuse: bool = False, max_nodes: int = 2_000_000) -> None:
        super().__init__(game, seat, seed)
        self.iterations, self.c = iterations, (parse_c(c) if isinstance(c, str) else float(c))
        self.final, self.margin, self.reuse, self.max_nodes = final, margin, reuse, max_nodes
        if expand is None:  # uct's own default rule (it depends on c), so both paths read a spec alike
            rule = getattr(uct_module, "default_expand", None)
            expand = rule(self.c) if rule is not None else "all"
        self.expand = expand
        self.sims = sims_per_leaf if sims_per_leaf is not None else uct_module.SIMS_PER_LEAF[expand]
        self.n_players = game.num_players()
        self._lo, self._span = _scale(game)
        self._root: _Node | None = None
        self._root_history: list[int] = []
        self._nodes = 0

    def _explore(self, depth: int) -> float:
        return math.exp(1.0 / depth) - 1.0 if self.c == "annealed" else float(self.c)

    def _new(self, state: Any) -> _Node:
        self._nodes += 1
        return _Node(state, self.n_players)

    def _root_for(self, state: Any) -> _Node:
        history = state.history()
        node = self._root if self.reuse else None
        if node is not None and history[:len(self._root_history)] == self._root_history:
            for action in history[len(self._root_history):]:
                node = node.children.get(action)
                if node is None:
                    break
        else:
            node = None
        if node is None:
            self._nodes = 0
            node = self._new(state)
        self._root, self._root_history = node, history
        return node

    def _simulate(self, state: Any, rng: random.Random) -> list[float]:
        return [(r - self._lo) / self._span for r in _playout(state, rng)]

    def _iterate(self, root: _Node, state: Any, rng: random.Random) -> None:
        path = [root]
        node, depth = root, 1
        while not state.is_terminal():
            if node.player < 0:  # chance: sample an outcome, follow (or grow) its child
                outcomes = state.chance_outcomes()
                action = rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0]
            elif node.untried and self._nodes < self.max_nodes:
                break
            elif not node.children:
                break
            else:
                log_n = math.log(node.visits or 1)
                c = self._explore(depth)
                p = node.player
                action = max(node.children, key=lambda a: (
                    node.children[a].totals[p] / node.children[a].visits
                    + c * math.sqrt(log_n / node.children[a].visits)
                    if node.children[a].visits else math.inf))
            state.apply_action(action)
            child = node.children.get(action)
            if child is None:
                child = node.children[action] = self._new(state)
            node = child
            path.append(node)
            depth += 1
        results: list[list[float]] = []
        if not state.is_terminal() and node.untried and self._nodes < self.max_nodes:
            todo = node.untried if self.expand == "all" else [node.untried.pop(rng.randrange(len(node.untried)))]
            if self.expand == "all":
                node.untried = []
            for action in todo:
                child_state = state.clone()
                child_state.apply_action(action)
                child = node.children[action] = self._new(child_state)
                for _ in range(self.sims):
                    value = self._simulate(child_state.clone(), rng)
                    child.visits += 1
                    child.totals = [t + v for t, v in zip(child.totals, value)]
                    results.append(value)
        else:
            results.append(self._simulate(state, rng))
        for value in results:
            for n in path:
                n.visits += 1
                n.totals = [t + v for t, v in zip(n.totals, value)]

    def step(self, state: Any, limit: Limit) -> int:
        rng, legal = self._start_move(state)
        if len(legal) == 1:
            return legal[0]
        root = self._root_for(state)
        deadline = _deadline(limit, self.margin, 0.1)
        budget = self.iterations if self.iterations is not None else (10**12 if deadline is not None
                                                                        else FALLBACK_ITERATIONS)
        slowest = 0.0  # the longest iteration so far: none is started that would end past the deadline
        for i in range(budget):
            started = time.perf_counter()
            if deadline is not None and i and started + slowest >= deadline:
                break
            self._iterate(root, state.clone(), rng)
            slowest = max(slowest, time.perf_counter() - started)
        seat = state.current_player()
        scored = [a for a in legal if a in root.children and root.children[a].visits]
        if not scored:
            return rng.choice(legal)
        if self.final == "visits":
            return max(scored, key=lambda a: root.children[a].visits)
        return max(scored, key=lambda a: root.children[a].totals[seat] / root.children[a].visits)
