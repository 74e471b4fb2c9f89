"""``hex-mc``: Radović & Raičević 2015, naive Monte Carlo Hex on 7x7 (no pie rule).

* ``first-player``: MC(N) against MC(N), N = 500..13000 playouts per candidate, 200 games each in the study
  (Figure 2): the first player's win ratio. Games are played whole in C (``bots._selfplay``); a 7x7 game
  costs about N x 0.5 ms on one core here (measured at 200 games for N = 500..7000), so the default uses few
  games and N up to 2000.
* ``noise`` (Figure 4): random boards after k moves are evaluated again and again (the probability that
  the player who made the last move wins); mean and standard deviation over the repetitions for
  N = 1000, 3000, 5000. The study does not say how many playouts one evaluation uses; ``evaluation``
  chooses between N random fills of the board (``total``) and N per candidate reply, as MC(N) spends
  them (``per_candidate``, the mean over every candidate's playouts).
"""
from __future__ import annotations

import math
import random
import statistics
from typing import Any

import games
from arena.experiments.core import (
    TIE_PARAM_CHOICES,
    Experiment,
    Runner,
    Table,
    common_params,
    derive_seed,
    list_param,
    run_cells,
)
from arena.experiments.tasks import mc_games
from games._core import playouts
from games.spec import Param

FIG2 = {500: 152, 1000: 165, 3000: 185, 5000: 194, 7000: 195, 10000: 199, 13000: 199}  # out of 200
FIG2_GAMES = 200
# Figure 4: (moves on the board, goal probability, {N: (stdev, mean)}).
FIG4: list[tuple[int, float, dict[int, tuple[float, float]]]] = [
    (3, 0.56902, {1000: (0.00116, 0.56988), 3000: (0.00077, 0.56942), 5000: (0.00061, 0.56892)}),
    (3, 0.60952, {1000: (0.00105, 0.60774), 3000: (0.00078, 0.60916), 5000: (0.00072, 0.60928)}),
    (5, 0.56644, {1000: (0.00083, 0.56632), 3000: (0.00059, 0.56640), 5000: (0.00047, 0.56589)}),
    (5, 0.56086, {1000: (0.00110, 0.56045), 3000: (0.00090, 0.56212), 5000: (0.00082, 0.56013)}),
    (13, 0.47075, {1000: (0.00089, 0.47065), 3000: (0.00083, 0.46983), 5000: (0.00049, 0.47058)}),
    (13, 0.50621, {1000: (0.00107, 0.50656), 3000: (0.00081, 0.50666), 5000: (0.00044, 0.50687)}),
    (17, 0.51385, {1000: (0.00087, 0.51378), 3000: (0.00070, 0.51405), 5000: (0.00072, 0.51350)}),
    (23, 0.40901, {1000: (0.00083, 0.40814), 3000: (0.00057, 0.40896), 5000: (0.00057, 0.40882)}),
    (29, 0.69701, {1000: (0.00105, 0.69745), 3000: (0.00077, 0.69739), 5000: (0.00045, 0.69679)}),
    (29, 0.37759, {1000: (0.00076, 0.37568), 3000: (0.00063, 0.37737), 5000: (0.00033, 0.37692)}),
]


def random_board(size: int, moves: int, seed: int) -> Any:
    """A 7x7 (``size``) Hex position after ``moves`` uniformly random moves (not yet decided)."""
    game = games.load(f"hex(size={size})")
    rng = random.Random(seed)
    while True:
        state = game.new_initial_state()
        for _ in range(moves):
            state.apply_action(rng.choice(state.legal_actions()))
            if state.is_terminal():
                break
        if not state.is_terminal():
            return state


def evaluate(state: Any, n: int, mode: str, seed: int) -> float:
    """Estimated probability that the player who made the last move wins."""
    last = 1 - state.current_player()
    if mode == "total":
        wins, _ = playouts(state, n, seed)
        return wins[last] / n
    won = total = 0
    for i, action in enumerate(state.legal_actions()):
        child = state.clone()
        child.apply_action(action)
        wins, _ = playouts(child, n, derive_seed(seed, i))
        won += wins[last]
        total += n
    return won / total


def noise_task(size: int, moves: int, board_seed: int, n: int, mode: str, repeats: int, n_games: int,
               seed: int) -> list[float]:
    """``repeats`` evaluations of one random board (``n_games`` is unused: one task per cell)."""
    state = random_board(size, moves, board_seed)
    return [evaluate(state, n, mode, derive_seed(seed, r)) for r in range(repeats)]


def run(cfg: dict[str, Any], runner: Runner) -> list[Table]:
    spec = f"hex(size={cfg['size']})"
    tie = cfg["tie_break"]
    tables = []
    res = run_cells(runner, mc_games, [(("fp", n), (spec, [n, n], [tie, tie])) for n in cfg["n"]],
                    cfg["games"], 1, cfg["seed"])
    t = Table("first_player", f"Figure 2: MC(N) vs MC(N) on {spec}: first player's win ratio (tie_break={tie})",
              ["N", "games", "wins", "rate", "lo", "hi", "published"],
              plot={"x": "N", "y": "rate", "series": None, "kind": "line"})
    for n in cfg["n"]:
        c = res[("fp", n)]
        pub = FIG2[n] / FIG2_GAMES if n in FIG2 and cfg["size"] == 7 else None
        t.add(c[0] + c[-1] / 2, cfg["games"], pub, N=n)
    tables.append(t)
    if cfg["boards"] > 0:
        boards = FIG4[:cfg["boards"]]
        cells = [((b, n), (cfg["size"], moves, derive_seed(cfg["seed"], "board", b), n, cfg["evaluation"],
                           cfg["repeats"])) for b, (moves, _, _) in enumerate(boards) for n in cfg["noise_n"]]
        res = run_cells(runner, noise_task, cells, 1, 1, cfg["seed"])
        t = Table("noise", f"Figure 4: repeated evaluations of random {spec} boards ({cfg['repeats']} each, "
                  f"evaluation={cfg['evaluation']}); the study's boards differ from ours",
                  ["board", "moves", "N", "mean", "stdev", "binom_sd", "study_sd", "study_mean"],
                  plot={"x": "N", "y": "stdev", "series": "board", "kind": "line"}, percent=False)
        for b, (moves, _, published) in enumerate(boards):
            for n in cfg["noise_n"]:
                vals = res[(b, n)]
                mean = statistics.fmean(vals)
                state = random_board(cfg["size"], moves, derive_seed(cfg["seed"], "board", b))
                k = 1 if cfg["evaluation"] == "total" else len(state.legal_actions())
                p_std, p_mean = published.get(n, (None, None))
                t.add(board=b, moves=moves, N=n, mean=mean, stdev=statistics.stdev(vals) if len(vals) > 1 else 0.0,
                      binom_sd=math.sqrt(max(mean * (1 - mean), 0.0) / (n * k)),
                      study_sd=p_std, study_mean=p_mean)
        tables.append(t)
    return tables


PARAMS = {
    **common_params(10),
    "n": list_param([500, 1000, 2000], "N, playouts per candidate (the study: 500/1000/3000/5000/7000/"
                    "10000/13000)"),
    "size": Param(int, 7, "board size", min=2, max=13),
    "tie_break": Param(str, "first", "equal win counts (the study's loop keeps the first best tile)",
                       choices=TIE_PARAM_CHOICES),
    "boards": Param(int, 10, "how many of the study's 10 board rows (by move number) to evaluate (0: skip)",
                    min=0, max=len(FIG4)),
    "noise_n": list_param([1000, 3000, 5000], "N of the noise table"),
    "repeats": Param(int, 5, "evaluations per board and N (the study: 62 steps of N, one each)", min=2),
    "evaluation": Param(str, "per_candidate", "playouts of one evaluation: N per candidate reply or N in total",
                        choices=("per_candidate", "total")),
}

EXPERIMENT = Experiment(
    name="hex-mc",
    title="Naive MC Hex 7x7: first-player win ratio and evaluation noise",
    study="hex-mc-radovic-raicevic-2015.txt, Figures 2 and 4",
    params=PARAMS,
    run=run,
    note="A 7x7 MC(N) game costs about N x 0.5 ms on one core: the default plays 10 games at N = 500, 1000, "
         "2000 and 5 evaluations per board (a minute or two on 2 cores). The study's Figure 2: --games 200 --set "
         "n=500/1000/3000/5000/7000/10000/13000 --set boards=0 (about 35 minutes on 2 cores).",
)
