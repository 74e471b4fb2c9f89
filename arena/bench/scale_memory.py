"""Peak memory of the built-in search bots over whole games at a real move time.

Each measurement runs in a fresh Python process (``python -m arena.bench.scale_memory --child ...``) that
holds the bot under test in seat 0, random bots in the other seats and the game, plays one whole game
with ``Limit(time=move_time, memory_mb=memory_mb)`` for the bot, and reports its own peak RSS
(``getrusage``: the kernel's high-water mark, nothing is missed between samples) and the largest tree
the bot held. The same process with a random bot in seat 0 is the baseline: the interpreter, numpy,
the game and the opponents. ``(peak - baseline) / nodes`` is the measured bytes per tree node.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
from typing import Any

import bots
import games
from arena.referee.loop import play
from bots.base import Limit
from bots.registry import bot_class, parse_bot_spec

GAMES = ("colosseum(size=12)", "hex(size=11)", "sorry(players=4)")
SEARCH_BOTS = ("uct(c=annealed)", "uct(expand=one,c=0.3)", "mcts_reuse(c=annealed)", "mcts_reuse(expand=one,c=0.3)",
               "determinized", "mc(n=0)", "hmc")
"""The study preset (uct's defaults until 2026-11-26; the defaults are now expand=one, c=0.3), plus the
configurations that grow the biggest trees (expand=one iterates ~100x more often than
expand=all with 11 playouts per leaf and reaches the node cap on big boards) and mc on the clock (its default
is a fixed 100 playouts per action)."""


def _child(bot_spec: str, game_spec: str, move_time: float, memory_mb: int, seed: int) -> dict[str, Any]:

    game = games.load(game_spec)
    if "seed" in game.params:
        game = game.with_params(seed=seed)
    players = [bots.make(bot_spec, game, 0, seed)] + [bots.make("random", game, s, seed + s)
                                                      for s in range(1, game.num_players())]
    most = {"nodes": 0, "moves": 0}

    def observe(state: Any, seat: int, action: int) -> None:
        if seat == 0:
            most["moves"] += 1
            most["nodes"] = max(most["nodes"], int(getattr(players[0], "last_search", {}).get("nodes", 0) or 0))

    def limit(seat: int, decision: int) -> Limit:
        return Limit(time=move_time, memory_mb=memory_mb) if seat == 0 else Limit(time=None)

    record = play(game, players, seed, limit=limit, observer=observe)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    node_bytes = getattr(getattr(players[0], "search", None), "node_bytes", None)
    return {"bot": bot_spec, "game": game_spec, "move_time": move_time, "peak_rss": peak_kib * 1024,
            "nodes": most["nodes"], "moves": most["moves"], "node_bytes": node_bytes,
            "returns": list(record.returns), "decisions": len(record.move_seats)}


def measure(bot_spec: str, game_spec: str, move_time: float, *, memory_mb: int = 500, seed: int = 1,
            timeout: float | None = None) -> dict[str, Any]:
    """One whole game in a fresh process; the child's report (see the module docstring)."""
    out = subprocess.run([sys.executable, "-m", "arena.bench.scale_memory", "--child", bot_spec, game_spec,
                          str(move_time), str(memory_mb), str(seed)], capture_output=True, text=True, check=False,
                         timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{bot_spec} on {game_spec}: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def supported(bot_spec: str, game_spec: str) -> str | None:
    """None when the bot can play the game, else why not."""
    name, params = parse_bot_spec(bot_spec)
    supports = getattr(bot_class(name)[0], "supports", None)
    return supports(games.load(game_spec), params) if supports else None


def bot_memory(move_time: float, bots: tuple[str, ...] = SEARCH_BOTS, games: tuple[str, ...] = GAMES,
               echo: Any = None) -> list[dict[str, Any]]:
    """Every (bot, game) measurement plus a random-bot baseline per game (``bot == "random"``)."""
    rows = []
    for game in games:
        rows.append(measure("random", game, move_time))
        for bot in bots:
            problem = supported(bot, game)
            if problem:
                rows.append({"bot": bot, "game": game, "skipped": problem})
                continue
            rows.append(measure(bot, game, move_time))
            if echo:
                echo(json.dumps(rows[-1]))
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        bot, game, move_time, memory_mb, seed = sys.argv[2:7]
        print(json.dumps(_child(bot, game, float(move_time), int(memory_mb), int(seed))))
    else:  # manual: python -m arena.bench.scale_memory MOVE_TIME > rows.json
        result = bot_memory(float(sys.argv[1]), echo=lambda line: print(line, file=sys.stderr, flush=True))
        print(json.dumps(result))
