"""The one writer of a league run: feeds the planned fixtures to a backend as tasks and stores what comes back.

Each finished game is committed as soon as the writer reads it; games that finished together (the backend's
``ready``) share one transaction, so a stop between them stores none of them. Ratings are folded in schedule-key
order, only up to the first game still outstanding, so they never depend on the order in which games happened to
finish; when is the :class:`FoldPolicy`'s call.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from arena.league.backends import Backend
from arena.league.config import LeagueConfig
from arena.league.planning import keyed_seeds, make_task, task_limits
from arena.league.schedule import Fixture
from arena.league.summary import RunSummary
from arena.league.task import Task, TaskFailure, TaskResult
from arena.results.records import GameRecord
from arena.submissions.snapshot import Snapshot
from leaderboards import ledger
from leaderboards.probation import ProbationRule
from leaderboards.store import Bot, Store

FOLD_EVERY = 1.0
"""Seconds between two rating folds while games are stored. A fold reads and writes the ratings of every bot it
touches (a few ms of the writer's CPU whatever the games in it), so one fold for a few dozen games costs little more
than one for a single game, and folding every game of a busy league would make the fold most of the writer's work.
The games stored meanwhile stay unrated (as after a kill: the next fold or run rates them) until the next result or,
when none comes, until the backend wakes the writer FOLD_EVERY later (its ``tick``): the leaderboard is never more
than about two seconds behind. The last game of a run is always folded: the ratings at the end equal a
schedule-order recomputation."""
_clock = time.monotonic  # (the fold policy's clock: tests pace results without waiting)
_NOT_YET = object()  # no fold made yet: any ``before`` differs from it


@dataclass
class FoldPolicy:
    """When the writer folds the ratings: up to ``before``, the first game still outstanding, once that moved and the
    last fold is at least ``every`` seconds old, or at once when nothing is outstanding (the run's last game)."""

    every: float = field(default_factory=lambda: FOLD_EVERY)
    clock: Callable[[], float] = field(default_factory=lambda: _clock)
    rated_below: object = _NOT_YET
    """The ``before`` of the last fold."""
    folded_at: float = float("-inf")

    def owed(self, before: str | None) -> bool:
        """Whether games stored up to ``before`` are not folded yet (a fold was put off)."""
        return before != self.rated_below

    def now(self, before: str | None) -> bool:
        """Whether to fold up to ``before`` now; when it says yes, the fold counts as made (the caller makes it)."""
        now = self.clock()
        if self.owed(before) and (before is None or now - self.folded_at >= self.every):
            self.rated_below, self.folded_at = before, now
            return True
        return False


class Writer:
    """Feeds fixtures to a backend and stores what comes back (the one writer)."""

    def __init__(self, store: Store, league_id: int, config: LeagueConfig, bots: dict[int, Bot],
                 todo: list[Fixture], summary: RunSummary,
                 progress: Callable[[int, int, Task, TaskResult], None] | None,
                 yield_to: threading.Event | None = None, skip_probation: bool = True) -> None:
        self.store, self.league_id, self.config, self.bots = store, league_id, config, bots
        self.skip_probation = skip_probation
        """A bot on probation plays no game (a tournament's matches are played out: a failed game is lost)."""
        self.yield_to = yield_to
        self.todo, self.summary, self.progress = todo, summary, progress
        self.finished: set[str] = set()  # stored, skipped or failed at or past todo[low]: no longer blocks rating
        self.low = 0  # todo[low] is the first fixture that may still be outstanding
        self.on_probation = {b.id for b in bots.values() if b.status == "probation"}
        self.chance_key = store.chance_key(league_id)  # the league's secret: the same for every game and resume
        self.keyed = keyed_seeds(store, league_id)
        self.snapshots: dict[int, Snapshot] = {}
        self.in_flight = 0  # handed to the backend, no result yet: what a stop abandons
        self.limits = task_limits(config)
        self.rule = ProbationRule.from_config(config)
        self.fold = FoldPolicy()
        self.before: str | None = None  # the first game still outstanding, as of the last stored result
        self.writer_cpu = 0.0
        """CPU seconds this writer spent storing games and folding ratings (``arena bench league`` reads it)."""

    def tasks(self) -> Iterator[Task]:
        for fixture in self.todo:
            if self.yield_to is not None and self.yield_to.is_set():
                self.summary.yielded = True  # (the backend finishes what it was given; nothing more starts)
                return
            if self.skip_probation and any(b in self.on_probation for b in fixture.seats):
                self.summary.skipped += 1
                self.finished.add(fixture.key)
                continue
            self.in_flight += 1
            self.summary.in_flight = self.in_flight
            yield make_task(fixture, self.bots, self.config, self.chance_key, self.snapshots_of(fixture.seats),
                            self.limits, self.keyed)

    def snapshots_of(self, seats: tuple[int, ...]) -> dict[int, Snapshot]:
        """The snapshots of the file bots among ``seats`` (each read from the store once)."""
        for bot_id in seats:
            if bot_id not in self.snapshots and self.bots[bot_id].kind == "file":
                self.snapshots[bot_id] = self.store.snapshot(bot_id)
        return self.snapshots

    def drain(self, backend: Backend) -> None:
        """Plays the fixtures on ``backend`` and stores every result. A stop (:class:`~arena.league.signals.Interrupted`
        raised while the backend is read) rolls back the open transaction: the games of a group not yet committed
        are not stored, as those still in flight."""
        results = backend.execute(self.tasks(), tick=self.fold.every)
        for item in results:
            if item is None:  # no result for a tick: a fold put off is made now (no transaction is open here)
                if self.fold.owed(self.before):
                    with self.store.transaction():
                        self._fold()
                continue
            group = [item]
            with self.store.transaction():  # these games and the ratings they made final: one commit
                self._take(item, backend)
                # results already waiting join this transaction; each is stored before the next is read, so the
                # backend never starts a game of a bot that the last one put on probation
                while backend.ready and (item := next(results, None)) is not None:
                    self._take(item, backend)
                    group.append(item)
                started = time.thread_time()
                self._fold()
            self.writer_cpu += time.thread_time() - started  # (the fold and the commit)
            self.in_flight -= len(group)  # (after the commit: a stop before it abandons these games too)
            self.summary.in_flight = self.in_flight
            if self.progress:
                for task, result in group:
                    self.progress(self.summary.played + self.summary.skipped + len(self.summary.errors)
                                  + len(self.summary.overloaded), len(self.todo), task, result)

    def _take(self, item: tuple[Task, TaskResult], backend: Backend) -> None:
        """Stores one result (inside the open transaction) and moves the frontier of outstanding games."""
        task, result = item
        started = time.thread_time()
        self.finished.add(task.key)
        if isinstance(result, TaskFailure):
            unplayed = self.summary.overloaded if result.overloaded else self.summary.errors
            unplayed.append(f"{task.key}: {result.error}")
        else:
            self._store(task, result, backend.columns.pop(task.key, None))
        total = len(self.todo)
        while self.low < total and self.todo[self.low].key in self.finished:
            self.finished.discard(self.todo[self.low].key)  # behind the frontier: kept flat at 100k games
            self.low += 1
        self.before = self.todo[self.low].key if self.low < total else None
        self.writer_cpu += time.thread_time() - started

    def _fold(self) -> None:
        """Folds the ratings up to :attr:`before` when the policy says so (inside the caller's transaction)."""
        if self.fold.now(self.before):
            ledger.rate_pending(self.store, self.league_id, before=self.before)

    def _store(self, task: Task, result: GameRecord, columns: tuple[str, ...] | None = None) -> None:
        """Stores one game (inside the caller's transaction) and notes which of its bots went on probation. The
        record is the one the backend decoded; ``columns``, its JSON text as the worker encoded it (the local
        backend), is inserted as it is."""
        ledger.record_game(self.store, self.league_id, task.key, task.game, task.round, task.seats, result,
                           probation=self.rule, columns=columns)
        self.summary.played += 1
        for seat, bot_id in enumerate(task.seats):
            # only a failed seat can put its bot on probation: the others are not read back
            if bot_id not in self.on_probation and ledger.seat_failures(result, seat) \
                    and self.store.bot(bot_id).status == "probation":
                self.on_probation.add(bot_id)
