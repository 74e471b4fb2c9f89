"""The one view model of a league's results: the leaderboard, the head-to-head, a bot's page and the game list, as
typed rows read from the store.

Every front end renders these rows and computes none of its own: the CLI tables (``arena leaderboard``, ``arena
league run``'s summary), the exports and ``--json`` (:meth:`Standing.as_json`), the HTML report (its Jinja2
templates), the dashboard (which adds its trend sparklines on top) and the web pages of ``arena serve``.

Values stay exact (a bot's name as stored, never escaped here): each front end shows them its own way (the
terminal through :func:`arena.text.shown`, HTML through autoescape, CSV through :func:`arena.text.csv_cell`).
"""
from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from arena.results.moves import failure_move, failure_where
from arena.results.outcome import COUNTERS, seat_results
from leaderboards.accounts import taken_out
from leaderboards.ratings import ALL, BotRating, leaderboard_order
from leaderboards.store import Bot, League, Store, StoredGame

FAILURE_COUNTS = COUNTERS
"""The per-reason failure counters of a rating (:class:`leaderboards.ratings.BotRating`), in the order every
screen lists them; each is also its label (``2 timeouts, 1 crashes``): :data:`arena.results.outcome.COUNTERS`."""
SLOWEST = 10
"""Slowest moves listed per bot."""


@dataclass(frozen=True)
class Standing:
    """One leaderboard line: the bot, its TrueSkill rating, its results and failure counts, and (once
    :func:`with_elo` fitted it) its batch Elo. ``--json`` prints :meth:`as_json`."""

    rank: int
    bot: str
    """The bot's label (``name`` or ``name@v2``), exact."""
    bot_id: int
    name: str
    version: int
    kind: str
    origin: str
    spec: str | None
    """A built-in bot's spec, a file bot's entry file."""
    status: str
    status_reason: str | None
    plays: list[str] | None
    """The game specs the bot is limited to (its ``games`` in the league file), None for all."""
    mu: float
    sigma: float
    exposed: float
    games: int
    wins: int
    draws: int
    losses: int
    timeouts: int
    crashes: int
    illegal: int
    memory: int
    protocol: int
    failures: int
    elo: float | None = None
    elo_low: float | None = None
    elo_high: float | None = None
    rank_low: int | None = None
    rank_high: int | None = None
    group: int | None = None
    fitted: bool = field(default=False, compare=False)
    """Whether :func:`with_elo` ran (the Elo fields are then part of the row even when None: unrated)."""

    def fail_counts(self) -> list[tuple[str, int]]:
        """(label, count) of each failure reason the bot has, in :data:`FAILURE_COUNTS` order."""
        return [(k, getattr(self, k)) for k in FAILURE_COUNTS if getattr(self, k)]

    def fails_text(self) -> str:
        """``2 timeouts, 1 crashes``, or ``-`` without failures."""
        return ", ".join(f"{n} {k}" for k, n in self.fail_counts()) or "-"

    def as_json(self) -> dict[str, Any]:
        """The row as ``arena leaderboard --json`` prints it (and ``arena serve``'s /api/leaderboard serves it)."""
        # start-up: numpy (leaderboards.elo) only when a row is printed
        from leaderboards.elo import ELO_FIELDS
        out = asdict(self)
        del out["fitted"]
        if not self.fitted:
            for k in ELO_FIELDS:
                del out[k]
        return out


@dataclass(frozen=True)
class H2HCell:
    """``bot``'s results against ``opponent`` and its score rate (a draw counts half; None: they never met)."""

    bot: str
    bot_id: int
    opponent: str
    opponent_id: int
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float | None:
        n = self.games
        return (self.wins + 0.5 * self.draws) / n if n else None

    def as_json(self) -> dict[str, Any]:
        return {"bot": self.bot, "opponent": self.opponent, "wins": self.wins, "draws": self.draws,
                "losses": self.losses, "games": self.games, "win_rate": self.win_rate}


def standings(store: Store, league_id: int, *, scope: str = ALL, include_retired: bool = False,
              dashboard: bool = False) -> list[Standing]:
    """One row per bot, best first by mu - 3 sigma; a bot without a game yet has the prior rating.

    Which bots are listed: every entered bot (retired ones too with ``include_retired``). ``dashboard``: the
    dashboard's choice instead, every bot rated in ``scope`` (a retired one too: its games still count) and the
    unrated entered bots that play ``scope``, except bots an organiser took out (withdrawn, or their account
    revoked: :func:`leaderboards.accounts.taken_out`), which no ranking shows.
    """
    bots = {b.id: b for b in store.bots(league_id, include_retired=include_retired or dashboard, source=False)
            if not (dashboard and taken_out(b.status, b.status_reason))}  # (the web shows no retired bot at all)
    stored = store.ratings(league_id, scope)
    if dashboard:
        ratings = {b: r for b, r in stored.items() if b in bots}
        for bot in bots.values():
            if bot.id not in ratings and bot.status != "retired" and (scope == ALL or bot.plays(scope)):
                ratings[bot.id] = BotRating()
    else:
        ratings = {bot_id: stored.get(bot_id, BotRating()) for bot_id in bots}
    return [standing(rank, bots[bot_id], ratings[bot_id])
            for rank, bot_id in enumerate(leaderboard_order(ratings), 1)]


def standing(rank: int, bot: Bot, r: BotRating) -> Standing:
    return Standing(
        rank=rank, bot=bot.label, bot_id=bot.id, name=bot.name, version=bot.version, kind=bot.kind,
        origin=bot.origin, spec=bot.spec if bot.kind == "builtin" else bot.filename, status=bot.status,
        status_reason=bot.status_reason, plays=bot.games, mu=r.mu, sigma=r.sigma, exposed=r.exposed, games=r.games,
        wins=r.wins, draws=r.draws, losses=r.losses, **{k: getattr(r, k) for k in FAILURE_COUNTS},
        failures=r.failures)


def batch_elo(bot_ids: Sequence[int], outcomes: Sequence[tuple[str, Sequence[int], Sequence[float]]]
              ) -> dict[int, dict[str, Any]]:
    """Each bot's batch Elo among ``bot_ids``: ``elo``, its 95% interval, rank range and tied group
    (:data:`leaderboards.elo.ELO_FIELDS`, all None for a bot without games), fitted once by
    :func:`leaderboards.elo.annotate` over ``outcomes`` (:meth:`leaderboards.store.Store.outcomes`): the one fit every
    screen shows (the leaderboard, exports, the report, the dashboard's table and bot detail)."""
    # start-up: numpy only when the Elo is fitted (the dashboard defers it to its poller thread)
    from leaderboards.elo import ELO_FIELDS, annotate
    fitted = annotate([{"bot_id": b} for b in bot_ids], outcomes)
    return {int(f["bot_id"]): {k: f[k] for k in ELO_FIELDS} for f in fitted}


def with_elo(rows: Sequence[Standing], outcomes: Sequence[tuple[str, Sequence[int], Sequence[float]]]
             ) -> list[Standing]:
    """The rows with their :func:`batch_elo`."""
    fitted = batch_elo([r.bot_id for r in rows], outcomes)
    return [replace(r, fitted=True, **fitted[r.bot_id]) for r in rows]


def h2h_cells(rows: Sequence[Standing], counts: Mapping[tuple[int, int], tuple[int, int, int]]) -> list[H2HCell]:
    """The head-to-head matrix of ``rows``' bots, row by row, from (bot, opponent) -> (wins, draws, losses)
    counts (:meth:`leaderboards.store.Store.head_to_head`)."""
    return [H2HCell(a.bot, a.bot_id, b.bot, b.bot_id, *counts.get((a.bot_id, b.bot_id), (0, 0, 0)))
            for a in rows for b in rows if a.bot_id != b.bot_id]


def head_to_head(store: Store, league_id: int, rows: Sequence[Standing], *, scope: str = ALL) -> list[H2HCell]:
    """:func:`h2h_cells` of ``rows`` from the store's counts in ``scope``."""
    return h2h_cells(rows, store.head_to_head(league_id, scope))


def bot_standing(store: Store, league_id: int, bot_id: int | None) -> tuple[Standing, list[H2HCell]] | None:
    """A bot's page's rows, read to the size of the page, not of the league's history: its leaderboard line
    (ranked among every entered bot, retired ones too, by the stored ratings; without the batch Elo, whose fit
    reads every game) and its head-to-head against each opponent it met (its own seats only). None: not one of
    the league's bots."""
    rows = standings(store, league_id, include_retired=True)
    row = next((r for r in rows if r.bot_id == bot_id), None)
    if row is None:
        return None
    counts = store.head_to_head_of(row.bot_id)
    return row, [H2HCell(row.bot, row.bot_id, o.bot, o.bot_id, *counts[(row.bot_id, o.bot_id)])
                 for o in rows if (row.bot_id, o.bot_id) in counts]


@dataclass(frozen=True)
class Leaderboard:
    """A league's leaderboard in one scope: its rows (with their batch Elo) and, when asked for, the
    head-to-head."""

    league: str
    scope: str
    games: int
    """Games of the league (every scope)."""
    sandbox_relaxed: list[str]
    """What the league relaxed of the sandbox (:func:`arena.league.config.stored_relaxed`); empty: nothing."""
    rows: list[Standing]
    cells: list[H2HCell] | None = None

    def as_json(self) -> dict[str, Any]:
        """`arena leaderboard --json`'s document: league, scope, games, sandbox_relaxed, bots, head_to_head (with
        the head-to-head only)."""
        out: dict[str, Any] = {"league": self.league, "scope": self.scope, "games": self.games,
                               "sandbox_relaxed": self.sandbox_relaxed, "bots": [r.as_json() for r in self.rows]}
        if self.cells is not None:
            out["head_to_head"] = [c.as_json() for c in self.cells]
        return out


def leaderboard(store: Store, league: League, scope: str = ALL, *, include_retired: bool = False,
                h2h: bool = False) -> Leaderboard:
    """The leaderboard of ``league`` in ``scope`` (a valid scope: ``*`` or one of its game specs), its rows with
    their batch Elo, and the head-to-head with ``h2h``."""
    from arena.league.config import stored_relaxed  # start-up: the league schema (pydantic) only when needed
    rows = with_elo(standings(store, league.id, scope=scope, include_retired=include_retired),
                    store.outcomes(league.id, scope))
    return Leaderboard(league.name, scope, store.count_games(league.id), stored_relaxed(league.config), rows,
                       head_to_head(store, league.id, rows, scope=scope) if h2h else None)


def document(store: Store, league: League, scope: str = ALL, *, include_retired: bool = False,
             h2h: bool = False) -> dict[str, Any]:
    """:func:`leaderboard` as `arena leaderboard --json` prints it (and `arena serve`'s /api/leaderboard serves
    it)."""
    return leaderboard(store, league, scope, include_retired=include_retired, h2h=h2h).as_json()


# -- a bot's page and the game list ------------------------------------------------------------------------------
def verdict(returns: Sequence[float], players: Sequence[str]) -> str:
    """Who won a game, in the words every screen uses: ``alice won``, ``draw`` (every seat best) or ``alice & bob
    drew`` (several best); ``?`` without returns. A seat without a name is ``seat N``."""
    if not returns:
        return "?"
    best = [players[i] if i < len(players) else f"seat {i}"
            for i, r in enumerate(seat_results(returns)) if r != "loss"]
    return "draw" if len(best) == len(returns) else f"{' & '.join(best)} {'won' if len(best) == 1 else 'drew'}"


def result_text(g: StoredGame) -> str:
    """``alice won: alice +1, bob -1 (timeout)``: the :func:`verdict`, then each player's return, with its
    termination when it was not normal (the dashboard's narrow column shows the verdict alone)."""
    returns = ", ".join(f"{p} {r:+g}" + ("" if t == "normal" else f" ({t})")
                        for p, r, t in zip(g.players, g.returns, g.terminations))
    if not g.returns:
        return returns
    return f"{verdict(g.returns, g.players)}: {returns}"


@dataclass(frozen=True)
class BotGame:
    """One game on a bot's page: the bot's seat, return and termination, and its opponents."""

    id: int
    game: str
    seat: int
    ret: float
    termination: str
    opponents: list[str]
    result: str = ""
    """``won``, ``draw`` or ``lost`` (the only best return, one of several, or not the best)."""


RESULT_WORDS = {"win": "won", "draw": "draw", "loss": "lost"}
"""A game's result for one seat (:func:`arena.results.outcome.seat_results`) as a page says it."""


def seat_word(returns: Sequence[float], seat: int) -> str:
    """``won``, ``draw`` or ``lost`` for ``seat`` (:data:`RESULT_WORDS` of its
    :func:`~arena.results.outcome.seat_results`): the one rule every page words a bot's game by; "" without
    returns."""
    return RESULT_WORDS[seat_results(returns)[seat]] if returns else ""


@dataclass(frozen=True)
class BotFailure:
    """One failure of a bot: its game, reason, move (1-based) and detail (the tail of the bot's traceback)."""

    id: int
    game: str
    seat: int
    reason: str
    move: int
    detail: str
    where: str
    """``crash at move 3`` (:func:`arena.results.moves.failure_where`: the words every display uses)."""


@dataclass(frozen=True, order=True)
class SlowMove:
    """One of a bot's slowest moves: wall seconds, the game, the bot's move number in it, cpu seconds."""

    wall: float
    id: int
    move: int
    cpu: float


@dataclass
class BotFacts:
    """What a bot's page lists beside its :class:`Standing`, gathered in one pass over the games."""

    games: list[BotGame] = field(default_factory=list)
    failures: list[BotFailure] = field(default_factory=list)
    slowest_heap: list[SlowMove] = field(default_factory=list)

    @property
    def slowest(self) -> list[SlowMove]:
        """The :data:`SLOWEST` slowest moves, slowest first."""
        return sorted(self.slowest_heap, reverse=True)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100) of ``values`` by nearest rank; None without values."""
    if not values:
        return None
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def move_ms(wall_times: Sequence[float]) -> dict[str, float | None]:
    """p50/p90/p99/max of a game's move times in milliseconds (None without moves)."""
    out: dict[str, float | None] = {}
    for q in (50, 90, 99):
        p = percentile(wall_times, q)
        out[f"p{q}"] = None if p is None else round(1000 * p, 3)
    out["max"] = round(1000 * max(wall_times), 3) if wall_times else None
    return out


@dataclass(frozen=True)
class GameFailure:
    """A failure in a game: the seat, its bot's name, the reason, the 0-based move index and the full detail."""

    seat: int
    bot: str
    reason: str
    move_number: int
    detail: str


@dataclass(frozen=True)
class GameEntry:
    """One line of a league's game list (the report's replay picker, `arena export games`)."""

    id: int
    finished: float
    """Seconds since the epoch (UTC)."""
    game: str
    base_game: str
    round: int
    seed: int
    schedule_key: str | None
    players: list[str]
    bot_ids: list[int]
    returns: list[float]
    terminations: list[str]
    failures: list[GameFailure]
    moves: int
    """Bot decisions."""
    actions: int
    """Actions of the history, chance included."""
    wall_times: list[float]
    duration: float
    result: str
    """``alice won: alice +1, bob -1 (timeout)`` (:func:`result_text`)."""


def game_entry(g: StoredGame) -> GameEntry:
    return GameEntry(
        id=g.id, finished=g.finished, game=g.game, base_game=g.base_game, round=g.round, seed=g.seed,
        schedule_key=g.schedule_key, players=g.players, bot_ids=g.seats, returns=g.returns,
        terminations=g.terminations,
        failures=[GameFailure(f.seat, g.players[f.seat], str(f.reason), f.move_number, f.detail) for f in g.failures],
        moves=len(g.move_seats), actions=len(g.history), wall_times=g.wall_times, duration=g.duration,
        result=result_text(g))


def bot_facts(games: Iterable[StoredGame], seen: Any = None) -> tuple[dict[int, BotFacts], list[GameEntry]]:
    """One pass over a league's games (oldest first): the facts of each bot id and the game list. ``seen`` is
    called with each game on the way (the report draws the replays of the newest games in the same pass)."""
    facts: dict[int, BotFacts] = defaultdict(BotFacts)
    listing: list[GameEntry] = []
    for g in games:
        for seat, bot_id in enumerate(g.seats):
            f = facts[bot_id]
            f.games.append(BotGame(g.id, g.game, seat, g.returns[seat] if g.returns else 0,
                                   g.terminations[seat] if g.terminations else "",
                                   [p for s, p in enumerate(g.players) if s != seat],
                                   seat_word(g.returns, seat)))
            mine = [k for k, s in enumerate(g.move_seats) if s == seat]
            for n, k in enumerate(mine):
                item = SlowMove(g.wall_times[k], g.id, n + 1, g.cpu_times[k] if k < len(g.cpu_times) else 0.0)
                if len(f.slowest_heap) < SLOWEST:
                    heapq.heappush(f.slowest_heap, item)
                else:
                    heapq.heappushpop(f.slowest_heap, item)
        for fail in g.failures:
            facts[g.seats[fail.seat]].failures.append(
                BotFailure(g.id, g.game, fail.seat, str(fail.reason), failure_move(fail), fail.detail,
                           failure_where(fail)))
        listing.append(game_entry(g))
        if seen is not None:
            seen(g)
    return facts, listing

