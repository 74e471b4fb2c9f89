"""The writer's side of the store: what storing a finished game means for a league, in one place.

:func:`record_game` inserts the game (:meth:`leaderboards.store.Store.insert_game`), then keeps each seat's bot's
run of failures and puts a failing bot on probation (:mod:`leaderboards.probation`); :func:`rate_pending` and
:func:`recompute_ratings` fold the stored games into ratings (:mod:`leaderboards.rating_fold`); :func:`open_store`
opens a
store for writing, rebuilding the rating history when it upgrades a schema 1 store. The league runner (and with it
``arena serve``), the benchmarks and the tests write through these calls; :class:`~leaderboards.store.Store` itself
only reads and writes rows, and imports neither the probation rules nor the ratings' policy.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

from arena.results.records import GameRecord
from leaderboards import rating_fold
from leaderboards.probation import ProbationRule
from leaderboards.ratings import BotRating, failure_reasons
from leaderboards.schema import UNRATED
from leaderboards.store import Store

__all__ = ["open_store", "rate_pending", "rebuild_history", "recompute_ratings", "record_game", "seat_failures"]


def open_store(path: str | os.PathLike[str], *, create: bool = False) -> Store:
    """:meth:`Store.open` for a writer: a schema 1 store is upgraded with its rating history rebuilt
    (:func:`rebuild_history`) in the upgrade's transaction."""
    return Store.open(path, create=create, rebuild_history=rebuild_history)


def rebuild_history(store: Store, league_id: int) -> None:
    """Refolds a league's rated games (the same games, the same ratings) so that each seat of each gets the rating
    its bot had after it: the schema 1 -> 2 upgrade (inside its transaction)."""
    rating_fold.recompute(store, league_id, f"AND rated != {UNRATED}")


def seat_failures(record: GameRecord, seat: int) -> set[str]:
    """The kinds of failure of one seat of a game (:func:`leaderboards.ratings.failure_reasons`)."""
    return failure_reasons(record.terminations, record.failures, seat)


def record_game(store: Store, league_id: int, schedule_key: str, base_game: str, round_: int, seats: Sequence[int],
                record: GameRecord, *, probation: ProbationRule | None = None,
                probation_after: int | None = None, columns: Sequence[str] | None = None) -> int | None:
    """Stores one finished game in one transaction (the caller's, when one is open): its rows, then each bot's run
    of consecutive failures, and a failing bot put on probation by the league's ``probation`` rule (a run of
    failures, or a failure rate over its recent games); ``probation_after`` alone is the run rule only. ``columns``:
    the record's JSON columns as the worker that played it encoded them (:meth:`Store.insert_game`).

    Returns:
        The new game id, or None when a game with this schedule key is already stored (never twice).
    """
    if probation is None and probation_after:
        probation = ProbationRule(after=probation_after, failures=0)
    with store.transaction():
        game_id = store.insert_game(league_id, schedule_key, base_game, round_, seats, record, columns)
        if game_id is None:
            return None
        for seat, bot_id in enumerate(seats):
            reasons = seat_failures(record, seat)
            if not reasons:
                store.end_failure_run(bot_id)
                continue
            run = store.add_failure(bot_id)
            if probation is None or not probation.active:
                continue
            # the window is read only after a failure: only then can the rate cross the line
            recent = [bool(failure_reasons(t, f, s)) for t, f, s in store.latest_outcomes(bot_id, probation.window)] \
                if probation.failures else []
            why = probation.reason(run, recent, reasons, game_id)
            if why:
                store.set_probation(bot_id, why, only_active=True)
        return game_id


def rate_pending(store: Store, league_id: int, before: str | None = None) -> int:
    """Rates the stored games below ``before`` not rated yet (:func:`leaderboards.rating_fold.rate_pending`).
    Returns the games newly rated."""
    return rating_fold.rate_pending(store, league_id, before)


def recompute_ratings(store: Store, league_id: int) -> dict[int, BotRating]:
    """Every rating of a league (and its history) recomputed from its stored games, in schedule order, and
    stored (:func:`leaderboards.rating_fold.recompute_ratings`)."""
    return rating_fold.recompute_ratings(store, league_id)
