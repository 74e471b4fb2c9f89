"""Read-only queries the dashboard needs, by name: each is a read of the store's own
:class:`~leaderboards.store_views.StoreViews` (the SQL lives in the store), taking an open
:class:`~leaderboards.store.Store` first (``queries.recent_games(store, league_id)`` is
``store.recent_games(league_id)``). They select only the columns they need, so a dashboard polling a store of
100,000 games never loads histories it does not draw.
"""
from __future__ import annotations

from leaderboards.store_views import BotMoves, GameSummary, HistoryRow, StoreViews

__all__ = ["BotMoves", "GameSummary", "HistoryRow", "bot_moves", "change_token", "count_games", "count_provisional",
           "head_to_head_since", "history_bounds", "last_key", "rating_history", "read_transaction", "recent_games",
           "seq_after"]

change_token = StoreViews.change_token
recent_games = StoreViews.recent_games
count_games = StoreViews.count_games
last_key = StoreViews.last_key
head_to_head_since = StoreViews.head_to_head_since
count_provisional = StoreViews.count_provisional
history_bounds = StoreViews.history_bounds
read_transaction = StoreViews.read_transaction
seq_after = StoreViews.seq_after
rating_history = StoreViews.rating_history
bot_moves = StoreViews.bot_moves
