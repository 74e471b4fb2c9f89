"""``arena bench bots`` (mc/hmc part): compiled flat and nested Monte Carlo against the same algorithms
written in plain Python over the public State API (clone / legal_actions / apply_action / returns), the
way a bot author without the C-level interface would write them. Both run in the same process, in turn.

Records:
* ``mc playouts ...``: MC(n) decisions at the initial state, playouts per second.
* ``hmc(n=64,level=2) decision``: seconds for one HMC(64) decision at the start of Double Step against
  the same decision computed by the plain-Python nested MC (same n, same level).
* ``worst move time under a T s limit``: the longest move (as the referee measures it, in-process) of
  time-budgeted mc/hmc over many moves on the slowest games, against the limit itself.
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import bots
import games
from arena.bench import Record, cost, interleaved, median_time, rate
from arena.referee.loop import play
from bots.base import Limit
from bots.flat_mc import FlatMCBot
from bots.nested_mc import NestedMCBot

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
    """Plays ``state`` to the end through the Python API: ``policy`` (default random) for players,
    chance sampled."""
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(_py_sample_chance(state, rng))
        else:
            state.apply_action(policy(state) if policy else rng.choice(state.legal_actions()))


def py_mc(state: Any, n: int, rng: random.Random, level: int = 1, counter: list[int] | None = None) -> int:
    """MC(n) (nested ``level`` deep) over the Python State API: the baseline of the compiled search.
    ``counter[0]`` is increased by the number of random playouts played."""
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
            policy = None if level == 1 else (lambda s: py_mc(s, n, rng, level - 1, counter))
            py_playout(play, rng, policy)
            if counter is not None and level == 1:
                counter[0] += 1
            wins += _py_share(play.returns(), p)
        scores.append(wins)
    best = max(scores)
    return int(rng.choice([a for a, s in zip(legal, scores) if s == best]))


def choice_point(spec: str, seed: int = 0) -> Any:
    """A state of ``spec`` where a player chooses among at least two actions none of which ends the game:
    the initial state when it is one, else the first such state of a seeded random game."""
    rng = random.Random(seed)
    while True:
        state = games.load(spec).new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(_py_sample_chance(state, rng))
                continue
            legal = state.legal_actions()
            if len(legal) >= 2 and not any(state.child(a).is_terminal() for a in legal):
                return state
            state.apply_action(rng.choice(legal))


# ----- the measurements -------------------------------------------------------------------------------------
def _mc_record(spec: str, n_c: int, n_py: int, repeats: int) -> Record | None:

    try:
        root = choice_point(spec)
    except (ImportError, AttributeError):
        return None                 # the game is not built in this checkout (a placeholder package)
    bot = FlatMCBot(root.game, root.current_player(), 1, n=n_c)
    rng, counter = random.Random(1), [0]
    t = interleaved({"c": lambda: bot.step(root.clone(), Limit()),
                     "py": lambda: py_mc(root, n_py, rng, counter=counter)}, repeats)
    k = len(root.legal_actions())
    return rate(SUITE, f"mc {spec} playouts", bot.last_search["playouts"] / t["c"], "playouts/s",
                "same MC in Python over the State API", counter[0] / repeats / t["py"],
                note=f"one MC decision, {k} candidates, after {len(root.history())} actions")


def _hmc_record(n: int) -> Record:

    game = games.load("doublestep")
    root = game.new_initial_state()
    bot = NestedMCBot(game, 0, 1, n=n, level=2)
    compiled = median_time(lambda: bot.step(root.clone(), Limit()), 7)
    python = median_time(lambda: py_mc(root, n, random.Random(1), level=2), 1)
    return cost(SUITE, f"hmc(n={n},level=2) decision, doublestep start", compiled, "s",
                f"same HMC(n={n}) in Python over the State API", python,
                note=f"{bot.last_search['playouts']} random playouts, "
                     f"{bot.last_search['decisions']} nested decisions")


# (game spec, bot spec) pairs whose moves the deadline must stop: long playouts, many candidates, nesting.
TIMED: list[tuple[str, str]] = [
    ("hex(size=11)", "mc(n=0)"),
    ("sorry(players=4,seed=2)", "mc(n=0)"),
    ("colosseum(size=12,seed=4)", "mc(n=0)"),
    ("hex(size=11)", "hmc(n=16,level=2)"),
    ("sorry(players=4,seed=2)", "hmc(n=8,level=3)"),
    ("doublestep(length=200)", "hmc(n=64,level=3)"),
]


def move_times(spec: str, bot_spec: str, limit: float, moves: int, seed: int = 0) -> list[float]:
    """Wall seconds of ``bot_spec`` answering ``moves`` times under ``limit`` per move, timed as the
    in-process referee times it (state clone included), at positions of seeded random games where the
    player to move has at least two actions (forced moves answer at once and would flatter the worst case)."""
    rng = random.Random(seed)
    times: list[float] = []
    game = games.load(spec)
    while len(times) < moves:
        state = game.new_initial_state()
        while not state.is_terminal() and len(times) < moves:
            if state.is_chance_node():
                state.apply_action(_py_sample_chance(state, rng))
                continue
            legal = state.legal_actions()
            if len(legal) >= 2 and rng.random() < 0.25:
                bot = bots.make(bot_spec, game, state.current_player(), rng.randrange(2**31))
                t0 = time.perf_counter()
                bot.step(state.clone(), Limit(time=limit))
                times.append(time.perf_counter() - t0)
            state.apply_action(rng.choice(legal))
    return times


def _worst_record(limit: float, moves_each: int) -> Iterator[Record]:
    for spec, bot_spec in TIMED:
        try:
            times = move_times(spec, bot_spec, limit, moves_each)
        except (ImportError, AttributeError):
            continue
        yield cost(SUITE, f"{bot_spec} on {spec}: worst move under a {limit:g} s limit", max(times), "s",
                   "the move time limit", limit,
                   note=f"{moves_each} moves, median {sorted(times)[len(times) // 2]:.3f} s, "
                        "default margin 0.1 s")


def run(quick: bool = False) -> Iterator[Record]:
    scale = 10 if quick else 1
    repeats = 3 if quick else 5
    for spec, (n_c, n_py) in MC_GAMES.items():
        record = _mc_record(spec, max(1, n_c // scale), max(1, n_py // scale), repeats)
        if record is not None:
            yield record
    yield _hmc_record(16 if quick else 64)
    yield from _worst_record(0.25 if quick else 2.0, 3 if quick else 8)


# ----- the Double Step study (Rafiq 2013), for docs/bots-mc.md ----------------------------------------------
# Seat 0 (the study's Player 1, who moves first) wins out of 10,000 games on doublestep(length=10), pass rule.
# The study's numbers live with the experiment that reproduces them in full (``arena experiment run doublestep-mc``).
from arena.experiments.doublestep_mc import NS as STUDY_NS  # noqa: E402
from arena.experiments.doublestep_mc import T2, T3, T4, T5  # noqa: E402

RAFIQ: dict[str, tuple[str, str, list[int]]] = {
    "Table 2: MC(n) vs random": ("mc(n={n}{tb})", "random", T2),
    "Table 3 diagonal: MC(n) vs MC(n)": ("mc(n={n}{tb})", "mc(n={n}{tb})", [T3[i][i] for i in range(len(STUDY_NS))]),
    "Table 4: HMC(n) vs random": ("hmc(n={n}{tb})", "random", T4),
    "Table 5 diagonal: HMC(n) vs MC(n)":
        ("hmc(n={n}{tb})", "mc(n={n}{tb})", [T5[i][i] for i in range(len(STUDY_NS))]),
}


def seat0_wins(spec: str, bot0: str, bot1: str, n_games: int, seed: int = 0) -> float:
    """Fraction of ``n_games`` won by seat 0 (``bot0`` moves first)."""
    game = games.load(spec)
    wins = 0
    for i in range(n_games):
        pair = [bots.make(bot0, game, 0, seed + 2 * i), bots.make(bot1, game, 1, seed + 2 * i + 1)]
        wins += play(game, pair, seed=seed + i).winner() == 0
    return wins / n_games


def study_tables(n_games: int, tie_breaks: tuple[str, ...] = ("last", "random")) -> Iterator[str]:
    """Markdown rows: the study's seat-0 win rates beside ours, per tie-break rule."""
    yield "| table | n | study | " + " | ".join(f"ours, tie_break={tb}" for tb in tie_breaks) + " |"
    yield "|---|---:|---:|" + "---:|" * len(tie_breaks)
    for title, (a, b, study) in RAFIQ.items():
        for n, ref in zip(STUDY_NS, study):
            ours = [seat0_wins("doublestep", a.format(n=n, tb=f",tie_break={tb}"),
                               b.format(n=n, tb=f",tie_break={tb}"), n_games) for tb in tie_breaks]
            cells = " | ".join(f"{x * 100:.1f}%" for x in ours)
            yield f"| {title} | {n} | {ref / 100:.1f}% | {cells} |"


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--study"]:
        for row in study_tables(int(sys.argv[2]) if len(sys.argv) > 2 else 1000):
            print(row, flush=True)
    else:
        for record in run(quick="--quick" in sys.argv):
            print(record, flush=True)
