"""A deterministic results store for the dashboard tests, written through the store's public API.

Games are seeded random play-outs of the real engines (so replays are legal), with fixed wall times and
durations (no clocks reach the screen), and one timeout with a stderr excerpt for the failure views.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import games
from arena.limits import Limits
from leaderboards import ledger
from leaderboards.store import Store
from tests.leaderboards.support import store_game

BOTS = [("random", "random", None), ("greedy", "greedy", None), ("uct", "uct(iterations=100)", None),
        ("mybot", None, "class Bot:\n    def __init__(self, game, seat, seed):\n        pass\n")]
GAMES = ["nim", "doublestep"]
STRENGTH = {"random": 0, "greedy": 1, "uct": 3, "mybot": 2}
TRACEBACK = ("Traceback (most recent call last):\n  File \"mybot.py\", line 12, in step\n"
             "    time.sleep(10)\nTimeoutError: move took longer than 2.0 s\n")


def play_record(spec: str, seed: int, players: list[str], winner_first: bool) -> dict[str, Any]:
    """A legal game of ``spec``: random moves by a seeded RNG, retried until seat 0 wins iff
    ``winner_first`` (so ratings follow STRENGTH and the tables are predictable)."""
    rng = random.Random(seed)
    for attempt in range(200):
        game = games.load(f"{spec}(seed={seed + attempt})" if spec == "nim" else spec)
        state = game.new_initial_state()
        move_seats: list[int] = []
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                continue
            move_seats.append(state.current_player())
            state.apply_action(rng.choice(state.legal_actions()))
        if (state.returns()[0] > 0) == winner_first:
            break
    wall = [0.001 * (1 + STRENGTH.get(players[s], 0) * 10) * (1 + (i % 5) / 4) for i, s in enumerate(move_seats)]
    return {"game": str(game), "seed": seed, "players": players, "history": state.history(),
            "returns": state.returns(), "terminations": ["normal"] * len(players), "move_seats": move_seats,
            "wall_times": wall, "cpu_times": wall, "failures": [], "duration": round(sum(wall) + 0.01, 4),
            "info": {}}


def timeout_record(spec: str, seed: int, players: list[str], loser: int) -> dict[str, Any]:
    """``players[loser]`` times out on its second move."""
    record = play_record(spec, seed, players, winner_first=True)
    cut = next(i for i, s in enumerate(record["move_seats"]) if s == loser) + 2
    cut = min(cut, len(record["move_seats"]) - 1)
    record["history"] = record["history"][:cut]  # nim without coin / doublestep: one action per move
    record["move_seats"] = record["move_seats"][:cut]
    record["wall_times"] = record["wall_times"][:cut]
    record["cpu_times"] = record["cpu_times"][:cut]
    record["returns"] = [1.0, 1.0]
    record["returns"][loser] = -1.0
    record["terminations"] = ["normal", "normal"]
    record["terminations"][loser] = "timeout"
    record["failures"] = [{"seat": loser, "reason": "timeout", "move_number": cut, "detail": TRACEBACK,
                           "substituted": None}]
    return record


class Fixture:
    """A store with league ``demo`` (4 bots, 2 games) and league ``ladder`` (2 bots, nim)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.store = Store.open(path, create=True)
        self.next_round = 0
        self.demo = self.store.ensure_league("demo", {"games": GAMES, "limits": Limits().to_dict()})
        self.bots: dict[str, int] = {}
        for name, spec, source in BOTS:
            bot, _ = self.store.upsert_bot(self.demo.id, name, origin="config", spec=spec,
                                           filename=None if spec else "mybot.py", source=source)
            self.bots[name] = bot.id
        ladder = self.store.ensure_league("ladder", {"games": ["nim"], "limits": Limits().to_dict()})
        a, _ = self.store.upsert_bot(ladder.id, "alpha", origin="config", spec="random")
        b, _ = self.store.upsert_bot(ladder.id, "beta", origin="config", spec="greedy")
        for i in range(3):
            rec = play_record("nim", 100 + i, ["alpha", "beta"], winner_first=i % 2 == 0)
            store_game(self.store, ladder.id, f"{i:05d}", "nim", i, [a.id, b.id], rec)
        ledger.rate_pending(self.store, ladder.id)

    def add_round(self, pairs: list[tuple[str, str]] | None = None, *, with_timeout: bool = False) -> int:
        """Plays one round (every pair on every game, both seatings) into league demo; returns games added."""
        names = [n for n, _, _ in BOTS]
        pairs = pairs or [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
        added = 0
        r = self.next_round
        for spec in GAMES:
            for a, b in pairs:
                for first, second in ((a, b), (b, a)):
                    seed = 1000 * r + 10 * added
                    if with_timeout and first == "mybot" and added % 3 == 0:
                        rec = timeout_record(spec, seed, [first, second], loser=0)
                    else:
                        rec = play_record(spec, seed, [first, second], STRENGTH[first] >= STRENGTH[second])
                    key = f"{r:05d}-{spec}-{first}-{second}"
                    if store_game(self.store, self.demo.id, key, spec, r, [self.bots[first], self.bots[second]],
                                              rec) is not None:
                        added += 1
        self.next_round += 1
        ledger.rate_pending(self.store, self.demo.id)
        return added

    def close(self) -> None:
        self.store.close()  # sqlite3 allows closing twice


def build(path: Path, rounds: int = 2) -> Fixture:
    fx = Fixture(path)
    for r in range(rounds):
        fx.add_round(with_timeout=r == 1)
    return fx
