"""The league runner: plays a league's schedule on a backend and stores results with one writer.

The writer (this process, :mod:`arena.league.writer`) is the only one that touches the store. Games run elsewhere
(:mod:`arena.league.backends`): in a pool of worker processes (``local``, ``--concurrency N`` games at once) or as
Ray tasks (``ray``). A schedule key can be stored only once, so a run that is killed and started again plays exactly
the games that are missing (the ones in flight when it died included) and counts nothing twice.

:func:`run_league` is ``arena league run``: it takes the store's lock, opens it and stops on SIGINT/SIGTERM
(:mod:`arena.league.signals`) around one :func:`run_pass`, which ``arena serve``'s ladder calls pass after pass
under its own lock. What is played is decided by :mod:`arena.league.planning`.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from arena.errors import ConfigError
from arena.league import backends, planning
from arena.league.backends import BACKENDS
from arena.league.config import TOURNAMENTS, LeagueConfig
from arena.league.schedule import Fixture
from arena.league.signals import Interrupted, stop_on_signals
from arena.league.summary import RunSummary
from arena.league.task import Task, TaskResult
from arena.league.writer import Writer
from arena.sandbox.bot_files import worker_files
from arena.submissions.duplicates import twins, warning
from arena.submissions.snapshot import Snapshot
from arena.tournament.progress import Settings, expected_games, frozen_field
from leaderboards import ledger, lock
from leaderboards.store import DEFAULT_DB, Bot, Store


def run_league(config: LeagueConfig, *, db: str | os.PathLike[str] | None = None, concurrency: int | None = None,
               backend: str = "local", address: str | None = None,
               progress: Callable[[int, int, Task, TaskResult], None] | None = None,
               on_start: Callable[[RunSummary], None] | None = None) -> RunSummary:
    """Plays (or resumes) a league and returns what this run did.

    Args:
        config: the validated league.
        db: the store (default: the league file's ``database``, else arena.sqlite in the current directory).
        concurrency: games at once (default: the league file's, else the number of cores).
        backend: ``local`` (worker processes) or ``ray``.
        address: the Ray cluster (``ray`` backend; None starts or joins a local instance).
        progress: called after every stored game as ``progress(done, total, task, record)``.
        on_start: called once the bots are entered and the schedule is known, before any game, with the summary
            so far (``scheduled``, ``already``, ``duplicates``).
    """
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; valid backends: {', '.join(BACKENDS)}")
    asked = concurrency or config.concurrency
    if asked is not None and asked < 1:
        raise ConfigError(f"--concurrency must be at least 1, got {asked}")
    n = asked or (0 if backend == "ray" else os.cpu_count() or 1)  # 0: the Ray cluster's CPUs (RayBackend)
    path = Path(db) if db is not None else (config.database or Path(DEFAULT_DB))
    connection: Any = nullcontext()
    if backend == "ray":  # connected and every node checked before anything is written (docs/ray.md)
        from arena.league.ray_backend import ray_connection  # optional: Ray is an extra, imported only for its backend
        connection = ray_connection(address)
    started = time.perf_counter()
    # every file bot is copied (and its size checked) before anything is written
    snapshots = planning.take_snapshots(config)
    summary = RunSummary(config.name, path)
    try:
        # one runner per store (the lock), then the store checked before anything is written (Store.open)
        with stop_on_signals(), connection, lock.acquire(path), ledger.open_store(path, create=True) as store, \
                worker_files():
            run_pass(store, config, summary, concurrency=n, snapshots=snapshots, backend=backend, address=address,
                     progress=progress, on_start=on_start)
    except Interrupted as stop:  # between games and stores: nothing half-done is left (transactions roll back)
        summary.interrupted = stop.name
    summary.elapsed = time.perf_counter() - started
    return summary


def run_pass(store: Store, config: LeagueConfig, summary: RunSummary, *, concurrency: int,
             snapshots: dict[str, Snapshot] | None = None, backend: str = "local", address: str | None = None,
             progress: Callable[[int, int, Task, TaskResult], None] | None = None,
             on_start: Callable[[RunSummary], None] | None = None, yield_to: threading.Event | None = None) -> None:
    """One pass over a league: enters its bots, plans what is missing and plays it; fills in ``summary`` as it goes.

    The caller holds the store's lock (:func:`leaderboards.lock.acquire`), has opened the store and, in the main
    thread, turns SIGINT/SIGTERM into :class:`~arena.league.signals.Interrupted`
    (:func:`~arena.league.signals.stop_on_signals`): :func:`run_league` for ``arena league run``,
    :func:`arena.server.ladder.run_ladder` for ``arena serve``. A stop while games are played ends the pass with
    ``summary.interrupted`` set (nothing half-stored: the next pass plays the games in flight); one at another time
    propagates.

    Args:
        concurrency: games at once (``ray``: 0 for the cluster's CPUs).
        snapshots: the league file's file bots by name (:func:`~arena.league.planning.take_snapshots`); None: taken
            now.
        backend, address: where the games are played (:func:`arena.league.backends.make_backend`).
        progress, on_start: as :func:`run_league`'s.
        yield_to: once set (``arena serve``: a bot was entered) no further game starts: the games in flight are
            stored and the pass ends early (``summary.yielded``), so that the next pass plans the newcomer's games.
    """
    league = store.ensure_league(config.name, planning.stored_config(store, config))
    entered: list[Bot] = []
    planning.sync_bots(store, league.id, config, snapshots, entered)
    if config.tournament.get("field_from") and frozen_field(store, league.id) is None:
        entered += planning.enter_field_from(store, league.id, config.tournament["field_from"])
    del snapshots  # the store keeps them now; the writer loads the ones it plays
    bots = {b.id: b for b in store.bots(league.id)}
    batches: Iterator[list[Fixture]] | None = None
    if config.format in TOURNAMENTS:  # round after round, each decided by the last (arena.tournament)
        batches = planning.tournament_batches(store, league.id, config)
        todo = next(batches, [])
        stored_games = store.count_games(league.id)
        field = frozen_field(store, league.id) or []
        scheduled = max(stored_games + len(todo),
                        expected_games(Settings.of(config.to_dict()), len(field)) if todo else stored_games)
        already = stored_games
    else:
        fixtures = planning.plan(store, league.id, config)
        scheduled = len(fixtures)
        todo = planning.missing(fixtures, store.sorted_schedule_keys(league.id))
        del fixtures  # a resumed run keeps only what it still has to play
        already = scheduled - len(todo)
    summary.scheduled, summary.already = scheduled, already
    summary.probation = [b.label for b in bots.values() if b.status == "probation"]
    ledger.rate_pending(store, league.id, before=todo[0].key if todo else None)
    if on_start is not None:  # the progress shows done/total from the start, not after the first game
        everyone = list(bots.values())
        summary.duplicates = [warning(b, same) for b in entered if (same := twins(b, everyone, store.snapshot))]
        on_start(summary)
    # batch after batch where the ranking is least certain (arena.league.adaptive)
    if config.schedule == "adaptive" and todo:
        # start-up: only for adaptive schedules
        from arena.league.adaptive import league_batches
        batches = league_batches(store, league.id, config, todo)
        todo = next(batches, [])
    stored = store.count_games(league.id)  # (before every batch: played counts them all)
    # One backend for the whole league, adaptive batches included: its workers start once and, on Ray, each bot
    # snapshot is put into the object store once.
    chosen = backends.make_backend(backend, concurrency, address) if todo else None
    try:
        while todo:
            writer = Writer(store, league.id, config, bots, todo, summary, progress, yield_to,
                            skip_probation=config.format not in TOURNAMENTS)
            assert chosen is not None  # made above whenever there is a batch to play
            try:
                writer.drain(chosen)
            except Interrupted as stop:
                summary.interrupted = stop.name
            summary.abandoned = writer.in_flight
            summary.writer_cpu += writer.writer_cpu
            # exact even if a signal fell between a commit and its count: only this runner stores games (the lock)
            summary.played = store.count_games(league.id) - stored
            if summary.interrupted:  # stop now: the ratings are folded up to the first missing game already
                return
            # after a yield no later batch: it would be decided (and stored) from games never played
            todo = next(batches, []) if batches is not None and not summary.yielded else []
            if config.format in TOURNAMENTS:  # tie-breaks and sudden death add games the first count could not know
                summary.scheduled = max(summary.scheduled, store.count_games(league.id) + len(todo))
    finally:
        if chosen is not None:
            chosen.close()  # within workers.STOP_GRACE: games still in flight are abandoned
    ledger.rate_pending(store, league.id)
    summary.probation = [b.label for b in store.bots(league.id, include_retired=False) if b.status == "probation"]
    summary.waiting = planning.waiting_games(store, league.id, config, set(bots))

