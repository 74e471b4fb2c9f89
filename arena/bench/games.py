"""``arena bench games``: random playouts per second through each game's compiled playout,
side by side with a tuned plain-Python reference (and OpenSpiel's C++ Hex when installed)."""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import games
from arena.bench import Record, interleaved, rate
from games._core import playouts
from games.doublestep import reference as ds_ref
from games.nim import reference as nim_ref

SUITE = "games"


def _compiled(spec: str, n: int) -> Callable[[], object]:
    root = games.load(spec).new_initial_state()
    return lambda: playouts(root, n, 1)


def _ds_playouts(n: int, length: int) -> object:
    return ds_ref.playouts(n, length, length)


def _pair(name: str, spec: str, reference: Callable[[int], object], n_c: int, n_py: int, repeats: int,
          baseline: str, target: float | None) -> Record:
    t = interleaved({"c": _compiled(spec, n_c), "py": lambda: reference(n_py)}, repeats)
    return rate(SUITE, name, n_c / t["c"], "playouts/s", baseline, n_py / t["py"], target)


def run(quick: bool = False) -> Iterator[Record]:

    reps = 3 if quick else 5
    scale = 1 if quick else 2
    yield _pair("nim(n=50) random playouts", "nim(n=50)", lambda n: nim_ref.playouts(n, 50, 3),
                200_000 * scale, 20_000 * scale, reps, "tuned Python", 30)
    for length in (10, 50):
        spec = f"doublestep(length={length})"
        yield _pair(f"{spec} random playouts", spec, functools.partial(_ds_playouts, length=length),
                    200_000 * scale, 10_000 * scale, reps, "tuned Python", 30)
    for extra in _optional_suites():
        yield from extra(quick)


def _optional_suites() -> list[Callable[[bool], Iterator[Record]]]:
    """Per-game extra benchmarks (e.g. Hex against OpenSpiel): arena.bench.games_<game> (here, not in games/,
    which never imports arena)."""
    extras = []
    for module in ("arena.bench.games_hex", "arena.bench.games_colosseum", "arena.bench.games_sorry"):
        try:
            mod = __import__(module, fromlist=["run"])
        except ImportError:
            continue
        extras.append(mod.run)
    return extras
