"""TrueSkill ratings (:mod:`leaderboards.ratings`) and the SQLite results store (:mod:`leaderboards.store`)."""
from __future__ import annotations

from leaderboards.ratings import ALL, BotRating, Rater, RatedGame, env_for
from leaderboards.store import DEFAULT_DB, SCHEMA_VERSION, Bot, League, Store, StoredGame, StoreError

__all__ = ["ALL", "BotRating", "Rater", "RatedGame", "env_for", "DEFAULT_DB", "SCHEMA_VERSION", "Bot", "League",
           "Store", "StoredGame", "StoreError"]
