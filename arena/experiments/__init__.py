"""``arena experiment``: the studies' experiments, named, seeded and parallel (see docs/experiments.md).

Each module ``arena/experiments/<name>.py`` defines ``EXPERIMENT`` (:class:`core.Experiment`); this
registry maps the command-line names to those modules, imported only when used.
"""
from __future__ import annotations

import importlib

from arena.errors import ConfigError
from arena.experiments.core import Experiment

EXPERIMENTS: dict[str, str] = {
    "doublestep-laziness": "arena.experiments.doublestep_laziness",
    "doublestep-mc": "arena.experiments.doublestep_mc",
    "hex-mc": "arena.experiments.hex_mc",
    "nim-mcts": "arena.experiments.nim_mcts",
    "colosseum-uct": "arena.experiments.colosseum_uct",
    "sorry-determinized": "arena.experiments.sorry_determinized",
    "uct-defaults": "arena.experiments.uct_defaults",
}


def get(name: str) -> Experiment:
    """The experiment called ``name`` (ConfigError listing the valid names otherwise)."""
    if name not in EXPERIMENTS:
        raise ConfigError(f"unknown experiment {name!r}; valid experiments: {', '.join(EXPERIMENTS)}")
    return importlib.import_module(EXPERIMENTS[name]).EXPERIMENT
