"""Scrimmages: unrated games a student asks for between their side's current bot and another side's (docs/server.md).

A side is a team or an account in no team (:mod:`leaderboards.teams`). A request names the other side and a number
of games (1 to :data:`MAX_GAMES`); each side may ask :data:`PER_HOUR` an hour. The games are played by
:class:`Scrimmager`, a thread of ``arena serve`` with one sandboxed worker process of its own (the
:class:`arena.league.workers.LocalBackend` the ladder and the validator use, each game a
:func:`arena.league.planning.make_task` as the ladder's are), one scrimmage at a time, oldest first, so a queue of
scrimmages never holds up the ladder's games, the validator or a page. Games alternate the seats (each game of the
league that both bots play, from both seats, in turn) and are stored in ``scrimmage_games``, never in ``games``: the
ladder's ratings, schedule and leaderboard never read them. A server stopped mid-scrimmage plays its missing games
at the next start (a game number is stored once).
"""
from __future__ import annotations

import hashlib
import logging
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.league.config import LeagueConfig
from arena.league.planning import make_task, task_limits
from arena.league.schedule import Fixture
from arena.league.task import Task, TaskFailure, TaskResult
from arena.league.workers import LocalBackend
from arena.server.connections import out_of_files
from leaderboards import accounts as acc
from leaderboards import teams as tm
from leaderboards.store import Bot, Store

MAX_GAMES = 20
"""Games one scrimmage may ask for: enough to tell two bots apart roughly (20 games from both seats), few enough
that one request does not hold the queue for long (Colosseum at 2 s a move: ~20 min)."""
PER_HOUR = 3
"""Scrimmages a side (a team, or an account in no team) may ask for in any hour: one worker plays every side's
scrimmages in turn, so 3 x 20 games an hour per side keeps a class of 50 teams' queue within what one worker plays
of short games, and a side cannot crowd the others out (more: HTTP 429, as uploads past their hourly limit)."""
RETRY = 5.0
"""Seconds before a game the referee could not play (an overloaded machine, no open file free) is tried again."""
TRIES = 3
"""Plays of one game that the referee could not finish before its scrimmage is marked failed."""
log = logging.getLogger("arena.serve")


@dataclass(frozen=True)
class Refusal:
    """A request refused: its HTTP status and its one line (``retry_after``: seconds, for a 429)."""

    status: int
    error: str
    retry_after: int | None = None


def scrimmage_games(config: LeagueConfig, bot: Bot, other: Bot) -> list[str]:
    """The league's games a scrimmage of these two bots plays: two-player games both of them play."""
    return [g for g in config.games if config.seats(g) == 2 and bot.plays(g) and other.plays(g)]


def playable(store: Store, league_id: int, name: str) -> Bot | None:
    """A side's current bot when it may play a scrimmage (a submitted bot, active in the ladder), else None."""
    bot = store.current_bot(league_id, name)
    return bot if bot is not None and bot.origin == "submit" and bot.status == "active" else None


def ask(store: Store, config: LeagueConfig, league_id: int, account: acc.Account, opponent: str, games: str | int,
        now: float | None = None) -> int | Refusal:
    """Queues a scrimmage of ``account``'s side against the side named ``opponent``: its id, or a refusal."""
    now = time.time() if now is None else now
    try:
        n = int(str(games).strip())
    except ValueError:
        return Refusal(400, f"the number of games must be a whole number from 1 to {MAX_GAMES}")
    if not 1 <= n <= MAX_GAMES:
        return Refusal(400, f"the number of games must be from 1 to {MAX_GAMES} (asked: {n})")
    side = tm.side_of(store, account)
    opponent = str(opponent).strip()
    if opponent == side.name:
        return Refusal(400, "a scrimmage is against another team's bot, not your own")
    other = tm.side_named(store, league_id, opponent)
    theirs = playable(store, league_id, opponent) if other is not None else None
    if theirs is None:
        return Refusal(404, "no team or student of this league has a bot of that name in the ladder now")
    mine = playable(store, league_id, side.name)
    if mine is None:
        return Refusal(409, "your bot is not in the ladder now (none accepted yet, on probation or withdrawn): "
                            "a scrimmage plays your current bot")
    if not scrimmage_games(config, mine, theirs):
        return Refusal(409, "this league has no two-player game that both bots play: no scrimmage to play")
    sid = tm.add_scrimmage(store, league_id, account.id, side.name, opponent, mine.id, theirs.id, n,
                           per_hour=PER_HOUR, now=now)
    if sid:
        return sid
    times = tm.scrimmage_times(store, league_id, side.name, now - 3600)
    after = times[len(times) - PER_HOUR] + 3600 if len(times) >= PER_HOUR else now
    clock = time.strftime("%H:%M:%S", time.gmtime(after))
    return Refusal(429, f"at most {PER_HOUR} scrimmages an hour for your {'team' if side.is_team else 'bot'}; "
                        f"try again after {clock} UTC (in {max(1, round((after - now) / 60))} min)",
                   max(1, int(after - now + 0.999)))


def may_see(store: Store, account: acc.Account | None, s: tm.Scrimmage) -> bool:
    """Only the two sides (their members today) and the organisers see a scrimmage."""
    if account is None or account.league_id != s.league_id:
        return False
    return account.organiser or s.involves(tm.side_of(store, account).name)


def outcome(g: Any, seat: int) -> str:
    """won, lost or draw for the bot at ``seat``."""
    mine = g.returns[seat]
    best = max((r for i, r in enumerate(g.returns) if i != seat), default=mine)
    return "won" if mine > best else "lost" if mine < best else "draw"


def document(store: Store, s: tm.Scrimmage) -> dict[str, Any]:
    """``GET /api/scrimmages/ID``: the request, its status and every game played so far (scores from the asking
    side's view: its wins, draws and losses)."""
    games = tm.scrimmage_games(store, s)
    played = []
    tally = {"won": 0, "draw": 0, "lost": 0}
    for g in games:
        seat = g.seats.index(s.bot_id) if s.bot_id in g.seats else 0
        result = outcome(g, seat)
        tally[result] += 1
        played.append({"number": g.id, "game": g.game, "seats": [s.side if b == s.bot_id else s.opponent
                                                                 for b in g.seats],
                       "returns": g.returns, "terminations": g.terminations, "result": result})
    return {"id": s.id, "side": s.side, "opponent": s.opponent, "games": s.games, "status": s.status,
            "reason": s.reason, "asked": s.created, "wins": tally["won"], "draws": tally["draw"],
            "losses": tally["lost"], "played": played}


class Scrimmager(threading.Thread):
    """Plays queued scrimmages one at a time in a sandboxed worker process of its own."""

    def __init__(self, base: Store, config: LeagueConfig, league_id: int,
                 paused: Callable[[], bool] = lambda: False) -> None:
        super().__init__(name="arena-scrimmages", daemon=True)
        self.base, self.config, self.league_id, self.paused = base, config, league_id, paused
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.backend: LocalBackend | None = None
        self.limits = task_limits(config)
        self.error: str | None = None

    def run(self) -> None:
        try:
            with self.base.another() as store:  # (never a second Store.open in this process)
                tm.requeue_scrimmages(store, self.league_id)  # a server stopped mid-scrimmage
                while not self.stopping.is_set():
                    if self.paused():  # the bot packages do not load in the sandbox: every game would crash
                        self.stopping.wait(RETRY)
                        continue
                    s = tm.claim_scrimmage(store, self.league_id)
                    if s is None:
                        self.wake.wait(1.0)
                        self.wake.clear()
                        continue
                    self.play_all(store, s)
        except Exception:  # noqa: BLE001 - on the server's log; the scrimmages stay queued for a restart
            if not self.stopping.is_set():
                self.error = traceback.format_exc()
                print(f"arena serve: the scrimmage player stopped: {self.error}", flush=True)

    def play_all(self, store: Store, s: tm.Scrimmage) -> None:
        bots = {s.bot_id: store.bot(s.bot_id), s.opponent_bot_id: store.bot(s.opponent_bot_id)}
        out = next((b for b in bots.values() if acc.taken_out(b.status, b.status_reason)), None)
        if out is not None:  # withdrawn or revoked since the request: an organiser took it out, it plays no more
            tm.finish_scrimmage(store, s.id, "failed", f"{out.name} was taken out of the league ({out.status_reason})")
            return
        games = scrimmage_games(self.config, bots[s.bot_id], bots[s.opponent_bot_id])
        if not games:
            tm.finish_scrimmage(store, s.id, "failed", "no two-player game of the league that both bots play")
            return
        snapshots = {b.id: store.snapshot(b.id) for b in bots.values() if b.kind == "file"}
        done = tm.played_numbers(store, s.id)
        for number in range(s.games):
            if number in done:
                continue
            task = self.task(s, number, games, bots, snapshots)
            tries = 0
            while True:
                if self.stopping.is_set():
                    return  # left `playing`: queued again by the next start, its stored games kept
                result = self.play(task)
                if not isinstance(result, TaskFailure):
                    tm.add_scrimmage_game(store, s.id, number, list(task.seats), result.to_dict())
                    break
                tries += 1
                if tries >= TRIES:
                    tm.finish_scrimmage(store, s.id, "failed", f"game {number + 1} could not be played: "
                                                               f"{result.error}")
                    return
                self.stopping.wait(RETRY)
        tm.finish_scrimmage(store, s.id, "done")

    def task(self, s: tm.Scrimmage, number: int, games: list[str], bots: dict[int, Bot],
             snapshots: dict[int, Any]) -> Task:
        """Game ``number``: the league's games in turn, each from both seats (the same deal: the same seed)."""
        pair = (s.bot_id, s.opponent_bot_id)
        seats = pair if number % 2 == 0 else pair[::-1]
        game = games[(number // 2) % len(games)]
        digest = hashlib.sha256(f"{self.config.seed}/scrimmage/{s.id}/{number // 2}".encode()).digest()
        seed = int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
        fixture = Fixture(f"scrimmage-{s.id}-{number:03d}", game, number, tuple(sorted(pair)), number % 2, seats,
                          seed)
        # chance_key None: each game draws a fresh key, so a scrimmage tells nothing of the ladder's keyed chance
        return make_task(fixture, bots, self.config, None, snapshots, self.limits)

    def play(self, task: Task) -> TaskResult:
        while True:
            if self.backend is None:
                self.backend = LocalBackend(1)
            try:
                for item in self.backend.execute(iter([task])):
                    if item is not None:
                        return item[1]
                return TaskFailure("the scrimmage worker returned nothing")
            except OSError as exc:  # out of open files starting the worker: the same game, a little later
                if not out_of_files(exc):
                    raise
                log.warning("arena serve: out of open files (%s); scrimmages wait %g s", exc, RETRY)
                self.backend.close()
                self.backend = None
                if self.stopping.wait(RETRY):
                    return TaskFailure("stopped")
            finally:
                if self.backend is not None:
                    self.backend.columns.pop(task.key, None)

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        backend = self.backend  # (read once: the thread may drop it meanwhile, check_runtime does)
        if backend is not None:
            backend.close()
