"""``arena bench bots`` (mc/hmc part): compiled flat and nested Monte Carlo against the same algorithms
written in plain Python over the public State API (clone / legal_actions / apply_action / returns), the
way a bot author without the C-level interface would write them. Both run in the same process, in turn.

Records:
* ``mc playouts ...``: MC(n) decisions at the initial state, playouts per second.
* ``hmc(n=64,level=2) decision``: seconds for one HMC(64) decision at the start of Double Step against
  the same decision computed by the plain-Python nested MC (same n, same level).
"""
from __future__ import annotations

import random
from typing import Any, Callable, Iterator

import games
from arena.bench import Record, cost, interleaved, rate
from bots.base import Limit

SUITE = "bots"

# game spec -> (compiled playouts per candidate, Python playouts per candidate), full mode.
MC_GAMES: dict[str, tuple[int, int]] = {
    "nim(n=50)": (20_000, 400),
    "doublestep": (50_000, 1_000),
    "hex(size=7)": (2_000, 40),
    "colosseum(seed=1)": (500, 10),
    "sorry(players=4,seed=1)": (200, 4),
}


# ----- the plain-Python twins (baselines) ---------------------------------------------------------------
def _py_sample_chance(state: Any, rng: random.Random) -> int:
    r, acc = rng.random(), 0.0
    outcomes = state.chance_outcomes()
    for action, p in outcomes:
        acc += p
        if r < acc:
            return int(action)
    return int(outcomes[-1][0])


def _py_share(returns: list[float], p: int) -> float:
    best = max(returns)
    return 1.0 / returns.count(best) if returns[p] == best else 0.0


def py_playout(state: Any, rng: random.Random, policy: Callable[[Any], int] | None = None) -> None:
    """Plays ``state`` to the end through the Python API: ``policy`` (default random) for players, chance sampled."""
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(_py_sample_chance(state, rng))
        else:
            state.apply_action(policy(state) if policy else rng.choice(state.legal_actions()))


def py_mc(state: Any, n: int, rng: random.Random, level: int = 1) -> int:
    """MC(n) (nested ``level`` deep) over the Python State API: the baseline of the compiled search."""
    p = state.current_player()
    legal = state.legal_actions()
    if len(legal) == 1:
        return int(legal[0])
    scores = []
    for a in legal:
        child = state.child(a)
        if child.is_terminal():
            scores.append(n * _py_share(child.returns(), p))
            continue
        wins = 0.0
        for _ in range(n):
            play = child.clone()
            policy = None if level == 1 else (lambda s: py_mc(s, n, rng, level - 1))
            py_playout(play, rng, policy)
            wins += _py_share(play.returns(), p)
        scores.append(wins)
    best = max(scores)
    return int(rng.choice([a for a, s in zip(legal, scores) if s == best]))


# ----- the measurements ---------------------------------------------------------------------------------------
def _mc_record(spec: str, n_c: int, n_py: int, repeats: int) -> Record | None:
    from bots.flat_mc import FlatMCBot

    try:
        game = games.load(spec)
    except (ImportError, AttributeError):
        return None                 # the game is not built in this checkout (a placeholder package)
    root = game.new_initial_state()
    while root.is_chance_node():   # Sorry! starts with a card draw
        root.apply_action(_py_sample_chance(root, random.Random(0)))
    k = len(root.legal_actions())
    bot = FlatMCBot(game, root.current_player(), 1, n=n_c)
    rng = random.Random(1)
    t = interleaved({"c": lambda: bot.step(root.clone(), Limit()), "py": lambda: py_mc(root, n_py, rng)}, repeats)
    return rate(SUITE, f"mc {spec} playouts", n_c * k / t["c"], "playouts/s",
                "same MC in Python over the State API", n_py * k / t["py"],
                note=f"{k} candidates at the first decision")


def _hmc_record(n: int) -> Record:
    from bots.nested_mc import NestedMCBot

    game = games.load("doublestep")
    root = game.new_initial_state()
    bot = NestedMCBot(game, 0, 1, n=n, level=2)
    rng = random.Random(1)
    t = interleaved({"c": lambda: bot.step(root.clone(), Limit()), "py": lambda: py_mc(root, n, rng, level=2)}, 1)
    return cost(SUITE, f"hmc(n={n},level=2) decision, doublestep start", t["c"], "s",
                f"same HMC(n={n}) in Python over the State API", t["py"],
                note=f"{bot.last_search['playouts']} random playouts, {bot.last_search['decisions']} nested decisions")


def run(quick: bool = False) -> Iterator[Record]:
    scale = 10 if quick else 1
    repeats = 3 if quick else 5
    for spec, (n_c, n_py) in MC_GAMES.items():
        record = _mc_record(spec, max(1, n_c // scale), max(1, n_py // scale), repeats)
        if record is not None:
            yield record
    yield _hmc_record(16 if quick else 64)
