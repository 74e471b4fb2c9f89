"""The dashboard says what is so (issue 18 §3), driven with Textual's Pilot on the test store."""
from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static, TabbedContent

from arena.tui.app import ArenaApp
from arena.tui.tables import GamesTable, HeadToHeadTable, LeaderboardTable
from tests.tui.conftest import wait_for
from tests.tui.storefix import Fixture

SIZE = (80, 24)


def cell_text(table: DataTable, row_key: str, column: str) -> str:  # type: ignore[type-arg]
    value = table.get_cell(row_key, column)
    return getattr(value, "plain", str(value))


def selected(table: DataTable) -> str | None:  # type: ignore[type-arg]
    return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value


async def test_the_leaderboard_selection_follows_its_bot_when_the_table_reranks(fixture_store: Fixture) -> None:
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        board = app.query_one(LeaderboardTable)
        await pilot.press("down", "down", "down")  # random, last
        random_id = str(fixture_store.bots["random"])
        assert selected(board) == random_id
        # a newcomer (prior rating) ranks above random: random moves down a row
        fixture_store.store.upsert_bot(fixture_store.demo.id, "newbie", origin="submit", spec="random")
        await wait_for(pilot, lambda: board.row_count == 5)
        assert board.get_row_index(random_id) == 4
        assert selected(board) == random_id


async def test_the_games_selection_follows_its_game_when_new_games_arrive(fixture_store: Fixture) -> None:
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("3", "down", "down")
        games = app.query_one(GamesTable)
        chosen = selected(games)
        fixture_store.add_round([("random", "greedy")])  # 4 new games on top
        await wait_for(pilot, lambda: games.row_count == 52)
        assert selected(games) == chosen and games.cursor_row == 6


async def test_the_head_to_head_keeps_its_selection_when_the_ranking_changes(fixture_store: Fixture) -> None:
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("2", "down", "down", "down")
        h2h = app.query_one(HeadToHeadTable)
        random_id = str(fixture_store.bots["random"])
        await wait_for(pilot, lambda: selected(h2h) == random_id)
        fixture_store.store.upsert_bot(fixture_store.demo.id, "newbie", origin="submit", spec="random")
        await wait_for(pilot, lambda: h2h.row_count == 5)
        assert selected(h2h) == random_id
