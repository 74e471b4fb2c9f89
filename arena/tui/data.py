"""The dashboard's data side: plain view models built from the store, on a worker thread.

:class:`StoreReader` owns one read-only store connection (SQLite connections stay on the thread that made
them, so each worker makes its own reader). :meth:`StoreReader.poll` is cheap when nothing changed (one
``PRAGMA data_version`` plus one indexed aggregate), and builds a :class:`Snapshot` when something did.
The UI thread only receives finished snapshots; it never touches SQLite.

The view models hold display text: every name, file name and failure text from the store is
:func:`arena.text.shown` here (control characters escaped), so no widget ever draws a raw one. League names
stay exact (they select the league) and are escaped where they are drawn.
"""
from __future__ import annotations

import sqlite3
import time
from array import array
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from rich.text import Text

from arena.errors import ArenaError
from arena.league.config import stored_relaxed
from arena.league.progress import describe, read_progress
from arena.output.brackets import tournament
from arena.output.views import Standing, batch_elo, percentile, standing, standings, verdict
from arena.results.moves import failure_move
from arena.results.records import Failure
from arena.text import shown
from arena.tui.bracket import bracket_text
from arena.tui.format import excerpt, histogram
from leaderboards import lock
from leaderboards.ratings import ALL, conservative
from leaderboards.store import Bot, League, Store, StoreError
from leaderboards.store_views import HistoryRow

RECENT_GAMES = 200
"""Rows in the games list."""
DETAIL_GAMES = 500
"""Newest games a bot's move-time distribution is taken from."""
ELO_MAX_GAMES = 20_000
"""Leagues up to this many games get the batch Elo on the bot detail (fitted when the screen opens)."""


class Unavailable(Exception):
    """The store cannot be shown; ``message`` says why and what to do. ``final``: polling again won't help."""

    def __init__(self, message: str, *, final: bool = False, leagues: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.final = final
        self.leagues = leagues or []
        """The store's leagues, when the problem is an unknown league name (so the picker can still work)."""


@dataclass(frozen=True)
class LeaderRow(Standing):
    """One leaderboard line: the CLI's, exports' and server's :class:`arena.output.views.Standing` (its batch Elo
    filled once fitted: ``fitted``), with the trend sparkline on top. Nothing of the row is restated here."""

    trend: tuple[float, ...] = ()
    """mu - 3 sigma after each of the bot's rated games, oldest first."""

    @classmethod
    def of(cls, row: Standing, trend: tuple[float, ...] = ()) -> LeaderRow:
        return cls(**{f.name: getattr(row, f.name) for f in fields(Standing)}, trend=trend)

    @property
    def label(self) -> str:
        """The bot's label as the terminal shows it (:func:`arena.text.shown`: a bot's name is its author's text)."""
        return shown(self.bot)

    def standing(self) -> Standing:
        """The row without its trend: what the CLI prints for the bot."""
        return Standing(**{f.name: getattr(self, f.name) for f in fields(Standing)})


@dataclass(frozen=True)
class GameRow:
    id: int
    game: str
    players: tuple[str, ...]
    result: str
    """``uct won``, ``draw``..."""
    reason: str
    moves: int
    duration: float

    @property
    def winner(self) -> str:
        """The result in one short word: the winner's name, ``draw``, or the joint winners."""
        return self.result.removesuffix(" won")


@dataclass
class Snapshot:
    """Everything the three tabs show, for one (league, scope) selection."""

    path: str
    leagues: list[str]
    league: str
    scopes: list[str]
    """``*`` plus every game spec of the league."""
    scope: str
    n_games: int
    leaderboard: list[LeaderRow]
    games: list[GameRow]
    h2h: dict[tuple[int, int], tuple[int, int, int]] = field(default_factory=dict)
    """(bot a, bot b) -> (a's wins, draws, a's losses) against b."""
    trends_complete: bool = True
    """False while the trend sparklines are still being read (they then end early)."""
    trends_note: str = ""
    """Why there are no trends at all (a schema 1 store), else empty."""
    provisional: int = 0
    """Games rated out of schedule order while earlier ones are outstanding (a bot entered mid-league): the
    ratings are provisional until the store recomputes them at the end."""
    prepared: dict[str, Any] = field(default_factory=dict)
    """Table cells built on the worker thread (:func:`arena.tui.tables.prepare`), by table name."""
    running: str = ""
    """A league runner playing this store now: its progress (``12/40 games (30%), ...``), else empty."""
    relaxed: list[str] = field(default_factory=list)
    """What the league turned off in the sandbox (:func:`arena.league.config.stored_relaxed`; raw, from the store's
    league config), else empty: the dashboard says so above the tables as the CLI leaderboard does."""
    bracket: Text | None = None
    """A tournament league's Bracket tab (:func:`arena.tui.bracket.bracket_text`, built on the poller's thread);
    None for a round robin or a gauntlet (the tab is hidden)."""

    @property
    def labels(self) -> dict[int, str]:
        return {row.bot_id: row.label for row in self.leaderboard}


@dataclass
class BotDetail:
    """The bot detail screen."""

    bot_id: int
    label: str
    kind: str
    spec: str | None
    filename: str | None
    source_head: str
    status: str
    status_reason: str
    trusted: bool
    limits: dict[str, Any]
    games: list[str] | None
    rating: LeaderRow | None
    n_moves: int
    percentiles: dict[str, float]
    hist: list[int]
    hist_range: tuple[float, float]
    n_games: int
    failures: list[tuple[int, str, int, str]]
    """(game id, reason, move number, stderr excerpt), newest first."""
    version: int = 1
    versions: list[tuple[str, str, int]] = field(default_factory=list)
    """Every version of the bot's name, oldest first: (label, status, rated games in all games)."""
    elo: dict[str, Any] | None = None
    """The batch Elo with its 95% interval, rank range and tied group (:func:`leaderboards.elo.annotate`), or None
    (no games, or a league too big to fit while the screen opens)."""


@dataclass
class ReplayData:
    id: int
    spec: str
    history: list[int]
    players: list[str]
    returns: list[float]
    terminations: list[str]
    failures: list[Failure]
    wall_times: list[float] = field(default_factory=list)
    """Seconds of each bot move, in order (chance outcomes have none)."""
    moves: int = 0
    """Bot moves (the games list's count; a failed move included)."""
    opening: int = 0
    """Actions of the league's opening at the start of the history (chosen by nobody, untimed)."""
    time_control: str | None = None
    """The game clocks' time control, or None for a game without them."""
    clock_readings: list[float | None] = field(default_factory=list)
    """With game clocks: the mover's clock after each bot move (:attr:`StoredGame.clock_readings`)."""


def short_spec(spec: str) -> str:
    """A game spec without its ``seed`` parameter, for narrow columns (the replay shows the full spec).

    >>> short_spec("nim(seed=2832099861741452824)"), short_spec("hex(size=5,seed=7,pie=true)")
    ('nim', 'hex(size=5,pie=true)')
    """
    name, _, rest = spec.partition("(")
    if not rest:
        return spec
    params = [p for p in rest.rstrip(")").split(",") if p.strip() and not p.strip().startswith("seed=")]
    return f"{name}({','.join(params)})" if params else name


def reason_text(terminations: list[str]) -> str:
    """``normal``, or the failures with their seats: ``timeout@1``."""
    bad = [f"{t}@{i}" for i, t in enumerate(terminations) if t != "normal"]
    return ", ".join(bad) if bad else "normal"


def game_row(g: Any, labels: dict[int, str], moves: int | None = None) -> GameRow:
    """A games-list row of a stored game or a game summary; names shown literally."""
    players = [labels.get(b, shown(p)) for b, p in zip(g.seats, g.players)]
    return GameRow(g.id, shown(short_spec(g.game)), tuple(players), verdict(g.returns, players),
                   reason_text(g.terminations), g.moves if moves is None else moves, g.duration)


class TrendHistory:
    """mu - 3 sigma per (scope, bot) after each rated game, read from the store's rating history.

    The store keeps each seat's rating after each rated game (schema 2), in the order the current ratings
    were folded, so no TrueSkill runs here: a big league is read in chunks of ``CHUNK`` games, for up to
    ``budget`` seconds per call, while the leaderboard already shows the stored ratings; afterwards each
    call reads only the newly rated games. When the store rewrites its history (a recomputation after a
    resumed run or a late entrant numbers every game anew) the series are read again from the start, so
    a sparkline always ends at the stored rating.
    """

    CHUNK = 5_000

    def __init__(self) -> None:
        self.catch_ups = 0
        """Updates that ended caught up after reading something (never reset): part of the poller's change
        token, so finished trends make a new snapshot but each slice of a long initial load does not."""
        self.reset(None)

    def reset(self, league_id: int | None) -> None:
        self.league_id = league_id
        self.start: int | None = None
        """The first sequence number of the history that was read (the store's generation of it)."""
        self.last_seq = 0
        self.ready = False
        """Everything rated was read by the last update (then new games are read before each snapshot)."""
        self.series: dict[tuple[str, int], array[float]] = {}
        self._tuples: dict[tuple[str, int], tuple[float, ...]] = {}

    def update(self, store: Store, league_id: int, budget: float = 0.2) -> bool:
        """Reads newly rated games for up to ``budget`` seconds; True when some are still left."""
        if league_id != self.league_id:
            self.reset(league_id)
        if not store.has_history:
            return False
        deadline = time.perf_counter() + budget
        while True:
            with store.read_transaction():  # the check and the chunk from one state of the store
                start, end = store.history_bounds(league_id)
                if start != self.start:  # rewritten (or first read): read again from the beginning
                    self.reset(league_id)
                    self.start = start
                if end is None or self.last_seq >= end:
                    self.ready = True
                    return False
                upto = store.seq_after(league_id, self.last_seq, self.CHUNK) or end
                rows = store.rating_history(league_id, self.last_seq, upto)
            self._add(rows)
            self.last_seq = upto
            if upto >= end:
                self.ready = True
                self.catch_ups += 1
                return False
            self.ready = False
            if time.perf_counter() > deadline:
                return True

    def _add(self, rows: list[HistoryRow]) -> None:
        series = self.series
        for r in rows:
            for key, value in (((ALL, r.bot_id), conservative(r.mu, r.sigma)),
                               ((r.game, r.bot_id), conservative(r.game_mu, r.game_sigma))):
                values = series.get(key)
                if values is None:
                    values = series[key] = array("d")
                values.append(value)

    def complete(self, store: Store, league_id: int) -> bool:
        """Whether every rated game of the league has been read."""
        if not store.has_history:
            return True
        end = store.history_bounds(league_id)[1]
        return self.league_id == league_id and (end is None or self.last_seq >= end)

    def trend(self, scope: str, bot_id: int) -> tuple[float, ...]:
        key = (scope, bot_id)
        values = self.series.get(key)
        if values is None:
            return ()
        cached = self._tuples.get(key)
        if cached is None or len(cached) != len(values):  # only the bots of new games are copied again
            cached = self._tuples[key] = tuple(values)
        return cached


NO_HISTORY = "no trends (schema 1 store: any writer, e.g. `arena league run`, upgrades it)"


class StoreReader:
    """Reads one store file for the dashboard. Not thread-safe: one reader per worker thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.store: Store | None = None
        self.trends = TrendHistory()
        self._token: tuple[Any, ...] | None = None
        self._h2h: dict[tuple[int, int], tuple[int, int, int]] = {}
        self._h2h_for: tuple[int, str] | None = None
        self._h2h_last = 0
        """The newest game id counted in ``_h2h``: later polls add only newer games (milliseconds, where counting
        every game again takes 1.3 s at 100k)."""

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def _open(self) -> Store:
        if self.store is None:
            if not self.path.exists():
                raise Unavailable(f"No results store at {self.path}.\n\nStart a league with `arena league run "
                                  "CONFIG.toml` or `arena demo`; a league's store: `arena tui --league FILE`, or "
                                  "--db PATH.\nWaiting for the file to appear…")
            try:
                self.store = Store.open(self.path, readonly=True)
            except StoreError as exc:
                # a newer schema stays newer; anything else may be a store still being created: poll on
                raise Unavailable(f"Cannot read {self.path}:\n\n{exc}", final="newer" in str(exc)) from None
            except (ArenaError, sqlite3.Error) as exc:
                raise Unavailable(f"Cannot read {self.path}:\n\n{exc}") from None
        return self.store

    def _league(self, store: Store, name: str | None) -> tuple[list[League], League]:
        leagues = store.leagues()
        if not leagues:
            raise Unavailable(f"The store at {self.path} holds no league yet.\n\nRun `arena league run CONFIG.toml` "
                              "to start one; this dashboard shows it as soon as it exists.")
        if name is None:
            return leagues, leagues[0]
        for league in leagues:
            if league.name == name:
                return leagues, league
        names = [lg.name for lg in leagues]
        raise Unavailable(f"No league {name!r} in {self.path}.\n\nLeagues: {', '.join(names)} (press l to pick one).",
                          leagues=names)

    def poll(self, league: str | None, scope: str, *, force: bool = False, h2h: bool = True,
             limit: int = RECENT_GAMES) -> Snapshot | None:
        """A new snapshot when the store, the folded trends or the selection changed since the last poll, else
        None. ``h2h`` False reuses the last head-to-head counts (the costliest query) while that tab is hidden.

        Raises:
            Unavailable: the store is missing, empty, unreadable or from a newer arena.
        """
        try:
            store = self._open()
            running = self.running()
            version = (store.change_token(), running)
            if not force and self._token is not None and self._token[1:] == (league, scope, version, h2h,
                                                                            self.trends.catch_ups, limit):
                return None
            leagues, current = self._league(store, league)
            if self.trends.ready and self.trends.league_id == current.id:
                self.trends.update(store, current.id, budget=0.05)  # the new games' points, in this snapshot
            snapshot = self._snapshot(store, leagues, current, scope, h2h, limit)
            snapshot.running = running
        except sqlite3.Error as exc:  # a store being created under us: try again next poll
            self.close()
            raise Unavailable(f"Cannot read {self.path}: {exc}") from None
        self._token = (current.id, league, scope, version, h2h, self.trends.catch_ups, limit)
        return snapshot

    def running(self) -> str:
        """The progress of a league runner holding this store's lock (docs/report.md, "Progress"), else ""."""
        if lock.holder(self.path) is None:
            return ""
        data = read_progress(self.path)
        return "league run: " + (describe(data) if data else "playing (no progress yet)")

    def load_trends(self, budget: float = 0.2) -> bool:
        """Catches the trend sparklines up for up to ``budget`` seconds; True when more is left to read."""
        if self.store is None or self._token is None:
            return False
        try:
            return self.trends.update(self.store, self._token[0], budget)
        except sqlite3.Error:
            return False

    def _snapshot(self, store: Store, leagues: list[League], league: League, scope: str, h2h: bool,
                  limit: int = RECENT_GAMES) -> Snapshot:
        scopes = [ALL] + [s for s in store.scopes(league.id) if s != ALL]
        for spec in league.config.get("games", []) or []:  # game specs with no rated game yet
            if isinstance(spec, str) and spec not in scopes:
                scopes.append(spec)
        if scope not in scopes:
            scope = ALL
        if league.id != self.trends.league_id:
            self.trends.reset(league.id)
        rows = [LeaderRow.of(r, self.trends.trend(scope, r.bot_id))
                for r in standings(store, league.id, scope=scope, dashboard=True)]
        bots = {b.id: b for b in store.bots(league.id)}
        elo = self._batch_elo(store, league.id, scope, rows)
        rows = [replace(r, fitted=True, **elo[r.bot_id]) for r in rows]  # (views.with_elo's, from the cached fit)
        labels = {b.id: shown(b.label) for b in bots.values()}
        games = [game_row(g, labels) for g in store.recent_games(league.id, scope, limit or RECENT_GAMES)]
        if h2h:
            if self._h2h_for != (league.id, scope):
                self._h2h, self._h2h_for, self._h2h_last = {}, (league.id, scope), 0
            with store.read_transaction():  # the counts and the id they reach from one state
                new, last = store.head_to_head_since(league.id, scope, self._h2h_last)
            if new:
                counts = dict(self._h2h)  # a new dict: the UI thread may still hold the last snapshot's
                for pair, (w, d, l) in new.items():
                    old = counts.get(pair, (0, 0, 0))
                    counts[pair] = (old[0] + w, old[1] + d, old[2] + l)
                self._h2h = counts
            self._h2h_last = last
        elif self._h2h_for != (league.id, scope):  # hidden and stale: not worth a query until shown
            self._h2h, self._h2h_for = {}, None
        return Snapshot(str(self.path), [lg.name for lg in leagues], league.name, scopes, scope,
                        store.count_games(league.id, scope), rows, games, self._h2h,
                        self.trends.complete(store, league.id), "" if store.has_history else NO_HISTORY,
                        store.count_provisional(league.id) if store.has_history else 0,
                        relaxed=stored_relaxed(league.config), bracket=self._bracket(store, league))

    def _bracket(self, store: Store, league: League) -> Text | None:
        """The Bracket tab's text of a tournament league (the whole league's: a scope does not split a match)."""
        t = tournament(store, league, draw=False)
        return None if t is None else bracket_text(t)

    _elo_for: tuple[Any, ...] = ()
    _elo_cells: dict[int, dict[str, Any]] = {}  # noqa: RUF012 - replaced, never mutated
    _elo_at = 0.0
    _elo_cost = 0.0

    def _batch_elo(self, store: Store, league_id: int, scope: str,
                   rows: list[LeaderRow]) -> dict[int, dict[str, Any]]:
        """The batch Elo of the rows' bots, refitted when the games changed, but while games keep coming at most once
        per ten times its own cost (100,000 games take about a second to fit)."""
        key = (league_id, scope, tuple(r.bot_id for r in rows))
        count = store.count_games(league_id, scope)
        fresh = key == self._elo_for[:3]
        if fresh and (count == self._elo_for[3] or time.monotonic() - self._elo_at < 10 * self._elo_cost):
            return self._elo_cells
        started = time.monotonic()  # (numpy loads here, on the poller's thread, the first time)
        self._elo_cells = batch_elo([r.bot_id for r in rows], store.outcomes(league_id, scope))
        self._elo_for, self._elo_at = (*key, count), time.monotonic()
        self._elo_cost = self._elo_at - started
        return self._elo_cells

    # -- on demand -------------------------------------------------------------------------------
    def games_of(self, bot_id: int, *, opponent: int | None = None, failed: bool = False,
                 scope: str = ALL) -> list[GameRow]:
        """The games behind a number: ``bot_id``'s games against ``opponent`` (a head-to-head cell), or the ones
        it failed in (a failure count); newest first, in ``scope`` (``*`` or one game spec)."""
        store = self._open()
        try:
            bot = store.bot(bot_id)
        except KeyError:
            raise Unavailable(f"no bot {bot_id} in {self.path}") from None
        labels = {b.id: shown(b.label) for b in store.bots(bot.league_id)}
        out = []
        for g in store.iter_games(bot.league_id, bot_id=bot_id):
            if scope != ALL and g.base_game != scope:
                continue
            mine = {seat for seat, b in enumerate(g.seats) if b == bot_id}
            if opponent is not None and opponent not in g.seats:
                continue
            if failed and not any(f.seat in mine for f in g.failures):
                continue
            out.append(game_row(g, labels, moves=len(g.move_seats)))
        out.reverse()
        return out

    def replay(self, game_id: int) -> ReplayData:
        store = self._open()
        game = store.game(game_id)
        if game is None:
            raise Unavailable(f"no game {game_id} in {self.path}")
        labels = {}
        for bot_id in game.seats:
            try:
                labels[bot_id] = store.bot(bot_id).label
            except KeyError:
                pass
        players = [shown(labels.get(b, p)) for b, p in zip(game.seats, game.players)]
        return ReplayData(game.id, game.game, game.history, players, game.returns, game.terminations, game.failures,
                          game.wall_times, len(game.move_seats), len(game.info.get("opening", ())),
                          shown(str(game.info["time_control"])) if game.clock_readings else None, game.clock_readings)

    def bot_detail(self, bot_id: int, scope: str = ALL) -> BotDetail:
        store = self._open()
        try:
            bot = store.bot(bot_id)
        except KeyError:
            raise Unavailable(f"no bot {bot_id} in {self.path}") from None
        league = next((lg for lg in store.leagues() if lg.id == bot.league_id), None)
        limits = dict(league.config.get("limits", {}) or {}) if league else {}
        rating = store.ratings(bot.league_id, scope).get(bot_id)
        row = LeaderRow.of(standing(0, bot, rating), self.trends.trend(scope, bot_id)) if rating else None
        times: list[float] = []
        failures: list[tuple[int, str, int, str]] = []
        played = store.bot_moves(bot_id, DETAIL_GAMES)
        for g in played:
            mine = {seat for seat, b in enumerate(g.seats) if b == bot_id}
            times.extend(t for s, t in zip(g.move_seats, g.wall_times) if s in mine)
            for f in g.failures:
                if f.seat in mine:
                    failures.append((g.id, shown(f.reason), failure_move(f), excerpt(shown(f.detail, lines=True))))
        times.sort()
        pct = {f"p{q}": float(percentile(times, q) or 0.0) for q in (50, 90, 99)} if times else {}
        if times:
            pct["max"] = times[-1]
        hist, lo, hi = histogram(times, 16)
        source_head = "\n".join((bot.source or "").splitlines()[:8])
        return BotDetail(bot.id, shown(bot.label), bot.kind, None if bot.spec is None else shown(bot.spec),
                         None if bot.filename is None else shown(bot.filename), shown(source_head, lines=True),
                         bot.status, shown(bot.status_reason), bot.trusted, limits,
                         None if bot.games is None else [shown(g) for g in bot.games], row, len(times), pct, hist,
                         (lo, hi),
                         len(played), failures, bot.version, self._versions(store, bot),
                         self._elo(store, bot, scope))

    @staticmethod
    def _elo(store: Store, bot: Bot, scope: str) -> dict[str, Any] | None:
        """This version's batch Elo among the league's current bots (as `arena leaderboard` shows it)."""
        if store.count_games(bot.league_id, scope) > ELO_MAX_GAMES:
            return None
        ids = [b.id for b in store.bots(bot.league_id, include_retired=False)]
        if bot.id not in ids:
            ids.append(bot.id)
        games = store.outcomes(bot.league_id, scope)
        if not any(bot.id in seats for _, seats, _ in games):
            return None
        try:
            return {"bot_id": bot.id, **batch_elo(ids, games)[bot.id]}
        except (ValueError, ArithmeticError, KeyError, StopIteration):  # a fit that does not converge: no line
            return None

    @staticmethod
    def _versions(store: Store, bot: Bot) -> list[tuple[str, str, int]]:
        """Every version of ``bot``'s name with its status and rated games (the detail says which is shown)."""
        ratings = store.ratings(bot.league_id)
        return [(shown(b.label), b.status, ratings[b.id].games if b.id in ratings else 0)
                for b in store.bots(bot.league_id) if b.name == bot.name]
