"""``colosseum-uct``: Baier-Reinio & MacDonald 2022, UCT on Colosseum Survival (random boards, 2 s per move).

* annealed C (``C = e^(1/depth) - 1``) against the classic constant C;
* ``sims_per_leaf`` 2..12 against an identical agent with 3 (the study: 50 games each; 11 won 57.5%, the
  only number its text gives, so it is the one published value here);
* tree reuse on against off.

Games come in deals: a fresh random board (``colosseum(seed=...)``, size 6..12) and chance seed played
twice, each agent once in each seat; intervals are a cluster bootstrap over deals. Like the study's agent,
every agent reuses its tree between moves (``reuse=true``) except the "no reuse" side of the reuse
match-up (``--set reuse=false`` turns it off everywhere else). The budget is ``iterations`` per move
rather than the study's 2 s, so results do not depend on the load. Colosseum has draws by its rules
(equal territories), besides the ``max_moves`` adjudication; a draw counts half.
"""
from __future__ import annotations

from typing import Any

from arena.experiments.core import Experiment, Runner, Table, common_params, list_param, run_cell_tasks
from arena.experiments.tasks import deals_for, rotation_games
from games.spec import Param

PUBLISHED_SIMS = {11: 0.575}
STUDY_GAMES = 50


def _score(vectors: list[list[int]]) -> tuple[float, int, list[tuple[float, int]], int]:
    """(A's score, games, per-deal clusters, draws) of one cell's deal vectors [A wins, B wins, draws]."""
    clusters = [(v[0] + v[2] / 2, sum(v)) for v in vectors]
    return sum(c[0] for c in clusters), sum(c[1] for c in clusters), clusters, sum(v[2] for v in vectors)


def run(cfg: dict[str, Any], runner: Runner) -> list[Table]:
    spl = cfg["sims_per_leaf"]
    timed = cfg["move_time"] > 0
    it = f"{cfg['move_time']:g} s" if timed else f"{cfg['iterations']} iterations"
    budget = "" if timed else f"iterations={cfg['iterations']},"
    reuse = f",reuse={'true' if cfg['reuse'] else 'false'}"
    # The study's agent in full (expand=all, final=winrate), so the table does not follow uct's defaults.
    study = f"uct({budget}expand=all,final=winrate,"
    base = f"{study}sims_per_leaf={spl}"
    template = "colosseum(seed={seed})" if cfg["size"] == 0 else f"colosseum(size={cfg['size']},seed={{seed}})"
    rest = (cfg["max_moves"], cfg["move_time"])
    cells: list[tuple[Any, tuple]] = [
        ("annealed", (template, base + f",c=annealed{reuse})", base + f",c={cfg['constant_c']}{reuse})") + rest),
        ("reuse", (template, base + ",reuse=true)", base + ",reuse=false)") + rest)]
    cells += [(("spl", s), (template, f"{study}sims_per_leaf={s},c=annealed{reuse})",
                            f"{study}sims_per_leaf={cfg['baseline_sims']},c=annealed{reuse})") + rest)
              for s in cfg["sims"]]
    deals = deals_for(cfg["games"], 2)
    res = run_cell_tasks(runner, rotation_games, cells, deals, 1, cfg["seed"])
    cols = ["games", "wins", "draws", "rate", "lo", "hi", "published"]
    tree = "tree reuse" if cfg["reuse"] else "no tree reuse"
    a = Table("variants", f"Colosseum, UCT with {it} per move: score of the first-named agent "
              f"(draws count half), {deals} deals x 2 seats", ["agent", "opponent"] + cols)
    for key, name, opp in (("annealed", f"annealed C ({tree})", f"C={cfg['constant_c']}"),
                           ("reuse", "tree reuse", "no reuse")):
        score, games, clusters, draws = _score(res[key])
        a.add(score, games, None, clusters=clusters, agent=name, opponent=opp, draws=draws)
    b = Table("sims_per_leaf", f"sims_per_leaf s against s={cfg['baseline_sims']} (UCT, {it} per move, {tree}; "
              f"{deals} deals x 2 seats; the study: 2 s, tree reuse)",
              ["sims_per_leaf"] + cols, plot={"x": "sims_per_leaf", "y": "rate", "series": None, "kind": "line"})
    for s in cfg["sims"]:
        score, games, clusters, draws = _score(res[("spl", s)])
        pub = PUBLISHED_SIMS.get(s) if cfg["baseline_sims"] == 3 else None
        b.add(score, games, pub, clusters=clusters, sims_per_leaf=s, draws=draws)
    return [a, b]


PARAMS = {
    **common_params(4),  # games per cell, rounded up to whole deals (2 games: one per seat)
    "iterations": Param(int, 10, "UCT iterations per move (the study: 2 s per move)", min=1),
    "move_time": Param(float, 0.0, "seconds per move instead of iterations (the study: 2; results then depend "
                       "on the machine's load)", min=0),
    "sims_per_leaf": Param(int, 11, "playouts per new child for the annealed/reuse match-ups (the study: 11)",
                           min=1, max=64),
    "sims": list_param([2, 5, 8, 11], "sims_per_leaf values tested against the baseline (the study: 2-12)"),
    "baseline_sims": Param(int, 3, "the fixed opponent's sims_per_leaf", min=1, max=64),
    "constant_c": Param(float, 1.414, "the constant C the annealed schedule is compared with", min=0),
    "size": Param(int, 0, "board size (0: drawn 6..12 per game, like the study)", min=0, max=12),
    "max_moves": Param(int, 1000, "adjudicate a draw after this many moves", min=1),
    "reuse": Param(bool, True, "every agent keeps its tree between moves, as the study's did (the reuse "
                   "match-up always compares on against off)"),
}

EXPERIMENT = Experiment(
    name="colosseum-uct",
    title="UCT on Colosseum: annealed vs constant C, sims_per_leaf 2..12 vs 3, tree reuse",
    study="colosseum-mcts-baier-reinio-macdonald-2022.txt, sections 1.4 and 1.9",
    params=PARAMS,
    run=run,
    note="A Colosseum game between UCT agents costs seconds (expand=all, sims_per_leaf playouts per new "
         "child): the default is 4 games per cell at 10 iterations per move, sims 2/5/8/11 (minutes on 2 cores); "
         "the study: --games 50 --set move_time=2 --set sims=2-12 (about a day on 2 cores).",
)
