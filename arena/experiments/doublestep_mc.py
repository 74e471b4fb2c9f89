"""``doublestep-mc``: Rafiq 2013's Double Step tables (board 10, pass on overshoot, 10,000 games per cell).

Tables 2-3 (MC(n) against random and against MC(m)) are played whole in C (``bots._selfplay``). Tables
4-7 put the nested HMC(n) bot (``hmc``) through the in-process referee; they cost milliseconds per move, so
they get ``hmc_games`` games per cell. Tables 8-11 replay MC(n) (and HMC(n)) self-play on a 50-square
board and count how often the move chosen is optimal, by the mover's square and by the distance between
the players.

Seat 0 is the study's Player 1, who moves first. The study does not say how ties were broken: with
``tie_break=last`` ties go to the 2-step, which is what "move 2 unless the 1-step won more" does.
"""
from __future__ import annotations

from typing import Any

import games
from arena.experiments.core import (
    TIE_CODES,
    TIE_PARAM_CHOICES,
    Experiment,
    Runner,
    Table,
    common_params,
    derive_seed,
    list_param,
    run_cells,
)
from arena.experiments.tasks import bot_games, mc_games
from bots._mc import MCSearch
from games.spec import Param

NS = [1, 2, 4, 8, 16, 32, 64]
G = 10_000
T2 = [9765, 9768, 9770, 9763, 9792, 9886, 10000]
# Tables 3, 5, 6: rows Player 2's n, columns Player 1's n (wins of Player 1 out of 10,000).
T3 = [[6870, 6881, 7278, 7215, 7905, 8780, 9563], [7261, 7203, 7607, 7521, 8117, 8822, 9594],
      [7167, 7172, 7597, 7529, 8168, 8861, 9540], [6803, 6876, 7358, 7189, 7861, 8713, 9506],
      [6278, 6338, 6847, 6638, 7491, 8452, 9401], [5566, 5560, 6059, 6147, 6896, 8080, 9234],
      [4713, 4885, 5437, 5314, 6346, 7722, 9122]]
T4 = [9969, 9981, 10000, 10000, 10000, 10000, 10000]
T5 = [[9192, 9249, 9328, 9580, 9718, 9770, 10000], [9224, 9547, 9504, 9639, 9642, 9791, 10000],
      [9267, 9366, 9425, 9585, 9749, 9795, 10000], [9087, 9318, 9181, 9515, 9650, 9777, 10000],
      [8997, 9130, 9097, 9398, 9536, 9746, 10000], [8536, 8952, 8864, 9298, 9499, 9685, 10000],
      [8046, 8733, 8603, 9110, 9347, 9579, 10000]]
T6 = [[8876, 8926, 9045, 9364, 9687, 9706, 10000], [8694, 8779, 8973, 9307, 9675, 9696, 10000],
      [8539, 8755, 8894, 9236, 9633, 9645, 10000], [8400, 8694, 8747, 9166, 9595, 9611, 10000],
      [8392, 8662, 8672, 9093, 9530, 9599, 10000], [8156, 8582, 8564, 9051, 9439, 9502, 10000],
      [7902, 8555, 8438, 8991, 9358, 9487, 10000]]
LANES = [3, 4, 5, 6, 7, 8, 9, 10]
T7 = {1: [0, 0, 9733, 9874], 2: [0, 0, 9670, 9733], 4: [0, 0, 9764, 9655], 8: [0, 0, 9955, 9699],
      16: [0, 0, 9998, 9903], 32: [0, 0, 10000, 9990], 64: [0, 0, 10000, 10000]}  # 6v7..6v10: all 10000
# Tables 8-11 (board 50): probability that the suggested move is optimal; rows position 0..49 / distance 0..10.
T8_ROWS = ("0.7173 0.7296 0.7443 0.7537 0.7928 0.7833|0.7428 0.7259 0.7438 0.7360 0.7861 0.7849|"
           "0.7196 0.7275 0.7440 0.7542 0.7993 0.7878|0.7346 0.7257 0.7481 0.7503 0.8067 0.7842|"
           "0.7257 0.7204 0.7399 0.7440 0.8088 0.7961|0.7277 0.7282 0.7460 0.7535 0.7929 0.7914|"
           "0.7285 0.7333 0.7567 0.7571 0.8077 0.7997|0.7286 0.7330 0.7536 0.7591 0.7985 0.8028|"
           "0.7262 0.7311 0.7410 0.7584 0.8054 0.7946|0.7189 0.7344 0.7559 0.7466 0.8090 0.7883|"
           "0.7347 0.7390 0.7516 0.7628 0.8048 0.7931|0.7279 0.7396 0.7519 0.7617 0.8067 0.8058|"
           "0.7229 0.7401 0.7477 0.7589 0.8101 0.7996|0.7388 0.7350 0.7627 0.7558 0.8069 0.8002|"
           "0.7428 0.7353 0.7584 0.7689 0.8115 0.8145|0.7345 0.7412 0.7656 0.7661 0.8023 0.8084|"
           "0.7495 0.7436 0.7720 0.7818 0.8246 0.8007|0.7548 0.7433 0.7616 0.7780 0.8116 0.8141|"
           "0.7426 0.7470 0.7737 0.7756 0.8211 0.8125|0.7472 0.7583 0.7725 0.7723 0.8179 0.8209|"
           "0.7443 0.7454 0.7785 0.7754 0.8255 0.8190|0.7483 0.7561 0.7715 0.7822 0.8234 0.8222|"
           "0.7453 0.7568 0.7688 0.7898 0.8317 0.8246|0.7554 0.7563 0.7809 0.7874 0.8240 0.8253|"
           "0.7484 0.7641 0.7845 0.7898 0.8263 0.8265|0.7657 0.7665 0.7757 0.7921 0.8270 0.8246|"
           "0.7469 0.7668 0.7773 0.7960 0.8353 0.8363|0.7500 0.7649 0.7865 0.7851 0.8490 0.8288|"
           "0.7668 0.7770 0.7801 0.7945 0.8399 0.8307|0.7706 0.7589 0.7854 0.7947 0.8381 0.8342|"
           "0.7636 0.7632 0.7866 0.8035 0.8451 0.8329|0.7724 0.7843 0.7888 0.8039 0.8399 0.8408|"
           "0.7797 0.7730 0.7890 0.8014 0.8500 0.8436|0.7713 0.7811 0.7933 0.8061 0.8475 0.8420|"
           "0.7773 0.7789 0.8044 0.8113 0.8500 0.8377|0.7817 0.7892 0.8100 0.8085 0.8534 0.8545|"
           "0.7902 0.7975 0.8015 0.8165 0.8582 0.8499|0.7837 0.7859 0.8063 0.8323 0.8628 0.8526|"
           "0.7976 0.7976 0.8067 0.8191 0.8622 0.8507|0.7956 0.7969 0.8075 0.8246 0.8612 0.8552|"
           "0.8028 0.8021 0.8073 0.8375 0.8720 0.8627|0.7964 0.7978 0.8241 0.8358 0.8702 0.8556|"
           "0.8046 0.8063 0.8085 0.8413 0.8782 0.8759|0.7842 0.8100 0.8151 0.8386 0.8744 0.8615|"
           "0.8182 0.8173 0.8435 0.8486 0.8837 0.8858|0.7745 0.7899 0.7890 0.8193 0.8719 0.8178|"
           "0.8729 0.8691 0.9056 0.8738 0.9010 0.9315|0.8602 0.8692 0.8888 0.8869 0.9138 0.8858|1 1 1 1 1 1|"
           "1 1 1 1 1 1")
# Table 8 as printed has six value columns under seven n headings; which n is missing is not clear, so
# the values are kept by position and shown for n = 1, 2, 4, 8, 16, 32 with that caveat in the docs.
T8_NS = [1, 2, 4, 8, 16, 32]
T10 = ("0.8073 0.7604 0.7409 0.7470 0.7761 0.8244 0.8882|0.8116 0.7705 0.7449 0.7517 0.7776 0.8256 0.8865|"
       "0.8274 0.7869 0.7564 0.7536 0.7804 0.8216 0.8913|0.8656 0.8159 0.7675 0.7554 0.7706 0.8119 0.8612|"
       "0.8988 0.8488 0.7908 0.7664 0.7711 0.8115 0.8528|0.8952 0.8801 0.8226 0.7834 0.7570 0.7325 0.8011|"
       "0.9537 0.9070 0.8538 0.8057 0.7731 0.7666 0.7876|0.9545 0.9469 0.8967 0.8503 0.7747 0.8200 0.6785|"
       "1.0000 0.9540 0.9367 0.8755 0.8052 0.7735 0.7692|0.0000 1.0000 0.9583 0.9416 0.8975 0.9090 0.8888|"
       "0.0000 0.0000 1.0000 1.0000 0.8148 0.7500 0.8000")
T11 = ("0.9955 0.9848 0.9705 0.9577 0.9769 0.9480 0.9700|0.9918 0.9784 0.9675 0.9493 0.9641 0.8918 0.8034|"
       "0.9957 0.9818 0.9721 0.9649 0.9795 1 1|0.9939 0.9818 0.9719 0.9642 0.9807 1 1|"
       "0.9872 0.9884 0.9785 0.9683 0.9813 1 1|0.9787 0.9912 0.9782 0.9610 0.9754 1 1|"
       "1 0.9931 0.9814 0.9739 0.9682 1 1|1 1 0.9821 0.9733 0.9090 1 1|1 1 0.9850 0.9814 1 1 1|"
       "1 1 1 1 1 1 1|0 0 1 1 1 1 1")
T9_START = {1: 0.9740, 2: 0.9810, 4: 0.9900, 8: 0.9910, 16: 0.9994, 32: 1.0, 64: 1.0}  # position 0 only


def _grid(text: str) -> list[list[float]]:
    return [[float(x) for x in row.split()] for row in text.split("|")]


def _pub_t8(n: int, pos: int) -> float | None:
    rows = _grid(T8_ROWS)
    return rows[pos][T8_NS.index(n)] if n in T8_NS and pos < len(rows) else None


def _pub_by_distance(text: str, n: int, diff: int) -> float | None:
    rows = _grid(text)
    if n not in NS or diff >= len(rows):
        return None
    value = rows[diff][NS.index(n)]
    return None if value == 0 and diff >= 9 else value  # 0.0000 there means "no such decision" in the study


def _pub_matrix(matrix: list[list[int]], n1: int, n2: int) -> float | None:
    return matrix[NS.index(n2)][NS.index(n1)] / G if n1 in NS and n2 in NS else None


def _pub_list(values: list[int], n: int) -> float | None:
    return values[NS.index(n)] / G if n in NS else None


def _pub_t7(n: int, m: int) -> float | None:
    if n not in T7 or m not in LANES:
        return None
    return (T7[n][LANES.index(m)] if m <= 6 else G) / G


# ----- optimal moves (Tables 8-11) -----------------------------------------------------------------------------
def optimal_moves(remaining: int, rule: str) -> tuple[int, ...]:
    """The optimal actions from ``remaining`` squares to go: ``study`` counts the 2-step as the optimal
    move (the 1-step only when 2 would overshoot); ``distance`` accepts every move that keeps the number
    of moves still needed minimal (both moves when ``remaining`` is odd)."""
    if remaining <= 1:
        return (1,)
    if rule == "distance" and remaining % 2 == 1:
        return (1, 2)
    return (2,)


def decision_task(length: int, overshoot: str, n: int, level: int, tie: str, rule: str, max_diff: int,
                  n_games: int, seed: int) -> list[int]:
    """Self-play of MC(n) (level 1) or HMC(n) (level 2+) on ``doublestep(length)``; counts every decision
    of both players. Returns [decisions by position (length), optimal by position (length), decisions by
    distance (max_diff + 1), optimal by distance (max_diff + 1)]."""
    game = games.load(f"doublestep(length={length},overshoot={overshoot})")
    by_pos, ok_pos = [0] * length, [0] * length
    by_diff, ok_diff = [0] * (max_diff + 1), [0] * (max_diff + 1)
    search = MCSearch(game.new_initial_state(), level)
    for g in range(n_games):
        state = game.new_initial_state()
        move = 0
        while not state.is_terminal():
            p = state.current_player()
            pos = state.observation()["positions"]
            action = search.search(state, n, TIE_CODES[tie], derive_seed(seed, g, move))
            good = action in optimal_moves(length - pos[p], rule)
            by_pos[pos[p]] += 1
            ok_pos[pos[p]] += good
            diff = abs(pos[0] - pos[1])
            if diff <= max_diff:
                by_diff[diff] += 1
                ok_diff[diff] += good
            state.apply_action(action)
            move += 1
    return by_pos + ok_pos + by_diff + ok_diff


# ----- the experiment --------------------------------------------------------------------------------------------
def run(cfg: dict[str, Any], runner: Runner) -> list[Table]:
    tie, ns, seed = cfg["tie_break"], cfg["n"], cfg["seed"]
    games, hmc_games = cfg["games"], cfg["hmc_games"] or max(1, cfg["games"] // 20)
    spec = f"doublestep(length={cfg['length']},overshoot={cfg['overshoot']})"
    hmc = "hmc(n={n},level=" + str(cfg["level"]) + f",tie_break={tie})"
    mc = "mc(n={n}" + f",tie_break={tie})"
    wanted = set(cfg["tables"])
    tables: list[Table] = []
    cells: list[tuple[Any, tuple]]
    cols = ["games", "wins", "rate", "lo", "hi", "published"]

    def share(counts: list, seat: int = 0) -> float:
        return counts[seat] + counts[-1] / 2

    if 2 in wanted:
        res = run_cells(runner, mc_games, [(("t2", n), (spec, [n, 0], [tie, tie])) for n in ns], games, 1000, seed)
        t = Table("table2", f"Table 2: MC(n) vs random ({spec}, tie_break={tie}): Player 1 (MC) wins",
                  ["n"] + cols, plot={"x": "n", "y": "rate", "series": None, "kind": "line"})
        for n in ns:
            t.add(share(res[("t2", n)]), games, _pub_list(T2, n), n=n)
        tables.append(t)
    if 3 in wanted:
        cells = [(("t3", a, b), (spec, [a, b], [tie, tie])) for b in ns for a in ns]
        res = run_cells(runner, mc_games, cells, games, 1000, seed)
        t = Table("table3", f"Table 3: MC(n1) (Player 1) vs MC(n2): Player 1 wins ({spec}, tie_break={tie})",
                  ["n1", "n2"] + cols, plot={"x": "n1", "y": "rate", "series": "n2", "kind": "line"})
        for b in ns:
            for a in ns:
                t.add(share(res[("t3", a, b)]), games, _pub_matrix(T3, a, b), n1=a, n2=b)
        tables.append(t)
    max_moves = 10_000  # pass rule: a random player at distance 1 may pass; the referee caps the game
    if 4 in wanted:
        res = run_cells(runner, bot_games, [(("t4", n), (spec, [hmc.format(n=n), "random"], max_moves))
                                            for n in ns], hmc_games, 10, seed)
        t = Table("table4", f"Table 4: HMC(n) vs random: Player 1 (HMC, level {cfg['level']}) wins",
                  ["n"] + cols, plot={"x": "n", "y": "rate", "series": None, "kind": "line"})
        for n in ns:
            t.add(share(res[("t4", n)]), hmc_games, _pub_list(T4, n), n=n)
        tables.append(t)
    for number, matrix, opp in ((5, T5, mc), (6, T6, hmc)):
        if number not in wanted:
            continue
        pairs = [(a, b) for b in ns for a in ns] if cfg["full_matrix"] else [(a, a) for a in ns]
        cells = [((f"t{number}", a, b), (spec, [hmc.format(n=a), opp.format(n=b)], max_moves)) for a, b in pairs]
        res = run_cells(runner, bot_games, cells, hmc_games, 10, seed)
        what = "MC" if number == 5 else "HMC"
        t = Table(f"table{number}", f"Table {number}: HMC(n1) (Player 1) vs {what}(n2): Player 1 wins"
                  + ("" if cfg["full_matrix"] else " (diagonal; --set full_matrix=true for all cells)"),
                  ["n1", "n2"] + cols, plot={"x": "n1", "y": "rate", "series": "n2", "kind": "line"})
        for a, b in pairs:
            t.add(share(res[(f"t{number}", a, b)]), hmc_games, _pub_matrix(matrix, a, b), n1=a, n2=b)
        tables.append(t)
    if 7 in wanted:
        cells = [(("t7", n, m), (f"doublestep(length0=6,length1={m},overshoot={cfg['overshoot']})",
                                 [hmc.format(n=n), hmc.format(n=n)], max_moves)) for n in ns for m in LANES]
        res = run_cells(runner, bot_games, cells, hmc_games, 10, seed)
        t = Table("table7", "Table 7: HMC(n) on lane 6 vs HMC(n) on lane m: Player 1 wins",
                  ["n", "lanes"] + cols, plot={"x": "lanes", "y": "rate", "series": "n", "kind": "line"})
        for n in ns:
            for m in LANES:
                t.add(share(res[("t7", n, m)]), hmc_games, _pub_t7(n, m), n=n, lanes=f"6v{m}")
        tables.append(t)
    tables += _decision_tables(cfg, runner, wanted)
    return tables


def _decision_tables(cfg: dict[str, Any], runner: Runner, wanted: set[int]) -> list[Table]:
    length, rule, max_diff = cfg["board"], cfg["optimal"], 10
    out: list[Table] = []
    for level, (pos_no, diff_no) in ((1, (8, 10)), (cfg["level"], (9, 11))):
        if pos_no not in wanted and diff_no not in wanted:
            continue
        n_games = cfg["decision_games"] if level == 1 else cfg["hmc_decision_games"]
        name = "MC" if level == 1 else "HMC"
        cells = [((f"d{level}", n), (length, cfg["overshoot"], n, level, cfg["tie_break"], rule, max_diff))
                 for n in cfg["n"]]
        res = run_cells(runner, decision_task, cells, n_games, 20 if level == 1 else 2, cfg["seed"])
        cols = ["n", "games", "wins", "rate", "lo", "hi", "published"]
        if pos_no in wanted:
            t = Table(f"table{pos_no}", f"Table {pos_no}: P(optimal move) by position, {name}(n) self-play, board "
                      f"{length}, optimal={rule} ({n_games} games per n; 'games' = decisions)",
                      ["position"] + cols, plot={"x": "position", "y": "rate", "series": "n", "kind": "line"})
            for n in cfg["n"]:
                c = res[(f"d{level}", n)]
                for pos in range(length):
                    if c[pos]:
                        pub = (_pub_t8(n, pos) if level == 1 else (T9_START.get(n) if pos == 0 else None)) \
                            if length == 50 else None
                        t.add(c[length + pos], c[pos], pub, position=pos, n=n)
            out.append(t)
        if diff_no in wanted:
            t = Table(f"table{diff_no}", f"Table {diff_no}: P(optimal move) by distance between the players, "
                      f"{name}(n) self-play, board {length}, optimal={rule}",
                      ["distance"] + cols, plot={"x": "distance", "y": "rate", "series": "n", "kind": "line"})
            for n in cfg["n"]:
                c = res[(f"d{level}", n)]
                base = 2 * length
                for d in range(max_diff + 1):
                    if c[base + d]:
                        pub = _pub_by_distance(T10 if level == 1 else T11, n, d) if length == 50 else None
                        t.add(c[base + max_diff + 1 + d], c[base + d], pub, distance=d, n=n)
            out.append(t)
    return out


PARAMS = {
    **common_params(2000),
    "hmc_games": Param(int, 0, "games per cell of the HMC tables 4-7 (0: games/20)", min=0),
    "decision_games": Param(int, 200, "self-play games per n for Tables 8 and 10 (board 50)", min=1),
    "hmc_decision_games": Param(int, 10, "self-play games per n for Tables 9 and 11", min=1),
    "tables": list_param([2, 3, 4, 5, 6, 7, 8, 9, 10, 11], "which of the study's tables to run"),
    "n": list_param(NS, "the n values (rows/columns)"),
    "level": Param(int, 2, "HMC nesting depth (2: the study's HMC)", min=2, max=4),
    "length": Param(int, 10, "board length for Tables 2-6", min=2, max=1000),
    "board": Param(int, 50, "board length for Tables 8-11", min=2, max=1000),
    "tie_break": Param(str, "last", "equal playout scores (the study does not say; last = the 2-step)",
                       choices=TIE_PARAM_CHOICES),
    "overshoot": Param(str, "pass", "a 2-step from 1 square away: pass (Rafiq) or forbid (Althöfer)",
                       choices=("pass", "forbid")),
    "optimal": Param(str, "study", "what counts as optimal: study (the 2-step unless it overshoots) or distance "
                     "(any move keeping the moves-to-go minimal)", choices=("study", "distance")),
    "full_matrix": Param(bool, False, "Tables 5-6: every (n1, n2) cell instead of the diagonal"),
}

EXPERIMENT = Experiment(
    name="doublestep-mc",
    title="Rafiq's MC and HMC tables on Double Step (Tables 2-11)",
    study="doublestep-hmc-rafiq-2013.txt, Tables 2-11",
    params=PARAMS,
    run=run,
    note="Defaults fit a few minutes on 2 cores: 2,000 games per MC cell, games/20 per HMC cell, Tables 5-6 "
         "on the diagonal, 200/10 self-play games for the decision tables. The study: --games 10000 "
         "--set hmc_games=10000 --set full_matrix=true (hours for the HMC tables).",
)
