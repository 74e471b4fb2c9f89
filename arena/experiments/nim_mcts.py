"""``nim-mcts``: Telepchuk 2020, MCTS on single-pile Nim (k = 3, starting pile 20..50 and first player drawn
at random, 300 games per match-up).

Match-ups (the player under study first): MCTS vs random, strategic MCTS (greedy rollouts) vs MCTS,
tree-reuse MCTS vs MCTS, MCTS vs greedy, and MCTS vs greedy on the coin variant. For the player under
study, per starting-pile statistics of its decisions: popularity (decisions at that pile), confidence
(win rate of the chosen root child), playouts and tree nodes per decision, and the mean, median and
maximum root-to-leaf path length of the tree (in decisions; the per-decision values averaged over the
decisions at that pile). The ``uct`` bot keeps no depth statistics, so the tree is walked from outside
after each decision with ``Search.visits_at(path)``.

The study gave each MCTS 10 ms per move (100 ms against greedy); here the budget is ``iterations`` per
move, so results do not depend on the machine's load.

Not the study's setup: the strategic MCTS of ``strategic-vs-mcts`` is ``rollout=greedy``, the heuristic for
BOTH sides of every playout (so a playout returns the position's true value); the study's played the
heuristic for its own moves only and random moves for the opponent. The compiled search has no one-seat
greedy rollout, so ``study-strategic-vs-mcts`` (not in the default set) plays the study's setup with a
small Python search (:mod:`arena.experiments.nim_study_mcts`) on both sides, and ``py-greedy-both-vs-mcts``
the both-sides variant with the same code (docs/experiments.md, nim-mcts).
"""
from __future__ import annotations

import importlib
import random
from typing import Any

import bots
import games
from arena.experiments.core import Experiment, Runner, Table, common_params, derive_seed, run_cells
from arena.experiments.nim_study_mcts import StudyNimMCTS
from bots.base import Limit
from games.spec import Param

# The module (the package's ``arena.play`` is the function), so a test's patch of its ``play`` is seen.
_PLAY = importlib.import_module("arena.referee.loop")

# (name, player under study, opponent, coin variant, the study's wins of the player under study out of 300)
MATCHUPS = [
    ("mcts-vs-random", "{mcts}", "random", False, 297),
    ("strategic-vs-mcts", "{strategic}", "{mcts}", False, 143),
    ("reuse-vs-mcts", "{reuse}", "{mcts}", False, 83),
    ("mcts-vs-greedy", "{mcts}", "greedy", False, 2),
    ("coin-mcts-vs-greedy", "{mcts}", "greedy", True, 258),
    # Not in the default set: the study's strategic MCTS (greedy for its own moves only) against the same
    # Python search with random playouts, and the both-sides-greedy cross-check (nim_study_mcts.py).
    ("study-strategic-vs-mcts", "{study_own}", "{study_random}", False, 143),
    ("py-greedy-both-vs-mcts", "{study_both}", "{study_random}", False, None),
]
DEFAULT_MATCHUPS = [m[0] for m in MATCHUPS[:5]]
STUDY_GAMES = 300
MAX_PILE = 50

N_STATS = 7  # per pile: decisions, confidence, playouts, nodes, mean path, median path, max path (sums)


def leaf_depths(search: Any, state: Any) -> list[int]:
    """Depths (decisions, chance edges not counted) of the leaves of a uct search tree rooted at ``state``,
    found from outside through ``visits_at(path)``: a node is a leaf when none of its moves is in the tree."""
    depths: list[int] = []
    stack: list[tuple[Any, list[int], int]] = [(state, [], 0)]
    while stack:
        node, path, depth = stack.pop()
        if node.is_terminal():
            depths.append(depth)
            continue
        chance = node.is_chance_node()
        actions = [a for a, _ in node.chance_outcomes()] if chance else node.legal_actions()
        children = 0
        for a in actions:
            child_path = path + [a]
            if search.visits_at(child_path) >= 0:
                children += 1
                child = node.clone()
                child.apply_action(a)
                stack.append((child, child_path, depth + (0 if chance else 1)))
        if not children:
            depths.append(depth)
    return depths


class _Recorder:
    """Wraps a uct bot and keeps per-pile sums of its decisions' statistics (N_STATS of them)."""

    def __init__(self, bot: Any, stats: list[list[float]], paths: bool) -> None:
        self.bot, self.stats, self.paths = bot, stats, paths
        self.name = getattr(bot, "name", "bot")

    def step(self, state: Any, limit: Any) -> int:
        pile = state.observation()["pile"]
        action = self.bot.step(state, limit)
        search = getattr(self.bot, "search", None)
        if search is not None and hasattr(self.bot, "last_search"):
            children = {a: (v, w) for a, v, w in search.root_children()}
            visits, wins = children.get(action, (0, 0.0))
            row = self.stats[pile]
            row[0] += 1
            row[1] += wins / visits if visits else 0.0
            row[2] += self.bot.last_search.get("playouts", 0)
            row[3] += self.bot.last_search.get("nodes", 0)
            if self.paths:
                depths = sorted(leaf_depths(search, state)) or [0]
                row[4] += sum(depths) / len(depths)
                row[5] += depths[len(depths) // 2]
                row[6] += depths[-1]
        return action

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bot, name)

def nim_task(a_spec: str, b_spec: str, coin: bool, k: int, lo: int, hi: int, paths: bool, move_time: float,
             n_games: int, seed: int) -> list:
    """``n_games`` games of bot A against bot B, pile drawn from lo..hi and A's seat drawn at random.
    Returns [A's wins, games, then N_STATS sums per pile 0..MAX_PILE flattened]."""
    play = _PLAY.play  # looked up per call: the experiment tests record games by patching arena.referee.loop.play
    limit = Limit(time=move_time) if move_time > 0 else None
    stats = [[0.0] * N_STATS for _ in range(MAX_PILE + 1)]
    wins = 0
    for g in range(n_games):
        rng = random.Random(derive_seed(seed, g))
        pile, a_seat = rng.randint(lo, hi), rng.randrange(2)
        game = games.load(f"nim(n={pile},k={k},coin={'true' if coin else 'false'})")
        a = _Recorder(_make(a_spec, game, a_seat, derive_seed(seed, g, "a")), stats, paths)
        b = _make(b_spec, game, 1 - a_seat, derive_seed(seed, g, "b"))
        players = [a, b] if a_seat == 0 else [b, a]
        record = play(game, players, seed=derive_seed(seed, g, "chance"), limit=limit)
        wins += record.winner() == a_seat
    return [wins, n_games] + [x for row in stats for x in row]

def _make(spec: str, game: Any, seat: int, seed: int) -> Any:
    """``bots.make``, or the study's Python search for a ``study-mcts:POLICY:ITERATIONS`` spec."""
    if spec.startswith("study-mcts:"):

        _, policy, iterations = spec.split(":")
        return StudyNimMCTS(game, seat, seed, iterations=int(iterations), policy=policy)

    return bots.make(spec, game, seat, seed)


def run(cfg: dict[str, Any], runner: Runner) -> list[Table]:
    k = cfg["k"]
    it = "" if cfg["move_time"] > 0 else f"iterations={cfg['iterations']}"
    base = cfg["mcts"].rstrip(")")
    sep = "," if "(" in base and not base.endswith("(") else ""
    if "(" not in base:
        base += "("
    if not it:
        sep = ""
    specs = {"mcts": f"{base}{sep}{it})", "strategic": f"{base}{sep}{it},rollout=greedy)".replace("(,", "("),
             "reuse": f"{base}{sep}{it},reuse=true)".replace("(,", "("),
             # the Python search of the study's strategic MCTS (iterations only: it has no clock)
             **{f"study_{p}": f"study-mcts:{p}:{cfg['iterations']}" for p in ("own", "random", "both")}}
    chosen = [m for m in MATCHUPS if m[0] in cfg["matchups"]]
    cells = [(name, (a.format(**specs), b.format(**specs), coin, k, cfg["pile_min"], cfg["pile_max"],
                   cfg["paths"], cfg["move_time"]))
             for name, a, b, coin, _ in chosen]
    res = run_cells(runner, nim_task, cells, cfg["games"], 10, cfg["seed"])
    summary = Table("matchups", f"Nim (k={k}, pile {cfg['pile_min']}..{cfg['pile_max']}, seats at random): wins "
                    f"of the first-named player; MCTS = {specs['mcts']}"
                    + (f", {cfg['move_time']:g} s per move" if cfg["move_time"] > 0 else ""),
                    ["matchup", "games", "wins", "rate", "lo", "hi", "published"],
                    plot={"x": "matchup", "y": "rate", "series": None, "kind": "bar"})
    tables = [summary]
    for name, a, _b, _coin, pub in chosen:
        c = res[name]
        summary.add(c[0], int(c[1]), None if pub is None else pub / STUDY_GAMES, matchup=name)
        t = Table(f"piles-{name}", f"{name}: per-pile statistics of {a.format(**specs)}",
                  ["pile", "popularity", "confidence", "playouts", "nodes"]
                  + (["avg_path", "med_path", "max_path"] if cfg["paths"] else []), percent=False,
                  plot={"x": "pile", "y": "confidence", "series": None, "kind": "line"})
        flat = c[2:]
        for pile in range(MAX_PILE + 1):
            d, conf, play_sum, nodes, avg_p, med_p, max_p = flat[N_STATS * pile:N_STATS * (pile + 1)]
            if d:
                t.add(pile=pile, popularity=int(d), confidence=conf / d, playouts=play_sum / d, nodes=nodes / d,
                      avg_path=avg_p / d, med_path=med_p / d, max_path=max_p / d)
        tables.append(t)
    return tables

PARAMS = {
    **common_params(300),
    "matchups": Param(str, DEFAULT_MATCHUPS, "match-ups to play (a/b/c; the last two are not played by "
                      "default): " + ", ".join(m[0] for m in MATCHUPS),
                      parser=lambda s: _matchups(s)),
    "mcts": Param(str, "uct(expand=one,c=1.414)", "the base MCTS spec (the study: one child per expansion, UCB1)"),
    "iterations": Param(int, 2000, "MCTS iterations per move (the study: 10 ms, about 1,000-7,000 playouts)",
                        min=1),
    "move_time": Param(float, 0.0, "seconds per move instead of iterations (the study: 0.01, and 0.1 against "
                       "greedy); results then depend on the machine's load", min=0),
    "k": Param(int, 3, "most counters per move", min=1, max=50),
    "paths": Param(bool, True, "root-to-leaf path lengths of the tree after each decision (walked from Python "
                   "through uct's visits_at: the slow part of this experiment)"),
    "pile_min": Param(int, 20, "smallest starting pile", min=1, max=MAX_PILE),
    "pile_max": Param(int, 50, "largest starting pile", min=1, max=MAX_PILE),
}

def _matchups(text: str) -> list[str]:
    names = [m[0] for m in MATCHUPS]
    out = [x for x in str(text).replace(",", "/").split("/") if x]
    bad = [x for x in out if x not in names]
    if bad or not out:
        raise ValueError(f"unknown match-up {bad[0] if bad else text!r}; valid: {', '.join(names)}")
    return out

EXPERIMENT = Experiment(
    name="nim-mcts",
    title="MCTS on Nim: random, strategic, tree reuse, greedy, coin variant",
    study="nim-mcts-telepchuk-2020-pl.txt, sections 3 and 5 (Tables 1-4)",
    params=PARAMS,
    run=run,
    note="Default: the study's 300 games per match-up, at 2,000 iterations per move (under a minute on 2 cores)."
)

