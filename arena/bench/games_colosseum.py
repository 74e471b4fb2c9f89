"""Colosseum playout benchmarks for ``arena bench games`` (picked up by arena/bench/games.py).

From the generated start of ``colosseum(size=6,seed=1)`` and ``colosseum(size=12,seed=1)``, measured in
alternation in one run: the compiled random playout (``games._core.playouts``) against the tuned
plain-Python playout of games/colosseum/reference.py (same rules, same uniform choice over legal moves).
"""
from __future__ import annotations

from collections.abc import Iterator

import games
from arena.bench import Record, interleaved, rate
from games._core import playouts
from games.colosseum import reference

SUITE = "games"
SIZES = (6, 12)
COUNTS = {6: (40_000, 2_000), 12: (10_000, 400)}   # (compiled, Python) playouts per timed call, quick mode


def run(quick: bool = False) -> Iterator[Record]:
    # The full run stays under a minute for the whole games suite (the contract check allows 60 s).
    reps = 3 if quick else 5
    scale = 1
    for size in SIZES:
        spec = f"colosseum(size={size},seed=1)"
        root = games.load(spec).new_initial_state()
        board, p0, p1 = reference.generate(size, 1)
        n_c, n_py = (n * scale for n in COUNTS[size])
        t = interleaved({"c": lambda: playouts(root, n_c, 1),
                         "py": lambda: reference.playouts(n_py, board, p0, p1, 1)}, reps)
        yield rate(SUITE, f"{spec} random playouts", n_c / t["c"], "playouts/s", "tuned Python",
                   n_py / t["py"], None, "from the generated start; reference.playouts as baseline")
