"""The dashboard driven with Textual's Pilot: navigation, replays, pickers, messages and live updates."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from textual.widgets import DataTable, Static, TabbedContent
from textual.widgets.data_table import ColumnKey

from arena.tui.app import ArenaApp
from arena.tui.format import BARS
from arena.tui.screens import BotDetailScreen, HelpScreen, PickerScreen, ReplayScreen, SearchScreen
from arena.tui.tables import TREND_WIDTH, GamesTable, HeadToHeadTable, LeaderboardTable
from leaderboards.store import SCHEMA_VERSION, Store
from tests.leaderboards.support import tamper
from tests.tui.pilot import wait_for
from tests.tui.storefix import Fixture

SIZE = (80, 24)


def cell_text(table: DataTable, row_key: str, column: str) -> str:  # type: ignore[type-arg]
    value = table.get_cell(row_key, column)
    return getattr(value, "plain", str(value))


async def test_tabs_and_tables(store_file: Path) -> None:
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        board = app.query_one(LeaderboardTable)
        assert board.row_count == 4 and board.has_focus
        assert [cell_text(board, r.key.value, "bot") for r in board.ordered_rows] == ["uct", "mybot", "greedy",
                                                                                      "random"]
        assert cell_text(board, str(app.snapshot.leaderboard[1].bot_id), "fail") == "2"
        await wait_for(pilot, lambda: app.snapshot.trends_complete)  # sparklines arrive after the first draw
        trend = cell_text(board, str(app.snapshot.leaderboard[0].bot_id), "trend")
        assert len(trend) == TREND_WIDTH and set(trend) <= set(BARS)
        assert board.columns[ColumnKey("trend")].get_render_width(board) >= TREND_WIDTH
        await pilot.press("2")
        assert app.query_one(TabbedContent).active == "h2h" and app.query_one(HeadToHeadTable).has_focus
        h2h = app.query_one(HeadToHeadTable)
        assert h2h.row_count == 4 and len(h2h.columns) == 5
        uct, rnd = (str(r.bot_id) for r in (app.snapshot.leaderboard[0], app.snapshot.leaderboard[-1]))
        await wait_for(pilot, lambda: cell_text(h2h, uct, rnd) != "·")  # counts are queried once shown
        assert cell_text(h2h, uct, rnd) == "100% 8" and cell_text(h2h, rnd, uct) == "  0% 8"
        assert cell_text(h2h, uct, uct) == "—"
        for key, column in h2h.columns.items():  # cells written after the first draw widened their columns
            assert column.get_render_width(h2h) >= max(len(cell_text(h2h, r.key.value, key.value))
                                                       for r in h2h.ordered_rows)
        await pilot.press("3")
        games = app.query_one(GamesTable)
        assert app.query_one(TabbedContent).active == "games" and games.has_focus
        assert games.row_count == 48 and games.ordered_rows[0].key.value == str(max(g.id for g in app.snapshot.games))
        await pilot.press("1")
        assert app.query_one(TabbedContent).active == "leaderboard"


async def test_replay_steps_forward_back_and_autoplays(store_file: Path) -> None:
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("3", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        assert screen.data.id == app.snapshot.games[0].id and screen.step == 0
        board = screen.query_one("#board", Static)
        start = str(board.render())
        await pilot.press("right", "right", "l")
        assert screen.step == 3
        assert str(board.render()) != start
        await pilot.press("left")
        assert screen.step == 2
        await pilot.press("home")
        assert screen.step == 0 and str(board.render()) == start
        await pilot.press("end")
        assert screen.step == len(screen.replay) - 1
        assert "won" in str(screen.query_one("#moves", Static).render())
        await pilot.press("home", "plus", "plus", "space")  # fastest autoplay
        assert screen.autoplaying
        await wait_for(pilot, lambda: screen.step >= 3)
        await pilot.press("space")
        assert not screen.autoplaying
        stopped = screen.step
        await pilot.pause(0.3)
        assert screen.step == stopped
        await pilot.press("escape")
        assert not isinstance(app.screen, ReplayScreen)
        assert app.query_one(TabbedContent).active == "games"


async def test_replay_of_a_forfeited_game_shows_the_failure(store_file: Path) -> None:
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        timeout_row = next(i for i, g in enumerate(app.snapshot.games) if g.reason != "normal")
        await pilot.press("3", *["down"] * timeout_row, "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("end")
        side = str(app.screen.query_one("#moves", Static).render())
        assert "timeout@0" in side and "TimeoutError" in side


async def test_bot_detail_help_and_pickers(store_file: Path) -> None:
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("down", "enter")  # mybot, second on the board
        await wait_for(pilot, lambda: isinstance(app.screen, BotDetailScreen))
        text = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "mybot.py" in text and "failures (2, this version)" in text and "p50" in text and "move_time=2.0" in text
        await pilot.press("g")  # dashboard keys do nothing over another screen
        assert isinstance(app.screen, BotDetailScreen)
        await pilot.press("escape", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

        await pilot.press("g")  # game filter: all games, doublestep, nim
        assert isinstance(app.screen, PickerScreen)
        await pilot.press("down", "down", "enter")
        await wait_for(pilot, lambda: app.snapshot.scope == "nim")
        assert all(row.games == 12 for row in app.snapshot.leaderboard)
        assert app.query_one(GamesTable).row_count == 24
        assert "nim" in str(app.query_one("#status", Static).render())

        await pilot.press("l", "down", "enter")  # league ladder
        await wait_for(pilot, lambda: app.snapshot.league == "ladder")
        assert app.scope == "*" and app.query_one(LeaderboardTable).row_count == 2
        assert app.query_one(GamesTable).row_count == 3


async def test_live_update_changes_cells_in_place(fixture_store: Fixture) -> None:
    """Games written by another connection while the app runs reach the leaderboard without a rebuild."""
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        board = app.query_one(LeaderboardTable)
        rows_before = {r.key.value for r in board.ordered_rows}
        greedy = str(fixture_store.bots["greedy"])
        games_before = cell_text(board, greedy, "games")
        applied = app.snapshots_applied
        await pilot.pause(0.3)
        assert app.snapshots_applied == applied  # nothing changed: no new snapshot, no redraw
        fixture_store.add_round([("random", "greedy"), ("greedy", "uct")])  # 8 games, greedy in all
        await wait_for(pilot, lambda: cell_text(board, greedy, "games") != games_before)
        assert int(cell_text(board, greedy, "games")) == int(games_before) + 8
        assert {r.key.value for r in board.ordered_rows} == rows_before  # same rows, updated in place
        assert board.cell_updates > 0
        untouched = str(fixture_store.bots["mybot"])  # did not play: its cells were left alone
        assert cell_text(board, untouched, "games") == "24"
        assert app.query_one(GamesTable).row_count == 56

        # a bot entered mid-league gets a row of its own
        newbie, _ = fixture_store.store.upsert_bot(fixture_store.demo.id, "newbie", origin="submit", spec="random")
        await wait_for(pilot, lambda: board.row_count == 5)
        assert cell_text(board, str(newbie.id), "games") == "0"


async def test_missing_store_shows_a_message_then_comes_alive(tmp_path: Path) -> None:
    path = tmp_path / "later.sqlite"
    app = ArenaApp(path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.message is not None)
        assert "No results store" in app.message and not app.query_one("#tabs").display
        store = Store.open(path, create=True)
        await wait_for(pilot, lambda: "no league yet" in (app.message or ""))
        fx_league = store.ensure_league("fresh", {"games": ["nim"]})
        store.upsert_bot(fx_league.id, "solo", origin="config", spec="random")
        await wait_for(pilot, lambda: app.snapshot is not None)
        assert app.query_one("#tabs").display and app.query_one(LeaderboardTable).row_count == 1
        store.close()


async def test_newer_store_is_refused_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    Store.open(path, create=True).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 5),))
    conn.commit()
    conn.close()
    app = ArenaApp(path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.message is not None)
        assert "newer arena" in app.message and "upgrade arena" in app.message
        await pilot.press("l", "g", "1")  # nothing to pick, no crash
        assert app.snapshot is None
        await wait_for(pilot, lambda: not any(w.is_running for w in app.workers))  # polling stopped


async def test_unknown_league_message_offers_the_picker(store_file: Path) -> None:
    app = ArenaApp(store_file, league="nope", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.message is not None)
        assert "No league 'nope'" in app.message
        await pilot.press("l")
        assert isinstance(app.screen, PickerScreen)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.snapshot is not None)
        assert app.snapshot.league == "demo"


async def test_a_game_that_cannot_be_replayed_is_a_notification(fixture_store: Fixture) -> None:
    newest = fixture_store.store.games(fixture_store.demo.id, order="recent", limit=1)[0]
    tamper(fixture_store.store, newest.id, game="chess")  # a spec no arena can load
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    notes: list[str] = []
    app.notify = lambda message, **kw: notes.append(message)  # type: ignore[method-assign,assignment]
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("3", "enter")
        await wait_for(pilot, lambda: bool(notes))
        assert f"cannot replay game {newest.id}" in notes[0] and "chess" in notes[0]
        assert not isinstance(app.screen, ReplayScreen)


async def test_results_arriving_under_an_open_dialog_update_the_board_beneath(fixture_store: Fixture) -> None:
    """Results that arrive while a dialog is open (the search box) update the board beneath it, and the poller lives
    on (the app's queries go to its default screen, not the dialog on top)."""
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        board = app.query_one(LeaderboardTable)
        greedy = str(fixture_store.bots["greedy"])
        games_before = int(cell_text(board, greedy, "games"))
        await pilot.press("slash")
        assert isinstance(app.screen, SearchScreen)
        fixture_store.add_round([("random", "greedy")])
        await wait_for(pilot, lambda: int(cell_text(board, greedy, "games")) == games_before + 4)
        assert isinstance(app.screen, SearchScreen)  # still open, the board beneath it current
        await pilot.press("escape")
        assert app.query_one("#status", Static).render() is not None
        assert any(w.is_running for w in app.workers)  # the poller lives on


async def test_a_snapshot_delivered_while_the_app_closes_is_dropped(fixture_store: Fixture) -> None:
    """The poller's last snapshot can reach the UI thread after the app began to close and its widgets are gone
    (a clean-clone CI run: NoMatches('#message-box') failed a test at exit); such a delivery is dropped."""
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        snapshot, applied = app.snapshot, app.snapshots_applied
    app._apply_snapshot(snapshot)  # what call_from_thread runs when the delivery lost the race with the shutdown
    app._show_message("No results store")
    assert app.snapshots_applied == applied


def test_bot_detail_of_a_clock_league_shows_its_time_control_not_the_uncapped_move_times() -> None:
    from types import SimpleNamespace

    from arena.limits import Limits
    screen = BotDetailScreen.__new__(BotDetailScreen)
    screen.row = None
    limits = Limits(time_control="40/60+0.5").to_dict()  # move_time and first_move_time left out: 86400 s
    screen.detail = SimpleNamespace(version=1, versions=[], kind="builtin", spec="uct", status="active",
                                    status_reason="", games=[], limits=limits, trusted=False)
    line = next(x for x in str(screen._identity()).splitlines() if x.startswith("limits"))
    assert "time_control=40/60+0.5" in line and "86400" not in line and "memory_mb=500" in line, line


async def test_the_replay_shows_each_seats_game_clock(tmp_path: Path) -> None:
    """A real league with game clocks: the replay's panel says each seat's clock after its latest move, as stored
    (none before a seat's first move), ending at the game's stored clocks."""
    import re

    from tests.leaderboards.support import arena, write
    from tests.league_files import league_toml
    write(tmp_path / "league.toml", league_toml("clocked", seed=5, database="clocked.sqlite", games_per_pairing=2,
                                                limits={"time_control": "30+0.5"},
                                                bots=[{"spec": "random"}, {"spec": "greedy"}]))
    run = arena(tmp_path, "league", "run", "league.toml", "-q")
    assert run.returncode == 0, run.stderr
    with Store.open(tmp_path / "clocked.sqlite", readonly=True) as store:
        ends = {g.id: g.info["clocks_end"] for g in store.games(store.find_league("clocked").id)}
    app = ArenaApp(tmp_path / "clocked.sqlite", poll_interval=0.05)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("3", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        panel = screen.query_one("#moves", Static)
        start = str(panel.render())
        assert "clocks (30+0.5)" in start and start.count("not started") == 2, start
        await pilot.press("end")
        shown = str(panel.render())
        readings = [int(m) * 60 + float(s) for m, s in re.findall(r"(\d+):(\d\d\.\d) left", shown)]
        want = ends[screen.data.id]
        assert len(readings) == 2 and all(abs(x - y) <= 0.06 for x, y in zip(readings, want)), (shown, want)
