"""The league that ``arena serve`` keeps running while students submit.

Two loops share the store (each with its own connection; SQLite's WAL lets the web pages read meanwhile):

- :class:`Validator` (a thread): takes queued submissions, accounts in turn (:func:`leaderboards.accounts.claim_next`),
  plays each one's validation games from every seat (:func:`arena.submissions.validation.verdict`, the same games as
  ``arena submit``) in a worker process of its own, and either refuses it (reason + the bot's traceback) or
  enters it as the account's next bot version (``Store.upsert_bot``, origin ``submit``: probation lifted, the
  old version retired). A refused bot is never entered, so it never plays.
- :func:`run_ladder` (the main thread, under the store's runner lock like ``arena league run``): passes of the league
  runner (:func:`arena.league.runner.run_pass`, which ``arena league run`` calls too), each playing the league's
  schedule for the bots entered so far, i.e. only the games still missing. A pass ends when its games are played, or
  early when a bot is entered (no new game starts, those in flight are stored); the next one starts when a bot was
  entered or withdrawn, and plays the newcomer's first-round games first (keys sort round first). The schedule's keys
  never change when bots are added (a new bot only adds tables), the store takes a key once, so a submission while
  games are in flight loses and doubles nothing, and a killed server's next start plays exactly the missing games.
"""
from __future__ import annotations

import logging
import sqlite3
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.league.config import LeagueConfig
from arena.league.planning import stored_config, take_snapshots
from arena.league.runner import run_pass
from arena.league.signals import Interrupted, stop_on_signals
from arena.league.summary import RunSummary
from arena.league.task import Task, TaskFailure
from arena.league.workers import LocalBackend
from arena.sandbox.bot_files import worker_files
from arena.server import finals
from arena.server.connections import out_of_files
from arena.server.decisions import withdrawn_line
from arena.server.scrimmages import Scrimmager
from arena.server.submitting import started_line
from arena.submissions.snapshot import files_digest
from arena.text import shown
from leaderboards import accounts as acc
from leaderboards import lock, teams
from leaderboards.store import Store

REVOKE_LOOK = 1.0
"""Seconds between looks for an account revoked by another process (:meth:`Validator.watch_revokes`)."""
RETRY = 5.0
"""Seconds before games that could not be played (a referee error, an overloaded machine, no open file free to
start a worker) are tried again."""
RETRY_MOST = 60.0
"""The longest such pause (:class:`Backoff`): a game the referee can never play, an arena bug, is tried once a minute
then, not every few seconds for ever."""
log = logging.getLogger("arena.serve")  # (rate-limited by arena.server.logs)
RUNTIME_RETRY = 60.0
"""Seconds between checks of a sandbox runtime found unable to load the bot packages (validation waits)."""


class Backoff:
    """The pause before a pass's unplayed games are tried again: ``RETRY``, doubled after each pass in a row that left
    games unplayed and played none, up to ``RETRY_MOST``; back to ``RETRY`` once a pass plays a game or leaves none."""

    def __init__(self) -> None:
        self.next = RETRY

    def after(self, unplayed: bool, played: int) -> float:
        """The pause after a pass that left games ``unplayed`` (or not) and played ``played`` games."""
        if not unplayed or played:
            self.next = RETRY
        pause = self.next
        if unplayed:
            self.next = min(self.next * 2, RETRY_MOST)
        return pause


class Validator(threading.Thread):
    """Validates queued submissions one at a time, accounts in turn, each account's oldest first (so two of one
    account become two versions in the order they were sent)."""

    def __init__(self, base: Store, config: LeagueConfig, league_id: int, entered: threading.Event) -> None:
        super().__init__(name="arena-validator", daemon=True)
        self.base, self.config, self.league_id, self.entered = base, config, league_id, entered
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.backend: LocalBackend | None = None
        self.error: str | None = None
        self.runtime_problem: str | None = None
        """Set while the bot packages cannot load inside the sandbox (:mod:`arena.referee.import_probe`): the server's
        fault, shown to organisers; submissions wait in the queue until a check passes."""
        self._suspect = False  # the last validation met a start-up crash or a game the referee could not play
        self.checked = threading.Event()
        """Set once the runtime was first checked: the league's first pass waits for it."""

    def play(self, task: Task) -> Any:
        if self.backend is None:
            self.backend = LocalBackend(1)
        try:
            for item in self.backend.execute(iter([task])):  # (no tick: never None)
                if item is not None:
                    result = item[1]
                    if isinstance(result, TaskFailure) or any(
                            f.move_number == 0 and f.reason == "crash" for f in result.failures):
                        self._suspect = True  # maybe the runtime's fault, not the bot's: checked before refusing
                    return result
            self._suspect = True
            return TaskFailure("the validation worker returned nothing")
        finally:
            # the store's columns the worker encoded are the league writer's to take; a validation game is not
            # stored, and kept here they would pile up for the server's life
            self.backend.columns.pop(task.key, None)

    def run(self) -> None:
        threading.Thread(target=self.watch_revokes, name="arena-revokes", daemon=True).start()
        try:
            turns: dict[int, int] = {}  # accounts take turns (acc.claim_next)
            with self.base.another() as store:  # (never a second Store.open in this process: Store.another)
                self.check_runtime()
                while not self.stopping.is_set():
                    if self.runtime_problem is not None:  # validation waits for the organiser's fix
                        self.wake.wait(RUNTIME_RETRY)  # (a new upload checks again at once)
                        self.wake.clear()
                        if not self.stopping.is_set():
                            self.check_runtime()
                        continue
                    sub = acc.claim_next(store, self.league_id, turns)
                    if sub is None:
                        self.wake.wait(1.0)
                        self.wake.clear()
                        continue
                    while not self.stopping.is_set():
                        try:
                            self.handle(store, sub)
                            break
                        except OSError as exc:  # out of open files: the same submission, a little later
                            if not out_of_files(exc):
                                raise
                            log.warning("arena serve: out of open files (%s); validation waits %g s and tries "
                                        "again", exc, RETRY)
                            self.stopping.wait(RETRY)
        except Exception:  # noqa: BLE001 - shown on the server's log; the submissions stay queued for a restart
            if not self.stopping.is_set():
                self.error = traceback.format_exc()
                print(f"arena serve: the validator stopped: {self.error}", flush=True)

    def handle(self, store: Store, sub: acc.Submission) -> None:
        # start-up: the validation games' module when one is validated
        from arena.submissions.validation import reference_bots, verdict
        snapshot = acc.submission_snapshot(store, sub.id)
        current = store.current_bot(self.league_id, sub.bot_name)
        if current is not None and current.origin == "config":
            acc.finish(store, sub.id, "refused", reason=f"{sub.bot_name!r} is a bot of the league file")
            return
        self._suspect = False
        reason, detail = verdict(f"file:{snapshot.digest}", sub.bot_name, {snapshot.digest: snapshot},
                                 store.find_league(self.config.name).config, play=self.play,
                                 key=store.chance_key(self.league_id),  # as the league's games (validation.py)
                                 opponents=reference_bots(store, self.league_id), book=self.config.openings)
        if self.stopping.is_set():
            return  # stopped mid-validation: left `validating`, queued again by the next start
        if reason is not None and self._suspect and not self.check_runtime():
            acc.requeue_unfinished(store, self.league_id)  # the server's fault: validated again after the fix
            return
        with store.transaction():  # the version and the verdict together
            now = acc.submission(store, sub.id)
            if now is None or now.status != "validating":  # withdrawn (or its account revoked) meanwhile: it stays so
                return
            withdrawn = acc.withdrawn_twin(store, sub.account_id, files_digest(snapshot))
            if withdrawn is not None:  # these files were withdrawn while it waited: they stay withdrawn
                acc.finish(store, sub.id, "refused", reason=withdrawn_line(withdrawn))
                return
            if reason is not None:
                acc.finish(store, sub.id, "refused", reason=reason, detail=detail)
                return
            moved = teams.stale_upload(store, sub)
            if moved is not None:  # its account joined or left a team meanwhile: it would be a second entry
                acc.finish(store, sub.id, "refused", reason=moved)
                return
            started = started_line(self.config.format, store, self.league_id)
            if started is not None:  # queued before a served tournament started, judged after: it would never play
                acc.finish(store, sub.id, "refused", reason=started)
                return
            bot, _ = store.upsert_bot(self.league_id, sub.bot_name, origin="submit", snapshot=snapshot,
                                      reactivate=True)
            acc.finish(store, sub.id, "accepted", bot_id=bot.id)
        self.entered.set()

    def check_runtime(self) -> bool:
        """Whether the bot packages load inside the sandbox (a real sandboxed bot imports them, in a process of its
        own); sets or clears :attr:`runtime_problem`, and says so on the server's log."""
        from arena.referee import import_probe  # start-up: only when the validator starts or suspects the runtime
        report = import_probe.probe()
        if report.inconclusive:  # out of open files or processes: no verdict on the runtime, nor on the bot
            self.checked.set()
            return False
        was, self.runtime_problem = self.runtime_problem, None if report.ok else report.summary()
        if report.ok != (was is None) and self.backend is not None:
            self.backend.close()  # its worker's runtime view was made before the change: a fresh one makes its own
            self.backend = None
        self.checked.set()
        if self.runtime_problem and self.runtime_problem != was:
            self.entered.set()  # the league's pass in flight ends too: its games would crash for the server's fault
            print(f"arena serve: validation and the league are paused: {shown(self.runtime_problem)}; submissions "
                  f"wait in the queue (checked again every {RUNTIME_RETRY:g} s)", file=sys.stderr, flush=True)
        elif was and not self.runtime_problem:
            print("arena serve: the bot packages load in the sandbox again: validation and the league go on",
                  file=sys.stderr, flush=True)
        return report.ok

    def watch_revokes(self) -> None:
        """Ends the league's pass when an account is revoked or a team changed by another process (`arena accounts
        revoke` or `team` retired bots there, and the pass in flight would go on playing them): a look every
        second, in a thread of its own (the validator may be busy with a long validation)."""
        with self.base.another() as store:
            seen = (acc.revoked_count(store, self.league_id), teams.changed(store, self.league_id))
            while not self.stopping.wait(REVOKE_LOOK):
                try:
                    count = (acc.revoked_count(store, self.league_id), teams.changed(store, self.league_id))
                except sqlite3.Error:  # (a busy store: the next look)
                    continue
                if count != seen:
                    seen = count
                    self.entered.set()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        backend = self.backend  # (read once: the thread may drop it meanwhile, check_runtime does)
        if backend is not None:
            backend.close()


def run_ladder(config: LeagueConfig, db: Path, *, concurrency: int | None = None,
               started: Callable[[int, threading.Event, Validator, Store], None] | None = None,
               scrimmaging: Callable[[Scrimmager], None] | None = None,
               start_helpers: bool = True) -> RunSummary:
    """Runs the league until SIGINT/SIGTERM (then ``summary.interrupted`` names it): pass after pass of the
    league runner, the next one as soon as a bot entered. ``started(league_id, entered, validator, store)`` is called
    once the store is locked and the league exists (the web server starts there); ``scrimmaging(scrimmager)`` just
    before, with the thread that plays scrimmages (:mod:`arena.server.scrimmages`). With ``start_helpers=False`` the
    caller starts those two threads (``arena serve``'s web application, in its lifespan); they are stopped here at the
    end either way (stopping twice is harmless). The ladder itself keeps the calling (main) thread: SIGINT and SIGTERM
    land there."""
    n = concurrency or config.concurrency or 1
    summary = RunSummary(config.name, db)
    validator: Validator | None = None
    scrimmager: Scrimmager | None = None
    entered = threading.Event()
    try:
        with stop_on_signals(), lock.acquire(db, "arena serve"), Store.open(db, create=True) as store, \
                worker_files():
            snapshots = take_snapshots(config)
            league = store.ensure_league(config.name, stored_config(store, config))
            acc.requeue_unfinished(store, league.id)  # a server stopped mid-validation: validate them again
            validator = Validator(store, config, league.id, entered)
            scrimmager = Scrimmager(store, config, league.id, paused=lambda: validator is not None and (
                validator.runtime_problem is not None or not validator.checked.is_set()))
            if start_helpers:
                validator.start()
                scrimmager.start()
            if scrimmaging is not None:
                scrimmaging(scrimmager)
            if started is not None:
                started(league.id, entered, validator, store)
            validator.checked.wait(RUNTIME_RETRY)  # no game before the runtime is known to load
            final_again = 0.0  # a final that left games unplayed is played again from then (0: not waiting)
            backoff = {True: Backoff(), False: Backoff()}  # the final's, the ladder's
            while True:
                entered.clear()
                summary = RunSummary(config.name, db)
                if validator.runtime_problem is not None and validator.is_alive():  # every numpy bot would crash
                    entered.wait(RETRY)  # until the runtime loads again (the validator checks it)
                    continue
                final = finals.due(store, config, db)  # an organiser started the course's final: it plays first
                if final is None:
                    final_again, backoff[True] = 0.0, Backoff()
                elif time.monotonic() < final_again:
                    final = None  # (its last pass left games unplayed: they do not hold up the ladder's own games)
                try:
                    if final is not None:
                        summary = RunSummary(final.name, db)
                        # (no file of its own: the final's field is copied from the ladder's stored bots)
                        run_pass(store, final, summary, concurrency=n, snapshots={})
                    else:
                        run_pass(store, config, summary, concurrency=n, snapshots=snapshots, yield_to=entered)
                except OSError as exc:  # out of open files (starting a worker): this pass again, a little later
                    if not out_of_files(exc):
                        raise
                    log.warning("arena serve: out of open files (%s); the league waits %g s and goes on", exc,
                                RETRY)
                    entered.wait(RETRY)
                    continue
                if summary.interrupted:
                    break
                if final is not None and not summary.errors + summary.overloaded:
                    entered.set()  # the final is played: the ladder's own pass next, at once
                unplayed = summary.errors + summary.overloaded
                pause = backoff[final is not None].after(bool(unplayed), summary.played)
                if unplayed:  # (league run says "run it again": here the next pass, after a pause, does)
                    print(f"arena serve: {len(unplayed)} games could not be played (first: {shown(unplayed[0])}); "
                          f"retried in {pause:g} s", file=sys.stderr, flush=True)
                if final is not None:
                    final_again = time.monotonic() + pause if unplayed else 0.0
                    if unplayed:
                        continue  # the ladder's own pass now, the final again after the pause
                if unplayed:  # (the final's retry, when it comes first, ends the pause)
                    entered.wait(max(0.0, min(pause, final_again - time.monotonic())) if final_again else pause)
                    continue
                while not entered.wait(1.0) and not 0.0 < final_again <= time.monotonic():
                    pass
    except Interrupted as stop:
        summary.interrupted = stop.name
    finally:
        if validator is not None:
            validator.stop()
        if scrimmager is not None:
            scrimmager.stop()
    return summary
