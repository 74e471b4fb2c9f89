"""``uct-defaults``: which UCT configuration a user who writes ``uct`` should get (docs/bots-uct.md, Defaults).

Each configuration plays Hex (7x7 by default) at equal wall time per move against flat Monte Carlo
(``mc(n=0)``: playouts until the clock runs out) and, when open_spiel is installed, against OpenSpiel's
C++ ``MCTSBot`` (UCT, c = 1.4, one random rollout per simulation: ``arena.bench.bots_uct.play_openspiel``).
Games come in deals: one bot seed played twice, the configuration once in each seat; intervals are a
cluster bootstrap over deals. Every configuration names all its parameters, so the table does not
change when the defaults do. Hex has no draws.
"""
from __future__ import annotations

import importlib
from typing import Any

import bots
import games
from arena.experiments.core import Experiment, Runner, Table, common_params, derive_seed, run_cell_tasks
from arena.experiments.tasks import deals_for
from bots.base import Limit
from games.spec import Param

# The module (the package's ``arena.play`` is the function), so a test's patch of its ``play`` is seen.
_PLAY = importlib.import_module("arena.referee.loop")

CONFIGS = {
    "study": "uct(c=annealed,expand=all,sims_per_leaf=11,final=winrate)",
    "one-0.3": "uct(c=0.3,expand=one,final=winrate)",
    "one-0.3-visits": "uct(c=0.3,expand=one,final=visits)",
    "one-annealed": "uct(c=annealed,expand=one,final=winrate)",
    "one-1.4": "uct(c=1.4,expand=one,final=winrate)",
}
OPPONENTS = {"mc": "mc(n=0,margin=0)", "mctsbot": "MCTSBot"}
"""Labels of the opponents; MCTSBot is OpenSpiel's C++ MCTSBot(uct_c=1.4, one random rollout per simulation)."""


def hex_deals(config: str, opponent: str, size: int, move_time: float, n_deals: int, seed: int) -> list[int]:
    """``n_deals`` deals of ``config`` against ``opponent`` on Hex: each deal one seed, the configuration in
    seat 0 then seat 1, ``move_time`` seconds per move for both and no margin. [wins, losses, draws]."""
    play = _PLAY.play  # looked up per call: the experiment tests record games by patching arena.referee.loop.play
    spec = CONFIGS[config].replace(")", ",margin=0)")
    counts = [0, 0, 0]
    for g in range(n_deals):
        deal = derive_seed(seed, g) % 2**31
        for seat in (0, 1):
            if opponent == "mctsbot":
                # optional: open_spiel (only against its bots)
                from arena.bench.bots_uct import play_openspiel

                result, _slowest = play_openspiel(size, move_time, seat, deal, spec=spec)
            else:
                game = games.load(f"hex(size={size})")
                players = [bots.make(spec if s == seat else OPPONENTS[opponent], game, s, deal + s) for s in (0, 1)]
                result = play(game, players, seed=deal, limit=Limit(time=move_time)).returns[seat]
            counts[0 if result > 0 else (1 if result < 0 else 2)] += 1
    return counts


def run(cfg: dict[str, Any], runner: Runner) -> list[Table]:
    opponents = list(cfg["opponents"])
    if "mctsbot" in opponents:
        try:
            # optional: open_spiel
            import pyspiel  # noqa: F401
        except ImportError:
            opponents.remove("mctsbot")  # said in the table's note
    cells = [((name, opp), (name, opp, cfg["size"], cfg["move_time"])) for opp in opponents for name in cfg["configs"]]
    deals = deals_for(cfg["games"], 2)
    res = run_cell_tasks(runner, hex_deals, cells, deals, 1, cfg["seed"])
    skipped = [o for o in cfg["opponents"] if o not in opponents]
    t = Table("configurations", f"Hex {cfg['size']}x{cfg['size']}, {cfg['move_time']:g} s per move for both sides: "
              f"wins of each UCT configuration ({deals} deals x 2 seats)",
              ["configuration", "opponent", "spec", "games", "wins", "rate", "lo", "hi"],
              note="" if not skipped else "open_spiel is not installed: no games against MCTSBot")
    for opp in opponents:
        for name in cfg["configs"]:
            vectors = res[(name, opp)]
            clusters = [(float(v[0] + v[2] / 2), sum(v)) for v in vectors]
            t.add(sum(c[0] for c in clusters), sum(c[1] for c in clusters), clusters=clusters, configuration=name,
                  opponent=OPPONENTS[opp], spec=CONFIGS[name])
    return [t]


def _names(valid: dict[str, str], what: str) -> Any:
    def parse(text: str) -> list[str]:
        out = [x for x in str(text).split("/") if x]
        bad = [x for x in out if x not in valid]
        if bad or not out:
            raise ValueError(f"unknown {what} {bad[0] if bad else text!r}; valid: {', '.join(valid)}")
        return out
    return parse


PARAMS = {
    **common_params(4),  # games per cell, rounded up to whole deals (2 games: one per seat)
    "configs": Param(str, ["study", "one-0.3"], "configurations (a/b/c): " + ", ".join(CONFIGS),
                     parser=_names(CONFIGS, "configuration")),
    "opponents": Param(str, ["mc", "mctsbot"], "opponents (a/b): mc, mctsbot (needs open_spiel)",
                       parser=_names(OPPONENTS, "opponent")),
    "move_time": Param(float, 0.1, "seconds per move for both sides", min=0.001),
    "size": Param(int, 7, "Hex board size", min=2, max=25),
}

EXPERIMENT = Experiment(
    name="uct-defaults",
    title="UCT configurations at equal time on Hex against mc and OpenSpiel's MCTSBot",
    study="arena's own measurement (docs/bots-uct.md, Defaults); the study preset is the Colosseum study's",
    params=PARAMS,
    run=run,
    note="A 7x7 game at 0.1 s per move costs about 4 s: the default is 4 games per cell; the table in "
         "docs/bots-uct.md was measured with --games 40 (see there for the command and its size).",
)
