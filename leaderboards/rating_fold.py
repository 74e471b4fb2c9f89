"""The rating fold: a league's games applied to TrueSkill (:class:`leaderboards.ratings.Rater`) in schedule order,
each seat's rating after its game kept as the history. The policy lives here; every read and write is one of the
store's typed methods (:class:`leaderboards.store.Store`), inside the store's transaction.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from leaderboards.ratings import ALL, BotRating, RatedGame, Rater
from leaderboards.schema import FLUSH, PROVISIONAL, RATED, UNRATED

if TYPE_CHECKING:
    from leaderboards.store import Store


def recompute(store: Store, league_id: int, where: str = "", args: Sequence[Any] = ()) -> int:
    """Folds the games selected by ``where`` from the prior, in schedule order, into fresh ratings and history;
    every other game becomes unrated. Call inside a transaction. Returns the games folded."""
    seq = store.next_rating_seq(league_id)  # above every old number: a reader sees the history was rewritten
    games = list(store.rated_games(league_id, where, args))
    store.unrate_games(league_id)
    rater = Rater()
    fold(store, rater, games, RATED, seq)
    store.delete_ratings(league_id)
    store.write_ratings(league_id, ((key, rater.table[key]) for key in list(rater.table)))
    return len(games)


def recompute_ratings(store: Store, league_id: int) -> dict[int, BotRating]:
    """Recomputes every rating of a league (and its history) from its stored games, in schedule order, and
    stores them."""
    with store.transaction():
        recompute(store, league_id)
    return store.ratings(league_id)


def fold(store: Store, rater: Rater, games: Iterable[tuple[int, RatedGame]], status: int, seq: int
         ) -> set[tuple[str, int]]:
    """Applies ``games`` in the given order to ``rater``, storing each seat's rating after its game (the
    history), the game's ``rated`` status and its place in the fold (``rating_seq``, from ``seq`` on).
    Returns the (scope, bot) entries changed."""
    touched: set[tuple[str, int]] = set()
    history: list[tuple[float, float, float, float, int, int]] = []
    marks: list[tuple[int, int, int]] = []
    table = rater.table
    for game_id, game in games:
        changed = rater.apply(game)
        if changed:  # a bot against itself is not rated: no history
            touched.update(changed)
            for seat, bot in enumerate(game.seats):
                a, g = table[(ALL, bot)], table[(game.game, bot)]
                history.append((a.mu, a.sigma, g.mu, g.sigma, game_id, seat))
        marks.append((status, seq, game_id))
        seq += 1
        if len(marks) >= FLUSH:
            store.write_fold(history, marks)
            history, marks = [], []
    store.write_fold(history, marks)
    return touched


def rate_pending(store: Store, league_id: int, before: str | None = None) -> int:
    """Rates the stored, not yet rated games whose schedule key is below ``before`` (all when None): the
    writer passes the first key still being played, so everything below it is final.

    Games that come after every rated one (the normal case) are folded onto the stored ratings in schedule
    order. Games that sort before a rated one (a bot entered into a running league, a resumed run) are
    folded in too, but marked provisional, as long as an earlier game is still outstanding (``before`` at
    or below the highest rated key); once none is (``before`` above it, or None), the league is recomputed
    once in schedule order. So the stored ratings equal a schedule-order recomputation whenever no game
    is provisional, and entering a bot into a league of 100,000 games costs one recomputation, not one per
    game.

    Returns:
        The number of games newly rated.
    """
    bound, args = ("AND schedule_key < ?", [before]) if before is not None else ("", [])
    with store.transaction():
        low, high, count = store.unrated_span(league_id, before)
        provisional = store.has_provisional(league_id)
        if not count and not provisional:
            return 0
        top = store.top_rated_key(league_id)
        if top is not None and (provisional or (low is not None and low < top)):
            if before is None or before > max(top, high or top):  # nothing below the top is outstanding
                recompute(store, league_id, bound, args)  # (even with nothing new: provisional games end)
                return int(count)
            if not count:
                return 0
            status = PROVISIONAL
        else:
            status = RATED
        pending = list(store.rated_games(league_id, f"AND rated={UNRATED} {bound}", args))
        rater = Rater()
        bots = {b for _, g in pending for b in g.seats}
        scopes = {ALL} | {g.game for _, g in pending}
        rater.table.update(store.stored_ratings(league_id, bots, scopes))
        touched = fold(store, rater, pending, status, store.next_rating_seq(league_id))
        store.write_ratings(league_id, ((key, rater.table[key]) for key in touched))
    return len(pending)
