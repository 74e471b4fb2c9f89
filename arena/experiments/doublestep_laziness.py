"""``doublestep-laziness``: Althöfer's DSR-6-vs-m table (2008), as quoted in Rafiq 2013 (Table 1).

The computer runs on a lane of 6 squares, its opponent on a lane of m = 3..10; both play MC(n),
n = 1, 2, 4, ..., 64, and the table counts the computer's wins out of 10,000 games per cell. The games
are played whole in C (``bots._selfplay``): the full table (56 cells x 10,000 games) takes seconds.
"""
from __future__ import annotations

from typing import Any

from arena.experiments.core import (
    TIE_PARAM_CHOICES,
    Experiment,
    Runner,
    Table,
    common_params,
    list_param,
    run_cells,
)
from arena.experiments.tasks import mc_games
from games.spec import Param

NS = [1, 2, 4, 8, 16, 32, 64]
LANES = [3, 4, 5, 6, 7, 8, 9, 10]
# Rafiq 2013, Table 1 (Althöfer 2008): the computer's wins out of 10,000, rows n, columns 6 vs 3..10.
ALTHOFER = {
    1: [361, 2204, 4805, 6933, 9340, 9649, 9967, 9988],
    2: [193, 1987, 5799, 6970, 9654, 9752, 9991, 9996],
    4: [47, 1468, 7039, 7450, 9905, 9868, 9999, 9999],
    8: [2, 836, 8573, 8228, 9989, 9969, 10000, 9999],
    16: [0, 286, 9557, 9264, 10000, 9992, 10000, 10000],
    32: [0, 40, 9936, 9875, 10000, 10000, 10000, 10000],
    64: [0, 0, 10000, 9991, 10000, 10000, 10000, 10000],
}
STUDY_GAMES = 10_000


def published(n: int, m: int, lane: int) -> float | None:
    if lane != 6 or n not in ALTHOFER or m not in LANES:
        return None
    return ALTHOFER[n][LANES.index(m)] / STUDY_GAMES


def run(cfg: dict[str, Any], runner: Runner) -> list[Table]:
    lane, tie = cfg["lane"], cfg["tie_break"]
    opp = cfg["opponent"]
    cells = []
    for n in cfg["n"]:
        for m in cfg["lanes"]:
            lengths = (lane, m) if cfg["computer_first"] else (m, lane)
            spec = f"doublestep(length0={lengths[0]},length1={lengths[1]},overshoot={cfg['overshoot']})"
            n_opp = n if opp == "mc" else 0
            ns = [n, n_opp] if cfg["computer_first"] else [n_opp, n]
            cells.append(((n, m), (spec, ns, [tie, tie])))
    totals = run_cells(runner, mc_games, cells, cfg["games"], 1000, cfg["seed"])
    seat = 0 if cfg["computer_first"] else 1
    table = Table("laziness", f"DSR-{lane}-vs-m: wins of MC(n) on lane {lane} (opponent: "
                  f"{'MC(n)' if opp == 'mc' else 'random'}; overshoot={cfg['overshoot']}, tie_break={tie}, "
                  f"computer {'first' if cfg['computer_first'] else 'second'})",
                  ["n", "lanes", "games", "wins", "rate", "lo", "hi", "published"],
                  plot={"x": "lanes", "y": "rate", "series": "n", "kind": "line"})
    for n in cfg["n"]:
        for m in cfg["lanes"]:
            counts = totals[(n, m)]
            table.add(counts[seat] + counts[-1] / 2, cfg["games"], published(n, m, lane), n=n, lanes=f"{lane}v{m}")
    return [table]


PARAMS = {
    **common_params(STUDY_GAMES),
    "n": list_param(NS, "MC(n) playouts per candidate, one row each"),
    "lanes": list_param(LANES, "opponent lane lengths m, one column each"),
    "lane": Param(int, 6, "the computer's lane length", min=1, max=1000),
    "opponent": Param(str, "mc", "the opponent: MC(n) like the computer (Althöfer) or uniformly random",
                      choices=("mc", "random")),
    "tie_break": Param(str, "random", "equal playout scores (the study does not say)", choices=TIE_PARAM_CHOICES),
    "overshoot": Param(str, "forbid", "a 2-step from 1 square away: forbid (Althöfer) or pass (Rafiq)",
                       choices=("forbid", "pass")),
    "computer_first": Param(bool, True, "the computer (lane 6) moves first"),
}

EXPERIMENT = Experiment(
    name="doublestep-laziness",
    title="Althöfer's laziness table: MC(n) on lane 6 against lanes 3..10",
    study="doublestep-hmc-rafiq-2013.txt, Table 1 (Althöfer 2008)",
    params=PARAMS,
    run=run,
    note="Full size by default (10,000 games per cell, like the study): compiled self-play takes seconds.",
)
