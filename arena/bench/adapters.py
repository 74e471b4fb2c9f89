"""What the adapters of issue 16 cost per move beside arena's native path, measured in one run:
``python -m arena.bench.adapters [--quick]``.

1. The State API driven move by move from Python (legal_actions + apply_action, random moves, 7x7 Hex):
   arena's compiled state; an ``openspiel:hex`` state through arena's wrapper (:mod:`games.openspiel`); pyspiel's
   own hex driven directly (the wrapper's floor); ``arena_hex`` inside OpenSpiel (:mod:`arena.adapters.openspiel`).
2. What a bot is handed per move: a native bot's ``state.clone()``; a COMP424 agent's translation (``chess_board``,
   positions, the answer back to an action) on 12x12 Colosseum; an OpenSpiel bot's twin rebuilt from the history
   on 7x7 Hex after 20 moves.
3. Sandboxed: the median referee-measured wall time of seat 0's moves (its first move, start-up, excluded) against
   ``random``: arena's ``random`` on hex vs on ``openspiel:hex``, and on Colosseum vs a COMP424 agent (the course
   style random walk of tests/fixtures/comp424, which does about what ``random`` does).
"""
from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import games
from bots.openspiel_bots import OpenSpielRandomBot

HERE = Path(__file__).resolve()


def _per_move(make_state: Callable[[], Any], games_n: int) -> float:
    """Microseconds per move of random games driven through legal_actions/apply_action."""
    rng = random.Random(1)
    moves = 0
    t0 = time.perf_counter()
    for _ in range(games_n):
        state = make_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            moves += 1
    return (time.perf_counter() - t0) / moves * 1e6


def _timed(fn: Callable[[], Any], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def state_api(quick: bool) -> list[tuple[str, float]]:
    import pyspiel  # optional: open_spiel

    from arena.adapters.openspiel import register
    register(("hex",))
    n = 30 if quick else 150
    native = games.load("hex(size=7)")
    wrapped = games.load("openspiel:hex(board_size=7)")
    raw = pyspiel.load_game("hex(board_size=7)")
    inside = pyspiel.load_game("arena_hex(size=7)")
    paths = {"arena compiled hex(size=7)": native.new_initial_state,
             "openspiel:hex(board_size=7) via arena's wrapper": wrapped.new_initial_state,
             "pyspiel hex driven directly": raw.new_initial_state,
             "arena_hex inside OpenSpiel (pyspiel.load_game)": inside.new_initial_state}
    results: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(3):  # in alternation: fair on a loaded machine
        for name, make in paths.items():
            results[name].append(_per_move(make, n))
    return [(name, statistics.median(v)) for name, v in results.items()]


def bot_views(quick: bool) -> list[tuple[str, float]]:
    from arena.adapters.comp424 import to_action  # start-up: the COMP 424 adapter only when used
    from games.colosseum.arrays import chess_board
    n = 2000 if quick else 10000
    col = games.load("colosseum(size=12,seed=1)").new_initial_state()
    rng = random.Random(2)
    for _ in range(6):
        col.apply_action(rng.choice(col.legal_actions()))

    def comp424() -> Any:
        board = chess_board(col)
        me, opp = (tuple(p) for p in col.positions())
        return to_action(((me[0], me[1]), int(board[me[0], me[1]].argmin())), col.size)

    hex_game = games.load("hex(size=7)")
    hx = hex_game.new_initial_state()
    for _ in range(20):
        hx.apply_action(rng.choice(hx.legal_actions()))
    twin_bot = OpenSpielRandomBot(hex_game, 0, 1)
    return [("native bot: state.clone() (colosseum 12x12)", _timed(col.clone, n)),
            ("COMP424 agent: chess_board + positions + answer -> action", _timed(comp424, n)),
            ("native bot: state.clone() (hex 7x7, 20 moves in)", _timed(hx.clone, n)),
            ("OpenSpiel bot on arena hex: twin rebuilt from history", _timed(lambda: twin_bot.position(hx), n))]


def sandboxed(quick: bool) -> list[tuple[str, float]]:
    from arena.adapters.comp424 import take_agent  # start-up: pydantic only when limits are built
    from arena.limits import Limits
    from arena.referee.sandboxed import play_game
    from arena.submissions.snapshot import Snapshot
    checkout = HERE.parents[2] / "tests" / "fixtures" / "comp424" / "checkout"
    limits = Limits(move_time=5.0, first_move_time=30.0)
    agent = take_agent(checkout, "random_agent")  # the course-style random walk: long games
    cases: dict[str, tuple[str, str | Snapshot]] = {"random (seat 0), hex(size=7)": ("hex(size=7)", "random"),
             "random (seat 0), openspiel:hex(board_size=7)": ("openspiel:hex(board_size=7)", "random"),
             "random (seat 0), colosseum(size=10)": ("colosseum(size=10)", "random"),
             "COMP424 random_agent (seat 0), colosseum(size=10)": ("colosseum(size=10)", agent)}
    out: dict[str, list[float]] = {k: [] for k in cases}
    for round_ in range(3 if quick else 8):
        for name, (game, bot) in cases.items():
            record = play_game(game, [bot, "random"], seed=round_ + 1, limits=limits)
            mine = [w for s, w in zip(record.move_seats, record.wall_times) if s == 0]
            out[name].extend(mine[1:])  # past the first move (start-up)
    return [(name, statistics.median(v) * 1e6) for name, v in out.items()]


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    # each row beside its native baseline: the section's first row, or the row before it for pairs
    for title, rows, paired in (("State API, per move (random moves from Python)", state_api(quick), False),
                                ("What a bot is handed, per move", bot_views(quick), True),
                                ("Sandboxed, referee-measured wall time per move (median)", sandboxed(quick), True)):
        print(title)
        for i, (name, us) in enumerate(rows):
            base = rows[i - i % 2][1] if paired else rows[0][1]
            print(f"  {name:<58} {us:10.1f} us  x{us / base:6.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
