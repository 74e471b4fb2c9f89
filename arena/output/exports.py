"""A league's games as rows to export (``arena export games``): the columns, one row per game, CSV cells; a
tournament's matches and places (``arena export matches``, ``arena export placings``).

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
from arena.output.brackets import Tournament, match_names
from arena.output.views import GameEntry, GameFailure, game_entry, move_ms
from arena.results.moves import failure_where
from arena.results.records import headline
from arena.text import csv_cell
from leaderboards.store import Store

CSV_FIELDS = ("id", "finished", "game", "round", "seed", "result", "failures", "moves", "actions", "move_ms_p50",
              "move_ms_p90", "move_ms_p99", "move_ms_max", "duration_s")
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
        "returns": g.returns, "terminations": g.terminations, "result": g.result,
        "failures": [asdict(f) for f in g.failures],
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
    listed = [GameFailure(**f) for f in row["failures"]]  # (the row is game_row's: GameFailure's fields)
    fails = "; ".join(f"seat {f.seat} {failure_where(f)}" + (f": {last_line(f.detail)}" if last_line(f.detail) else "")
                      for f in listed)
    flat = {**{k: row[k] for k in ("id", "finished", "game", "round", "seed", "result", "moves", "actions",
                                   "duration_s")},
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


# -- a tournament (arena.output.brackets.Tournament) -------------------------------------------------------------
MATCH_FIELDS = ("round", "label", "match", "bot_1", "bot_2", "score_1", "score_2", "winner", "status", "note",
                "games", "bot_1_id", "bot_2_id", "winner_id")
"""Columns of ``arena export matches --csv``: ``round`` is its games' round (``arena export games``' ``round``),
``label`` where it is (``R3``, ``W2``, ``L3``, ``GF``, ``GF2``), ``match`` its name in the drawn bracket
(``W2-1``); ``bot_2`` is empty for a bye; ``status`` one of ``bye``, ``done``, ``playing``, ``to be played``;
``games`` the ids of its games, space-separated (``arena replay ID``)."""
PLACING_FIELDS = ("place", "bot", "bot_id")
SWISS_FIELDS = ("points", "buchholz", "sonneborn_berger", "byes")
"""A Swiss tournament's placings add these (its standings' tie-breaks)."""


def match_rows(t: Tournament) -> Iterator[dict[str, Any]]:
    """Every match of the tournament known so far (a bracket's matches whose entrants are not known yet are not
    listed), round by round."""
    if t.state is None:
        return
    names = match_names(t.state)
    for matches in t.state.rounds:
        for m in matches:
            a, b = m.bots if m.bots[0] is not None else (m.bots[1], None)  # (a bye: its bot first)
            status = "bye" if m.is_bye else "done" if m.done else "playing" if m.games else "to be played"
            yield {"round": m.round, "label": m.label, "match": names.get(id(m), m.label),
                   "bot_1": t.labels.get(a, str(a)) if a is not None else None,
                   "bot_2": t.labels.get(b, str(b)) if b is not None else None,
                   "score_1": None if m.is_bye else m.score[0], "score_2": None if m.is_bye else m.score[1],
                   "winner": t.labels.get(m.winner, str(m.winner)) if m.done and m.winner is not None else None,
                   "status": status, "note": m.note, "games": [g.game_id for g in m.games],
                   "bot_1_id": a, "bot_2_id": b, "winner_id": m.winner if m.done else None}


def placing_rows(t: Tournament) -> list[dict[str, Any]]:
    """The places (empty until the tournament is finished; bots sharing one share its number), with a Swiss
    tournament's points and tie-breaks."""
    standing = {row.bot_id: row for row in t.standings}
    out = []
    for p in t.placings:
        for name, bot_id in zip(p.bots, p.bot_ids):
            row: dict[str, Any] = {"place": p.place, "bot": name, "bot_id": bot_id}
            if t.format == "swiss" and bot_id in standing:
                s = standing[bot_id]
                row.update(points=s.points, buchholz=s.buchholz, sonneborn_berger=s.sonneborn_berger, byes=s.byes)
            out.append(row)
    return out


def tournament_csv_row(row: dict[str, Any]) -> dict[str, Any]:
    """A match or placing row as a CSV line: games space-separated, None empty, text made safe."""
    flat = {k: (" ".join(str(g) for g in v) if isinstance(v, list) else "" if v is None else v)
            for k, v in row.items()}
    return {k: csv_cell(v) for k, v in flat.items()}
