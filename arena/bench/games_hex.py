"""Hex playout benchmarks for ``arena bench games`` (picked up by arena/bench/games.py).

From the empty 7x7 and 11x11 boards, measured in alternation in one run:

- our compiled move-by-move playout and our compiled fill-the-board playout;
- OpenSpiel's C++ random rollouts: ``pyspiel.MCTSBot`` with a ``RandomRolloutEvaluator`` doing many
  rollouts per simulation, so one ``step()`` call runs thousands of rollouts in C++ and the tree
  work is a rounding error (the rollouts start one or two moves into the game: slightly shorter
  than ours, which favours OpenSpiel);
- OpenSpiel driven move by move from Python (a weaker baseline, shown separately);
- the tuned plain-Python reference playouts (games/hex/reference.py).
"""
from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import games
from arena.bench import Record, interleaved, rate
from games.hex import playouts_fill, playouts_move_by_move, reference

SUITE = "games"
SPIEL_CPP = "OpenSpiel C++ rollouts (MCTSBot)"
SPIEL_PY = "OpenSpiel driven from Python"
TARGETS = {"moves": 9.0, "fill": 30.0}   # vs OpenSpiel C++ on 7x7 (issue 2)

# Playouts per timed call at 7x7 (quick mode); 11x11 runs ~2.5x fewer.
COUNTS_7 = {"moves": 100_000, "fill": 300_000, "spiel_cpp": 8_000, "spiel_py": 1_000,
            "py_fill": 4_000, "py_moves": 1_000}


def _spiel_cpp(size: int, n: int) -> Callable[[], object] | None:
    """``n`` OpenSpiel C++ random rollouts from the empty board, in one call into C++."""
    try:
        import pyspiel  # optional: open_spiel
    except ImportError:
        return None
    game = pyspiel.load_game(f"hex(board_size={size})")
    sims = 4
    evaluator = pyspiel.RandomRolloutEvaluator(n // sims, 1)

    def run() -> None:
        bot = pyspiel.MCTSBot(game, evaluator, 2.0, sims, 1000, False, 1, False)
        bot.step(game.new_initial_state())
    return run


def _spiel_py(size: int, n: int) -> Callable[[], object] | None:
    """``n`` random games of OpenSpiel's Hex, one Python call per move."""
    try:
        import pyspiel  # optional: open_spiel
    except ImportError:
        return None
    game = pyspiel.load_game(f"hex(board_size={size})")
    rng = random.Random(1)

    def run() -> None:
        randrange = rng.randrange
        for _ in range(n):
            state = game.new_initial_state()
            while not state.is_terminal():
                legal = state.legal_actions()
                state.apply_action(legal[randrange(len(legal))])
    return run


def run(quick: bool = False) -> Iterator[Record]:
    # The full run stays under a minute for the whole games suite (the contract check allows 60 s).
    reps = 3 if quick else 5
    scale = 1
    for size in (7, 11):
        counts = {k: max(1, v * scale * (1 if size == 7 else 2) // (1 if size == 7 else 5))
                  for k, v in COUNTS_7.items()}
        root = games.load(f"hex(size={size})").new_initial_state()
        fns: dict[str, Callable[[], object]] = {
            "moves": lambda: playouts_move_by_move(root, counts["moves"], 1),
            "fill": lambda: playouts_fill(root, counts["fill"], 2),
            "py_fill": lambda: reference.playouts_fill(counts["py_fill"], size, 3),
            "py_moves": lambda: reference.playouts_move_by_move(counts["py_moves"], size, 4),
        }
        for key, make in (("spiel_cpp", _spiel_cpp), ("spiel_py", _spiel_py)):
            fn = make(size, counts[key])
            if fn is not None:
                fns[key] = fn
        t = interleaved(fns, reps)
        per_s = {k: counts[k] / t[k] for k in t}
        spec = f"hex(size={size})"
        target = (lambda key: TARGETS[key]) if size == 7 else (lambda key: None)
        if "spiel_cpp" in per_s:
            for key, label in (("moves", "move-by-move"), ("fill", "fill-the-board")):
                yield rate(SUITE, f"{spec} {label} playouts", per_s[key], "playouts/s",
                           SPIEL_CPP, per_s["spiel_cpp"], target(key),
                           "rollouts from 1-2 moves in (MCTSBot, 4 simulations)")
        if "spiel_py" in per_s:
            yield rate(SUITE, f"{spec} move-by-move playouts", per_s["moves"], "playouts/s",
                       SPIEL_PY, per_s["spiel_py"])
        yield rate(SUITE, f"{spec} move-by-move playouts", per_s["moves"], "playouts/s",
                   "tuned Python, union-find", per_s["py_moves"])
        yield rate(SUITE, f"{spec} fill-the-board playouts", per_s["fill"], "playouts/s",
                   "tuned Python, fill trick", per_s["py_fill"])
