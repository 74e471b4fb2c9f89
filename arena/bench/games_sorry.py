"""Sorry! in ``arena bench games``: compiled random playouts per second for 2 and 4 players.

Sorry! has no plain-Python twin, so the baseline is the *generic Python-API random loop* over the same
compiled state (``legal_actions()`` / ``chance_outcomes()`` / ``apply_action()`` once per action, as a
Python bot or referee would drive it): the ratio is what the compiled playout saves over Python
driving the engine, not a comparison of two rule implementations.
"""
from __future__ import annotations

import random
from collections.abc import Iterator

import games
from arena.bench import Record, interleaved, rate
from games._core import playouts

SUITE = "games"
BASELINE = "Python-API random loop (same compiled engine)"


def python_api_playouts(spec: str, n: int, seed: int = 0) -> int:
    """Plays n random games through the public Python State API; returns the actions applied."""
    game = games.load(spec)
    rng = random.Random(seed)
    total = 0
    for _ in range(n):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                r, acc = rng.random(), 0.0
                action = outcomes[-1][0]
                for a, p in outcomes:
                    acc += p
                    if r < acc:
                        action = a
                        break
            else:
                action = rng.choice(state.legal_actions())
            state.apply_action(action)
            total += 1
    return total


def run(quick: bool = False) -> Iterator[Record]:
    reps = 3 if quick else 5
    scale = 1 if quick else 4
    for players in (2, 4):
        spec = f"sorry(players={players})"
        root = games.load(spec).new_initial_state()
        n_c, n_py = 1000 * scale, 20 * scale   # enough Python games that their mean length is stable
        t = interleaved({"c": lambda: playouts(root, n_c, 1),
                         "py": lambda: python_api_playouts(spec, n_py, 1)}, reps)
        yield rate(SUITE, f"{spec} random playouts", n_c / t["c"], "playouts/s", BASELINE, n_py / t["py"],
                   note="baseline drives the same compiled engine through the Python API")
