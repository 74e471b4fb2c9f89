"""The leaderboard and the dashboard at scale: measured numbers for ``arena bench scale``.

Every function takes a store path and returns a plain dict of measurements (seconds unless the key says
otherwise); none of them asserts a target, the caller compares. :func:`synthetic_store` fills a store fast
with valid games (real random play-outs of the game, bulk inserts, real ratings and history), so a
100,000-game league can be measured without playing it; a real league's store works the same way.
:func:`dashboard_times` never writes to the store it is given: it measures on a copy.

Textual is imported only inside :func:`dashboard_times`, so this module imports without it.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import games
from arena.errors import ConfigError
from arena.league.schedule import fixture_key, league_schedule
from arena.output.views import standings
from arena.results.records import GameRecord
from games import load
from leaderboards import ledger
from leaderboards.ratings import leaderboard_order
from leaderboards.store import League, Store

LEAGUE = "scale"
"""The league :func:`synthetic_store` creates."""
SAMPLES = 64
"""Distinct real play-outs per round that synthetic games are drawn from."""
CHUNK = 20_000
"""Games per bulk-insert transaction."""


# -- a synthetic store ---------------------------------------------------------------------------------
def playouts(spec: str, seed: int, n: int, rng: random.Random) -> list[dict[str, Any]]:
    """``n`` legal games of ``spec`` (its ``seed`` parameter set as a referee would) by uniformly random moves:
    the fields of a game record (``game``, ``seed``, ``history``, ``returns``, ``move_seats``)."""
    game = games.load(spec)
    if "seed" in game.params:
        game = game.with_params(seed=seed)
    out = []
    for _ in range(n):
        state = game.new_initial_state()
        move_seats: list[int] = []
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0])
                continue
            move_seats.append(state.current_player())
            state.apply_action(rng.choice(state.legal_actions()))
        out.append({"game": str(game), "seed": seed, "history": list(state.history()),
                    "returns": [float(r) for r in state.returns()], "move_seats": move_seats})
    return out


def make_record(sample: dict[str, Any], players: Sequence[str], rng: random.Random) -> GameRecord:
    """A full game record around a play-out, with made-up but plausible move times."""
    wall = [round(rng.uniform(0.001, 0.05), 6) for _ in sample["move_seats"]]
    return GameRecord.from_dict({**sample, "players": list(players), "terminations": ["normal"] * len(players),
                                 "wall_times": wall, "cpu_times": wall, "failures": [],
                                 "duration": round(sum(wall) + 0.01, 6), "info": {"synthetic": True}})


def synthetic_store(path: str | os.PathLike[str], bots: int = 200, games: int = 100_000, game: str = "nim",
                    seed: int = 0) -> dict[str, Any]:
    """Creates a store with league ``scale``: ``bots`` built-in bots and ``games`` fixtures of its real
    round-robin schedule (an even sample of the rounds that hold them), played as valid synthetic games (real random
    play-outs of ``game``, the
    winner drawn from the bots' hidden strengths so the leaderboard has an order), then rated for real
    (:func:`leaderboards.ledger.rate_pending`, which also writes the rating history).

    Returns:
        ``stored_games``, ``bots``, ``insert_seconds``, ``rate_seconds``, ``bytes``, ``bytes_per_game``.

    Raises:
        ConfigError: ``path`` exists already (it is never overwritten).
    """
    from arena.limits import Limits  # start-up: pydantic only when limits are built

    path = Path(path)
    if path.exists():
        raise ConfigError(f"{path} exists; synthetic_store makes a new store, pick a new path")
    seats = load(game).num_players()
    rng = random.Random(seed)
    t0 = time.perf_counter()
    with ledger.open_store(path, create=True) as store:
        ids = list(range(1, bots + 1))
        per_round = len(league_schedule([(game, seats)], {game: ids}, seats, seed))
        gpp = seats * max(1, math.ceil(games / max(per_round, 1)))
        league = store.ensure_league(LEAGUE, {"games": [game], "games_per_pairing": gpp, "seed": seed,
                                              "limits": Limits().to_dict()})
        bot_ids = [store.upsert_bot(league.id, f"bot{i:03d}", origin="config", spec="random")[0].id
                   for i in range(bots)]
        labels = {b: f"bot{i:03d}" for i, b in enumerate(bot_ids)}
        strength = {b: rng.gauss(0.0, 1.0) for b in bot_ids}
        everything = league_schedule([(game, seats)], {game: bot_ids}, gpp, seed)
        # an even sample of whole rounds (every bot about as many games), kept in schedule order
        fixtures = [everything[i] for i in sorted(rng.sample(range(len(everything)), min(games, len(everything))))]
        samples: dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}

        def rows() -> Any:
            for f in fixtures:
                if f.round not in samples:
                    played = playouts(game, f.seed, SAMPLES, rng)
                    first = [p for p in played if p["returns"][0] == max(p["returns"])]
                    samples[f.round] = (first or played, [p for p in played if p not in first] or played)
                first_wins, others = samples[f.round]
                if seats == 2:  # seat 0 wins with the logistic chance of its strength advantage
                    p = 1 / (1 + math.exp(strength[f.seats[1]] - strength[f.seats[0]]))
                    pool = first_wins if rng.random() < p else others
                else:
                    pool = first_wins + others
                yield (f.key, f.game, f.round, f.seats,
                       make_record(rng.choice(pool), [labels[b] for b in f.seats], rng))

        stored = 0
        batch = rows()
        while True:
            chunk = [row for _, row in zip(range(CHUNK), batch)]
            if not chunk:
                break
            stored += store.record_games(league.id, chunk)
        t1 = time.perf_counter()
        ledger.rate_pending(store, league.id)
        t2 = time.perf_counter()
        store.checkpoint()  # the size of the file is then the store's size
    size = path.stat().st_size
    return {"stored_games": stored, "bots": bots, "insert_seconds": t1 - t0, "rate_seconds": t2 - t1, "bytes": size,
            "bytes_per_game": size / stored if stored else 0.0}


# -- the leaderboard -----------------------------------------------------------------------------------
def _league(store: Store) -> League:
    leagues = store.leagues()
    if not leagues:
        raise ConfigError(f"{store.path} holds no league")
    return next((lg for lg in leagues if lg.name == LEAGUE), leagues[0])


def _timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def leaderboard_times(db: str | os.PathLike[str], repeats: int = 5) -> dict[str, Any]:
    """Wall times of the leaderboard query (``Store.ratings`` plus the ordering, and the full
    :func:`arena.output.views.standings` rows the CLI prints) and of ``arena leaderboard --db DB`` run as
    a subprocess (a fresh interpreter, as a user runs it), beside the interpreter's own start-up."""
    db = Path(db)
    with Store.open(db, readonly=True) as store:
        league = _league(store)
        several = len(store.leagues()) > 1
        n_games = store.count_games(league.id)
        n_bots = len(store.bots(league.id, include_retired=False))
        ratings = _timed(lambda: leaderboard_order(store.ratings(league.id)), repeats)
        rows = _timed(lambda: standings(store, league.id), repeats)
    command = [sys.executable, "-m", "arena.cli", "leaderboard", "--db", str(db)]
    if several:
        command += ["--league", league.name]

    def run(cmd: list[str]) -> None:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.strip()}")

    cli = _timed(lambda: run(command), max(3, repeats // 2))
    startup = _timed(lambda: run([sys.executable, "-c", "pass"]), 3)
    return {"stored_games": n_games, "bots": n_bots,
            "query_seconds": statistics.median(ratings), "query_seconds_max": max(ratings),
            "standings_seconds": statistics.median(rows), "standings_seconds_max": max(rows),
            "command_seconds": statistics.median(cli), "command_seconds_max": max(cli),
            "python_startup_seconds": min(startup)}


def h2h_times(db: str | os.PathLike[str], repeats: int = 3) -> dict[str, Any]:
    """Wall time of the head-to-head counts of a whole league (what the dashboard's matrix and
    ``arena leaderboard --h2h`` query)."""
    with Store.open(db, readonly=True) as store:
        league = _league(store)
        times = _timed(lambda: store.head_to_head(league.id), repeats)
    return {"h2h_query_seconds": statistics.median(times), "h2h_query_seconds_max": max(times)}


# -- the dashboard --------------------------------------------------------------------------------------
def appending_writer(games: int = 100, interval: float = 0.02, seed: int = 1, *,
                     process: bool = True) -> Callable[[Path], int]:
    """A writer for :func:`dashboard_times`: appends ``games`` valid games (real play-outs of the league's first
    game, between random active bots, with keys after every stored one) to the store at the path it is
    given, each stored with :func:`leaderboards.ledger.record_game` and rated with
    :func:`~leaderboards.ledger.rate_pending` as the league
    runner does, one every ``interval`` seconds. Returns the games written.

    With ``process`` (the default) it writes from a child process, as the league runner does; otherwise
    from the calling thread (which then competes with the dashboard for the GIL)."""
    def spawn(path: Path) -> int:
        done = subprocess.run([sys.executable, "-m", "arena.bench.scale_dashboard", str(path), "--append", str(games),
                               "--interval", str(interval), "--seed", str(seed)],
                              capture_output=True, text=True, check=False, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"the writer failed: {done.stderr.strip()}")
        return int(done.stdout.split()[-1])

    def write(path: Path) -> int:

        rng = random.Random(seed)
        with ledger.open_store(path) as store:
            league = _league(store)
            spec = (league.config.get("games") or [None])[0] or store.recent_games(league.id, limit=1)[0].base_game
            seats = load(spec).num_players()
            bots = [b for b in store.bots(league.id, include_retired=False) if b.status == "active" and b.plays(spec)]
            last = store.last_key(league.id) or ""
            round_ = int(last[:6]) + 1 if last[:6].isdigit() else 0
            pool = playouts(spec, rng.randrange(2**62), SAMPLES, rng)
            labels = {b.id: b.label for b in bots}
            written = 0
            for i in range(games):
                table = sorted(rng.sample(list(labels), seats))
                key = fixture_key(round_ + i, spec, table, 0)  # each after every stored key: rated in order
                if ledger.record_game(store, league.id, key, spec, round_ + i, table,
                                      make_record(rng.choice(pool), [labels[b] for b in table], rng)) is not None:
                    written += 1
                ledger.rate_pending(store, league.id)
                time.sleep(interval)
        return written
    return spawn if process else write


def dashboard_times(db: str | os.PathLike[str], writer: Callable[[Path], Any] | None = None, *,
                    size: tuple[int, int] = (120, 40), poll_interval: float = 0.5, h2h_games: int = 30,
                    timeout: float = 600.0) -> dict[str, Any]:
    """Opens the real :class:`arena.tui.app.ArenaApp` headless (``run_test``) on a copy of ``db`` and measures:

    - ``open_seconds``: from creating the app to the first leaderboard rows on screen;
    - ``trends_seconds``: until every trend sparkline is loaded (the status line's "trends loading…" gone);
    - ``first_fill_seconds``: the UI-thread time of the first snapshot (filling the empty tables);
    - while ``writer(copy_path)`` runs in a thread (default :func:`appending_writer`: 100 games, one every
      20 ms): the UI-thread time of every table update (``max_update_seconds``,
      ``median_update_seconds``, ``updates``) and the event loop's longest stall (``max_loop_lag_seconds``:
      anything the UI thread did in one go, repainting included);
    - the same with the head-to-head tab shown (``max_update_seconds_h2h``, ``h2h_games`` more games);
    - ``h2h_query_seconds``: the head-to-head query alone.
    """
    db = Path(db)
    with tempfile.TemporaryDirectory(prefix="arena-dash-") as tmp:
        copy = Path(tmp) / db.name
        with Store.open(db, readonly=True) as store:
            store.backup(copy)
        with ledger.open_store(copy) as store:  # a schema 1 store is migrated on the copy, as a league run would
            league = _league(store)
            n_games, n_bots = store.count_games(league.id), len(store.bots(league.id, include_retired=False))
        result: dict[str, Any] = {"stored_games": n_games, "bots": n_bots, **h2h_times(copy)}
        result.update(asyncio.run(asyncio.wait_for(
            _measure(copy, writer or appending_writer(), appending_writer(h2h_games, seed=2), size, poll_interval),
            timeout)))
    return result


async def _measure(path: Path, writer: Callable[[Path], Any], h2h_writer: Callable[[Path], Any],
                   size: tuple[int, int], poll_interval: float) -> dict[str, Any]:
    from arena.tui.app import ArenaApp  # start-up: textual only when the dashboard runs
    from arena.tui.tables import HeadToHeadTable, LeaderboardTable

    updates: list[float] = []
    t0 = time.perf_counter()
    app = ArenaApp(path, poll_interval=poll_interval)
    apply = app._apply_snapshot

    def timed(snapshot: Any) -> None:  # runs on the UI thread, called by the poller
        start = time.perf_counter()
        apply(snapshot)
        updates.append(time.perf_counter() - start)

    app._apply_snapshot = timed  # type: ignore[method-assign]
    lags: list[float] = []
    async with app.run_test(size=size) as pilot:
        table = app.query_one(LeaderboardTable)

        async def until(predicate: Callable[[], bool], limit: float = 300.0) -> float:
            deadline = time.perf_counter() + limit
            while not predicate():
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"the dashboard did not get there in {limit} s")
                await asyncio.sleep(0.005)
            return time.perf_counter() - t0

        open_seconds = await until(lambda: table.row_count > 0)
        trends_seconds = await until(lambda: app.snapshot is not None and app.snapshot.trends_complete)

        async def watch(stop: threading.Event) -> None:
            while not stop.is_set():  # how late a 10 ms sleep wakes: the UI thread's longest stall
                start = time.perf_counter()
                await asyncio.sleep(0.01)
                lags.append(time.perf_counter() - start - 0.01)

        async def while_writing(write: Callable[[Path], Any]) -> tuple[list[float], Any]:
            first = len(updates)
            stop = threading.Event()
            out: list[Any] = []
            thread = threading.Thread(target=lambda: out.append(write(path)), daemon=True)
            monitor = asyncio.ensure_future(watch(stop))
            thread.start()
            while thread.is_alive():
                await pilot.pause(0.05)
            await pilot.pause(max(0.5, 3 * poll_interval))  # the last games reach the screen
            stop.set()
            await monitor
            return updates[first:], out[0] if out else None

        during, written = await while_writing(writer)
        lag = max(lags, default=0.0)
        await pilot.press("2")
        await until(lambda: app.query_one(HeadToHeadTable).row_count > 0)
        during_h2h, _ = await while_writing(h2h_writer)
        shown = table.row_count
    return {"open_seconds": open_seconds, "trends_seconds": trends_seconds,
            "first_fill_seconds": updates[0] if updates else None, "written_games": written,
            "updates": len(during), "max_update_seconds": max(during, default=0.0),
            "median_update_seconds": statistics.median(during) if during else 0.0,
            "max_loop_lag_seconds": lag, "max_update_seconds_h2h": max(during_h2h, default=0.0),
            "rows_shown": shown}


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m arena.bench.scale_dashboard [DB] [--games N] [--bots N]``: builds a synthetic store when DB
    is not given (or does not exist) and prints every measurement as JSON."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("db", nargs="?")
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--append", type=int, metavar="N", help="only append N games to DB (the writer's child)")
    parser.add_argument("--interval", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.append is not None:
        print(appending_writer(args.append, args.interval, args.seed, process=False)(Path(args.db)))
        return
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="arena-dash-") as tmp:
        db = Path(args.db) if args.db else Path(tmp) / "synthetic.sqlite"
        if not db.exists():
            out["synthetic"] = synthetic_store(db, bots=args.bots, games=args.games)
        out["leaderboard"] = leaderboard_times(db)
        out["dashboard"] = dashboard_times(db)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
