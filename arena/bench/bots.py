"""``arena bench bots``: the search bots' speed and strength (parts contributed by bots_mc and bots_uct)."""
from __future__ import annotations

import importlib
from collections.abc import Iterator

from arena.bench import Record


def run(quick: bool = False) -> Iterator[Record]:
    for part in ("arena.bench.bots_uct", "arena.bench.bots_mc"):
        try:
            module = importlib.import_module(part)
        except ModuleNotFoundError as exc:
            if exc.name == part:
                continue
            raise
        yield from module.run(quick=quick)
