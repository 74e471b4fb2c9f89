"""``sorry-determinized``: Thompson & Rooney 2021, determinized MCTS on Sorry! against random players.

The study's grid of (c, d, s) in two-player games (one random opponent; 100 games per row, 1,000 for the
baseline c=1.4, d=25, s=100) and its two three-player rows (two random opponents; the MCTS wins counted
against both). The four-player game (three random opponents) was not run in the study; ``players=4``
runs it here. Games come in deals: one set-up and chance seed played k times (k players), the MCTS once in
each seat, so it sits in every seat equally often on the same card streams; intervals are a cluster
bootstrap over deals. ``games`` is rounded up to whole deals per row.
"""
from __future__ import annotations

from typing import Any

from arena.experiments.core import Experiment, Runner, Table, common_params, run_cell_tasks
from arena.experiments.tasks import deals_for, rotation_games
from games.spec import Param

# (players, c, d, s, games, MCTS wins) from the study's two tables.
GRID = [
    (2, 1.4, 25, 100, 1000, 720), (2, 0.2, 5, 100, 100, 53), (2, 1.4, 10, 100, 100, 60),
    (2, 1.4, 5, 200, 100, 67), (2, 1.4, 15, 200, 100, 66), (2, 1.4, 50, 100, 100, 66),
    (2, 1.4, 15, 120, 100, 71), (2, 1.0, 15, 120, 100, 71), (2, 0.8, 15, 120, 100, 67),
    (2, 0.5, 15, 120, 100, 62), (2, 1.2, 20, 120, 100, 68), (2, 1.8, 25, 100, 100, 58),
    (2, 1.6, 25, 100, 100, 69), (2, 2.0, 25, 100, 100, 65), (2, 2.4, 25, 100, 100, 71),
    (3, 1.4, 25, 100, 100, 53), (3, 1.4, 25, 120, 70, 34),
]


def _grid(text: str) -> list[tuple]:
    """``--set grid=c:d:s/c:d:s`` (two players) or ``players:c:d:s`` entries."""
    out = []
    for item in str(text).replace(",", "/").split("/"):
        parts = item.split(":")
        if len(parts) == 3:
            parts = ["2"] + parts
        if len(parts) != 4:
            raise ValueError(f"grid entries are c:d:s or players:c:d:s, not {item!r}")
        row = (int(parts[0]), float(parts[1]), int(parts[2]), int(parts[3]))
        # A row of the study keeps its published result, so a chosen subset is still compared.
        out.append(next((r for r in GRID if r[:4] == row), row + (0, None)))
    return out


def run(cfg: dict[str, Any], runner: Runner) -> list[Table]:
    rows = [r for r in cfg["grid"] if r[0] in cfg["players"]]
    extra = cfg["players"]
    if 4 in extra:
        rows.append((4, 1.4, 25, 100, 0, None))
    rules = cfg["rules"]
    cells = []
    for i, (k, c, d, s, _, _) in enumerate(rows):
        spec = f"sorry(players={k}" + (f",{rules}" if rules else "") + ",seed={seed})"
        cells.append((i, (spec, f"determinized(c={c:g},d={d},s={s})", "random", cfg["max_moves"], 0.0)))
    deals = {i: deals_for(cfg["games"], row[0]) for i, row in enumerate(rows)}
    res = run_cell_tasks(runner, rotation_games, cells, deals, 1, cfg["seed"])
    t = Table("grid", "Sorry!: determinized MCTS against random players, MCTS wins (draws count half; "
              "deals of one game per seat)",
              ["players", "c", "d", "s", "games", "wins", "rate", "lo", "hi", "published", "chance"],
              plot={"x": "cds", "y": "rate", "series": None, "kind": "bar"})
    for i, (k, c, d, s, g, w) in enumerate(rows):
        clusters = [(v[0] + v[2] / 2, sum(v)) for v in res[i]]
        t.add(sum(x for x, _ in clusters), sum(n for _, n in clusters), (w / g) if g else None, clusters=clusters,
              players=k, c=c, d=d, s=s,
              chance=1 / k, cds=f"{k}p {c:g}/{d}/{s}")
    return [t]


PARAMS = {
    **common_params(4),
    "players": Param(str, [2, 3], "player counts to run (2, 3 from the study; 4 adds c=1.4, d=25, s=100)",
                     parser=lambda s: [int(x) for x in str(s).replace(",", "/").split("/") if x]),
    "grid": Param(str, GRID, "the (c, d, s) rows: c:d:s or players:c:d:s entries (default: the study's 17)",
                  parser=_grid),
    "rules": Param(str, "", "extra Sorry! rule options for the game spec, e.g. sorryFwd4=true"),
    "max_moves": Param(int, 5000, "adjudicate a draw after this many decisions", min=1),
}

EXPERIMENT = Experiment(
    name="sorry-determinized",
    title="Determinized MCTS on Sorry! against 1-3 random players over the (c, d, s) grid",
    study="sorry-mcts-thompson-rooney-2021.txt, Results (two- and three-player tables)",
    params=PARAMS,
    run=run,
    note="A game with d x s = 2,500 iterations per move costs seconds: the default is 4 games per row (minutes "
         "on 2 cores, wide intervals); the study: --games 100 (1,000 for the baseline row).",
)
