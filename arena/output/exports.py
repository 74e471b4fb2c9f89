"""A league's games as rows to export (``arena export games``): the columns, one row per game, CSV cells.

Per game: id, time it finished (UTC), game, round, seed, players by seat, returns, terminations, failures with
their reasons, number of moves (bot decisions) and of actions (chance included), and move-time percentiles.
Names and failure details come from bots and users' files: CSV cells go through :func:`arena.text.csv_cell`,
JSON through :func:`arena.text.dumps` (docs/architecture.md, "Untrusted text").
"""
from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import games as games_pkg
from arena.output.views import GameEntry, game_entry, move_ms
from arena.results.moves import failure_where
from arena.results.records import headline
from arena.text import csv_cell
from leaderboards.store import Store

CSV_FIELDS = ("id", "finished", "game", "round", "seed", "failures", "moves", "actions", "move_ms_p50", "move_ms_p90",
              "move_ms_p99", "move_ms_max", "duration_s")
"""Columns of ``--csv``, then per seat N: ``player_N``, ``return_N``, ``termination_N`` (as many seats as the
league's largest game has; empty for a game with fewer)."""
SEAT_FIELDS = ("player", "return", "termination")


def iso(ts: float) -> str:
    """A stored time (seconds since the epoch) as ISO 8601 UTC."""
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).isoformat(timespec="seconds")


def game_row(g: GameEntry) -> dict[str, Any]:
    """One game of the game list (:class:`arena.output.views.GameEntry`) as exported (``--json``'s object; ``--csv``
    flattens it)."""
    return {
        "id": g.id, "finished": iso(g.finished), "game": g.game, "base_game": g.base_game, "round": g.round,
        "seed": g.seed, "schedule_key": g.schedule_key, "players": g.players, "bot_ids": g.bot_ids,
        "returns": g.returns, "terminations": g.terminations, "failures": [asdict(f) for f in g.failures],
        "moves": g.moves, "actions": g.actions, "move_ms": move_ms(g.wall_times), "duration_s": round(g.duration, 3),
    }


def csv_fields(seats: int) -> list[str]:
    return list(CSV_FIELDS[:5]) + [f"{f}_{s}" for s in range(seats) for f in SEAT_FIELDS] + list(CSV_FIELDS[5:])


def league_seats(config: dict[str, Any]) -> int:
    """The most seats of a game of the league (the stored config's games)."""
    most = 2
    for spec in config.get("games", []):
        try:
            most = max(most, games_pkg.load(spec).num_players())
        except Exception:  # noqa: BLE001 - a game this arena no longer has: its games still export
            continue
    return most


def csv_row(row: dict[str, Any]) -> dict[str, Any]:
    ms = row["move_ms"]
    fails = "; ".join(f"seat {f['seat']} {failure_where(f)}"
                      + (f": {last_line(f['detail'])}" if last_line(f["detail"]) else "") for f in row["failures"])
    flat = {**{k: row[k] for k in ("id", "finished", "game", "round", "seed", "moves", "actions", "duration_s")},
            "failures": fails,
            **{f"player_{s}": p for s, p in enumerate(row["players"])},
            **{f"return_{s}": r for s, r in enumerate(row["returns"])},
            **{f"termination_{s}": t for s, t in enumerate(row["terminations"])},
            **{f"move_ms_{k}": v for k, v in ms.items()}}
    return {k: csv_cell(v) for k, v in flat.items()}


def last_line(detail: str) -> str:
    """The line of a failure's detail that says what happened, and where (:func:`arena.results.records.headline`)."""
    return headline(detail)


def rows(store: Store, league_id: int) -> Iterator[dict[str, Any]]:
    for g in store.iter_games(league_id):
        yield game_row(game_entry(g))
