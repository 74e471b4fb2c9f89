"""The Nim study's strategic MCTS as the study describes it (Telepchuk 2020, section 2.3.1), for the one
match-up the compiled ``uct`` cannot play: playouts in which the searching player leaves a multiple of
k+1 whenever it can ("the opponent's behaviour stays random"), against the same search with random
playouts.

A small Python UCT over the pile alone (single-pile Nim, the taker of the last counter wins): UCB1 with
constant ``c``, one untried child per iteration, one playout per new node, the root child with the
highest win rate played (the study's rules). Both sides of the match-up use this same code, so the
comparison isolates the playout policy; ``policy="both"`` (greedy for both sides, what ``uct(rollout=
greedy)`` does) is the cross-check against the compiled search's strategic row.
"""
from __future__ import annotations

import math
import random
from typing import Any

POLICIES = ("random", "own", "both")


class _Node:
    __slots__ = ("pile", "mover", "wins", "visits", "children", "untried")

    def __init__(self, pile: int, mover: int, k: int, rng: random.Random) -> None:
        self.pile, self.mover = pile, mover  # mover: the seat that moved into this node
        self.wins, self.visits = 0.0, 0
        self.children: dict[int, _Node] = {}
        self.untried = list(range(1, min(k, pile) + 1))
        rng.shuffle(self.untried)


class StudyNimMCTS:
    """A bot for ``nim(n=..., k=...)`` (no coin): ``iterations`` UCT iterations per move."""

    def __init__(self, game: Any, seat: int, seed: int, iterations: int = 2000, c: float = 1.414,
                 policy: str = "random") -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        self.seat, self.iterations, self.c, self.policy = seat, iterations, c, policy
        self.name = f"study-mcts({policy})"
        self.rng = random.Random(seed)

    def _playout(self, pile: int, to_move: int, k: int, me: int) -> int:
        """The winner of a playout from ``pile`` with ``to_move`` to play."""
        while True:
            greedy = self.policy == "both" or (self.policy == "own" and to_move == me)
            take = pile % (k + 1) if greedy else 0
            if take == 0:  # random play, or no winning move to keep
                take = self.rng.randint(1, min(k, pile))
            pile -= take
            if pile == 0:
                return to_move
            to_move = 1 - to_move

    def step(self, state: Any, limit: Any = None) -> int:
        obs = state.observation()
        pile, k, me = obs["pile"], obs["k"], state.current_player()
        root = _Node(pile, 1 - me, k, self.rng)
        for _ in range(self.iterations):
            node, path = root, [root]
            while not node.untried and node.children:  # selection (UCB1)
                log_n = math.log(node.visits)
                node = max(node.children.values(),
                           key=lambda ch: ch.wins / ch.visits + self.c * math.sqrt(log_n / ch.visits))
                path.append(node)
            if node.untried:  # expansion: one untried child
                take = node.untried.pop()
                child = _Node(node.pile - take, 1 - node.mover, k, self.rng)
                node.children[take] = child
                node = child
                path.append(node)
            # simulation: the mover into a node with an empty pile took the last counter
            winner = node.mover if node.pile == 0 else self._playout(node.pile, 1 - node.mover, k, me)
            for n in path:  # backpropagation: wins of the seat that moved into each node
                n.visits += 1
                n.wins += n.mover == winner
        return max(root.children, key=lambda a: root.children[a].wins / root.children[a].visits)
