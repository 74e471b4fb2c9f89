"""The adaptive schedule's decisions (arena/league/adaptive.py), one row per batch, bound onto
:class:`leaderboards.store.Store`. Their table (:data:`leaderboards.schema.DECISIONS_TABLE`) is made by the first
decision recorded: a store without it simply has none."""
from __future__ import annotations

import json
import time
from typing import Any

from leaderboards.schema import DECISIONS_TABLE, Connected, transaction


def record_decision(store: Connected, league_id: int, decision: dict[str, Any]) -> int:
    """Stores the next batch's decision (JSON) and returns its batch number (0, 1, ...)."""
    with transaction(store.conn):
        store.conn.execute(DECISIONS_TABLE)
        batch = store.conn.execute("SELECT coalesce(max(batch) + 1, 0) FROM schedule_decisions WHERE league_id=?",
                                   (league_id,)).fetchone()[0]
        store.conn.execute("INSERT INTO schedule_decisions (league_id, batch, decision, created) VALUES (?, ?, ?, ?)",
                           (league_id, batch, json.dumps(decision), time.time()))
    return int(batch)


def decisions(store: Connected, league_id: int) -> list[dict[str, Any]]:
    """The adaptive schedule's recorded decisions, oldest first (empty when none was recorded)."""
    if store.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='schedule_decisions'"
                          ).fetchone() is None:
        return []
    return [json.loads(r[0]) for r in store.conn.execute(
        "SELECT decision FROM schedule_decisions WHERE league_id=? ORDER BY batch", (league_id,))]
