"""``arena bench bots``, the UCT part: speed and strength against OpenSpiel's C++ ``MCTSBot``.

Records (all measured side by side in the same run):

1. UCT simulations per second on Hex 7x7 and 11x11 from the empty board, ``uct(expand=one,c=1.4)``
   (one node and one random rollout per simulation) against ``pyspiel.MCTSBot`` with ``uct_c=1.4``
   and a ``RandomRolloutEvaluator(1, seed)``, the same number of simulations; target 8x.
2. Strength at equal time: ``uct(expand=one,c=0.3)`` (uct's defaults) and, for reference,
   ``uct(c=annealed)`` (the Colosseum study's settings) against the same ``MCTSBot`` on Hex 7x7 with 0.1 s per move
   (OpenSpiel's
   ``max_wall_clock_time``), both seats; target 85% wins.
3. The time of one ``determinized(d=25,s=100)`` move in 4-player Sorry!.
4. The slowest move of each search bot under a 2 s limit (it must stay below 2 s).
5. uct against flat mc on Hex 7x7 at equal time per move (0.1 s, no margins), both seats.
"""
from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Iterator
from typing import Any

import bots
import games
from arena.bench import Record, cost, interleaved, rate
from arena.referee.loop import play
from bots.base import Limit

SUITE = "bots"
OPENSPIEL = "OpenSpiel C++ MCTSBot"


def _openspiel_bot(game: Any, simulations: int, seed: int, seconds: float = -1.0) -> Any:
    import pyspiel  # optional: open_spiel
    return pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, seed), 1.4, simulations, 1000, False, seed,
                           False, pyspiel.ChildSelectionPolicy.UCT, seconds)


def simulation_rates(size: int, simulations: int, repeats: int) -> tuple[float, float]:
    """(ours, OpenSpiel's) simulations per second for one search from the empty Hex board."""
    import pyspiel  # optional: open_spiel

    game = games.load(f"hex(size={size})")
    ogame = pyspiel.load_game(f"hex(board_size={size})")
    ours = bots.make(f"uct(iterations={simulations},expand=one,c=1.4)", game, 0, 1)
    theirs = _openspiel_bot(ogame, simulations, 1)
    root, oroot = game.new_initial_state(), ogame.new_initial_state()
    times = interleaved({"ours": lambda: ours.step(root.clone(), Limit()),
                         "openspiel": lambda: theirs.step(oroot)}, repeats=repeats)
    return simulations / times["ours"], simulations / times["openspiel"]


def play_openspiel(size: int, seconds: float, uct_seat: int, seed: int, spec: str = "uct") -> tuple[float, float]:
    """One Hex game of ``spec`` against OpenSpiel's MCTSBot at ``seconds`` per move.

    Returns (uct's return, the slowest uct move in seconds). Both engines get every move, and their
    results are checked against each other at the end.
    """
    import pyspiel  # optional: open_spiel

    game = games.load(f"hex(size={size})")
    ogame = pyspiel.load_game(f"hex(board_size={size})")
    ours = bots.make(spec, game, uct_seat, seed)
    theirs = _openspiel_bot(ogame, 10**9, seed, seconds)
    state, ostate = game.new_initial_state(), ogame.new_initial_state()
    slowest = 0.0
    while not state.is_terminal():
        if state.current_player() == uct_seat:
            t0 = time.perf_counter()
            action = ours.step(state.clone(), Limit(time=seconds))
            slowest = max(slowest, time.perf_counter() - t0)
        else:
            action = theirs.step(ostate)
        state.apply_action(action)
        ostate.apply_action(action)
    if not ostate.is_terminal() or list(ostate.returns()) != state.returns():
        raise AssertionError("our Hex and OpenSpiel's disagree about the end of a game")
    return state.returns()[uct_seat], slowest


def strength(games_per_seat: int, seconds: float = 0.1, spec: str = "uct") -> tuple[float, int, float]:
    """``spec``'s win rate against OpenSpiel's MCTSBot on Hex 7x7 (both seats), the game count, the slowest move."""
    wins, total, slowest = 0, 0, 0.0
    for i in range(games_per_seat):
        for seat in (0, 1):
            result, slow = play_openspiel(7, seconds, seat, seed=1000 + i, spec=spec)
            wins += result > 0
            total += 1
            slowest = max(slowest, slow)
    return wins / total, total, slowest


def versus_mc(spec: str, n_games: int, seconds: float = 0.1) -> float:
    """``spec``'s win rate against ``mc(n=0)`` on Hex 7x7 at ``seconds`` per move, seats alternated."""
    game = games.load("hex(size=7)")
    wins = 0
    for i in range(n_games):
        seat = i % 2
        seats = [bots.make("mc(n=0,margin=0)", game, s, 500 + i) for s in range(2)]
        seats[seat] = bots.make(spec, game, seat, i)
        wins += play(game, seats, seed=i, limit=Limit(time=seconds)).returns[seat] > 0
    return wins / n_games


def determinized_move_time(positions: int, seed: int = 7) -> float:
    """Median seconds of one determinized(d=25,s=100) move over positions of a random 4-player Sorry! game."""
    game = games.load("sorry(players=4)")
    rng = random.Random(seed)
    state = game.new_initial_state()
    samples: list[Any] = []
    stride = 0
    while not state.is_terminal() and len(samples) < positions:
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0])
            continue
        if stride % 8 == 0:
            samples.append(state.clone())
        stride += 1
        state.apply_action(rng.choice(state.legal_actions()))
    times = []
    for s in samples:
        bot = bots.make("determinized(d=25,s=100)", game, s.current_player(), seed)
        t0 = time.perf_counter()
        bot.step(s.clone(), Limit())
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def slowest_move(spec: str, game_spec: str, moves: int, seconds: float = 2.0, seed: int = 3) -> float:
    """The slowest of ``moves`` time-limited moves of ``spec`` playing against random (wall clock of step)."""
    game = games.load(game_spec)
    rng = random.Random(seed)
    state = game.new_initial_state()
    ours = bots.make(spec, game, 0, seed)
    slowest, made = 0.0, 0
    while made < moves:
        if state.is_terminal():
            state, ours = game.new_initial_state(), bots.make(spec, game, 0, seed + made)
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0])
        elif state.current_player() == 0:
            t0 = time.perf_counter()
            state.apply_action(ours.step(state.clone(), Limit(time=seconds)))
            slowest = max(slowest, time.perf_counter() - t0)
            made += 1
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return slowest


def run(quick: bool = False) -> Iterator[Record]:
    try:
        # optional: open_spiel
        import pyspiel  # noqa: F401
    except ImportError:
        print("bench bots (uct): open_spiel is not installed; skipping the OpenSpiel comparisons")
    else:
        sims, repeats = (5000, 3) if quick else (20000, 7)
        for size in (7, 11):
            ours, theirs = simulation_rates(size, sims, repeats)
            yield rate(SUITE, f"uct simulations hex(size={size}), empty board", ours, "simulations/s", OPENSPIEL,
                       theirs, target=8.0, note=f"uct(expand=one,c=1.4) vs MCTSBot(uct_c=1.4, 1 random rollout), "
                                               f"{sims} simulations, median of {repeats} interleaved runs")
        for spec, per_seat, target in (("uct(expand=one,c=0.3)", 10 if quick else 100, 85 / 50),
                                       ("uct(c=annealed)", 5 if quick else 30, None)):
            win_rate, n, slowest = strength(per_seat, spec=spec)
            half = 1.96 * math.sqrt(max(win_rate * (1 - win_rate), 0.25 / n) / n)
            yield rate(SUITE, f"{spec} vs MCTSBot, hex(size=7), 0.1 s/move", 100 * win_rate, "% wins",
                       "even match", 50.0, target=target,
                       note=f"{n} games, both seats, 95% interval +-{100 * half:.0f} points; slowest move "
                            f"{slowest:.3f} s" + ("; ratio 1.7 = 85% wins" if target else "; the study's defaults"))
    n = 6 if quick else 40
    for spec in ("uct(c=annealed,margin=0)", "uct(expand=one,c=0.3,margin=0)"):
        win_rate = versus_mc(spec, n)
        yield rate(SUITE, f"{spec} vs mc(n=0,margin=0), hex(size=7), 0.1 s/move", 100 * win_rate, "% wins",
                   "even match", 50.0, note=f"{n} games, seats alternated, equal wall clock per move")
    moves = 2 if quick else 10
    for spec, game_spec in (("uct", "hex(size=11)"), ("mcts_reuse", "hex(size=11)"), ("uct", "sorry(players=4)"),
                            ("determinized(s=1000000)", "sorry(players=4)")):
        worst = slowest_move(spec, game_spec, moves)
        yield cost(SUITE, f"slowest {spec} move under a 2 s limit, {game_spec}", worst, "s", "the 2 s limit", 2.0,
                   target=1.0, note=f"{moves} moves against random; the bot stops at limit - min(margin, limit/10)")
    t = determinized_move_time(3 if quick else 9)
    yield cost(SUITE, "determinized(d=25,s=100) move, sorry(players=4)", t, "s", "2 s move limit (the studies')",
               2.0, note=f"median over {3 if quick else 9} positions of a random game")
