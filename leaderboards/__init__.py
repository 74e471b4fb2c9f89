"""TrueSkill ratings (:mod:`leaderboards.ratings`) and the SQLite results store (:mod:`leaderboards.store`)."""
from __future__ import annotations

from leaderboards.ratings import ALL, BotRating, RatedGame, Rater, env_for
from leaderboards.store import DEFAULT_DB, SCHEMA_VERSION, Bot, League, Store, StoredGame, StoreError

__all__ = [
           "ALL",
           "DEFAULT_DB",
           "SCHEMA_VERSION",
           "Bot",
           "BotRating",
           "League",
           "RatedGame",
           "Rater",
           "Store",
           "StoreError",
           "StoredGame",
           "env_for",
]
