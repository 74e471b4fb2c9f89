"""Leaderboard rows and the head-to-head matrix, read from the store (shared by the CLI and the dashboard)."""
from __future__ import annotations

from typing import Any

from leaderboards.ratings import ALL, BotRating, leaderboard_order
from leaderboards.store import Store


def standings(store: Store, league_id: int, *, scope: str = ALL, include_retired: bool = False) -> list[dict[str, Any]]:
    """One row per bot, best first by mu - 3 sigma. Bots without a game yet get the prior rating."""
    bots = {b.id: b for b in store.bots(league_id, include_retired=include_retired)}
    stored = store.ratings(league_id, scope)
    ratings = {bot_id: stored.get(bot_id, BotRating()) for bot_id in bots}
    rows = []
    for rank, bot_id in enumerate(leaderboard_order(ratings), 1):
        bot, r = bots[bot_id], ratings[bot_id]
        rows.append({
            "rank": rank, "bot": bot.label, "bot_id": bot.id, "name": bot.name, "version": bot.version,
            "kind": bot.kind, "origin": bot.origin, "spec": bot.spec if bot.kind == "builtin" else bot.filename,
            "status": bot.status, "status_reason": bot.status_reason, "plays": bot.games,
            "mu": r.mu, "sigma": r.sigma, "exposed": r.exposed, "games": r.games, "wins": r.wins, "draws": r.draws,
            "losses": r.losses, "timeouts": r.timeouts, "crashes": r.crashes, "illegal": r.illegal,
            "memory": r.memory, "protocol": r.protocol, "failures": r.failures,
        })
    return rows


def head_to_head(store: Store, league_id: int, rows: list[dict[str, Any]], *, scope: str = ALL) -> list[dict[str, Any]]:
    """Cells of the head-to-head matrix for the bots in ``rows``: wins/draws/losses of ``bot`` against
    ``opponent`` and the score rate (a draw counts half)."""
    h2h = store.head_to_head(league_id, scope)
    cells = []
    for a in rows:
        for b in rows:
            if a["bot_id"] == b["bot_id"]:
                continue
            w, d, l = h2h.get((a["bot_id"], b["bot_id"]), (0, 0, 0))
            n = w + d + l
            cells.append({"bot": a["bot"], "opponent": b["bot"], "wins": w, "draws": d, "losses": l, "games": n,
                          "win_rate": (w + 0.5 * d) / n if n else None})
    return cells
