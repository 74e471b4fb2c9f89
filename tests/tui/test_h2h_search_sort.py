"""Search (``/``) and sort (``s``) on the head-to-head tab, driven with Textual's Pilot on real SQLite stores.

The search picks the bots of the matrix (rows and columns alike) from every bot of the league, not only the top
H2H_MAX_BOTS, so an organiser finds one student among 200; the sort orders the rows; the cell cursor stays on its
bot and its opponent through both and through new games.
"""
from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, Static

from arena.limits import Limits
from arena.text import shown
from arena.tui.app import ArenaApp
from arena.tui.screens import PickerScreen, SearchScreen
from arena.tui.tables import H2H_MAX_BOTS, HeadToHeadTable, LeaderboardTable
from leaderboards import ledger
from leaderboards.store import Store
from tests.leaderboards.support import store_game
from tests.tui.pilot import wait_for
from tests.tui.storefix import Fixture, play_record
from tests.tui.test_organiser import big_league, cell_text
from tests.tui.test_untrusted_text import BAD, MARKUP, unsafe
from tests.tui.test_untrusted_text import build as hostile_league

SIZE = (100, 30)


def rows(table: DataTable) -> list[str]:  # type: ignore[type-arg]
    return [r.key.value for r in table.ordered_rows]


def columns(table: DataTable) -> list[str]:  # type: ignore[type-arg]
    return [c.key.value for c in table.ordered_columns][1:]  # after the names


def cursor_keys(table: DataTable) -> tuple[str | None, str | None]:  # type: ignore[type-arg]
    key = table.coordinate_to_cell_key(table.cursor_coordinate)
    return key.row_key.value, key.column_key.value


def status(app: ArenaApp) -> str:
    return str(app.query_one("#status", Static).render())


async def search(pilot, app: ArenaApp, value: str) -> None:  # type: ignore[no-untyped-def]
    """``/``, then ``value`` put into the box as a paste would, then Enter."""
    await pilot.press("slash")
    assert isinstance(app.screen, SearchScreen)
    app.screen.query_one(Input).value = value
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()


async def sort(pilot, app: ArenaApp, order: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("s")
    assert isinstance(app.screen, PickerScreen)
    offered = [value for value, _ in app.screen.choices]
    current = app.screen.query_one("#picker").highlighted or 0
    index = offered.index(order)
    await pilot.press(*(["down"] * (index - current) if index >= current else ["up"] * (current - index)), "enter")
    await pilot.pause()


async def test_search_finds_bots_beyond_the_top_and_shows_them_against_each_other(tmp_path: Path) -> None:
    n = H2H_MAX_BOTS + 4
    big_league(tmp_path / "big.sqlite", n=n)
    app = ArenaApp(tmp_path / "big.sqlite", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("2")
        h2h = app.query_one(HeadToHeadTable)
        ranked = [(str(r.bot_id), r.label) for r in app.snapshot.leaderboard]
        await wait_for(pilot, lambda: h2h.row_count == H2H_MAX_BOTS)
        assert rows(h2h) == columns(h2h) == [k for k, _ in ranked[:H2H_MAX_BOTS]]
        assert f"{H2H_MAX_BOTS} of {n} bots" in status(app)  # says that more are there, and how to find them

        # "2-LONG" (any case) is in student-02, student-12 and student-22: the last was not in the matrix
        wanted = [k for k, label in ranked if "2-long" in label]
        assert len(wanted) == 3 and wanted[-1] not in rows(h2h)
        await search(pilot, app, "2-LONG")
        assert rows(h2h) == columns(h2h) == wanted  # the matches against each other, by rank
        assert "rows with '2-LONG'" in status(app) and f"of {n} bots" not in status(app)
        for a in wanted:  # every cell is the pair's own result: the better name won both games
            for b in wanted:
                la, lb = app.snapshot.labels[int(a)], app.snapshot.labels[int(b)]
                expected = "—" if a == b else "100% 2" if la < lb else "  0% 2"
                assert cell_text(h2h, a, b) == expected, (la, lb)
        assert [c.label.plain for c in h2h.ordered_columns][1:] == \
            [f"#{[k for k, _ in ranked].index(k) + 1}" for k in wanted]  # the bots' true ranks head the columns
        rank = [k for k, _ in ranked].index(wanted[-1]) + 1
        name = app.snapshot.labels[int(wanted[-1])]
        assert rank > H2H_MAX_BOTS and cell_text(h2h, wanted[-1], "bot") == f"{rank} {name}"

        await search(pilot, app, "student")  # more matches than the cap: the first by rank, and it says so
        assert rows(h2h) == [k for k, _ in ranked[:H2H_MAX_BOTS]]
        assert f"first {H2H_MAX_BOTS} of {n} bots" in status(app)
        await search(pilot, app, "")  # empty: the top bots again
        assert rows(h2h) == [k for k, _ in ranked[:H2H_MAX_BOTS]] and f"top {H2H_MAX_BOTS} of {n}" in status(app)


def cycle_league(path: Path) -> dict[str, int]:
    """Five bots, each beating the next two round the circle (all end even: no order by strength), and one extra
    pair of games for ``kim`` so that the games sort has a clear first."""
    names = ["zed", "amy", "kim", "bea", "lou"]
    store = Store.open(path, create=True)
    league = store.ensure_league("cycle", {"games": ["nim"], "limits": Limits().to_dict()})
    ids = {name: store.upsert_bot(league.id, name, origin="config", spec="random")[0].id for name in names}
    k = 0
    pairs = [(i, j) for i in range(5) for j in range(5) if i != j] + [(2, 3), (3, 2)]
    for i, j in pairs:
        first_wins = (j - i) % 5 in (1, 2)
        store_game(store, league.id, f"{k:06d}", "nim", 0, [ids[names[i]], ids[names[j]]],
                          play_record("nim", k, ["a", "b"], winner_first=first_wins))
        k += 1
    ledger.rate_pending(store, league.id)
    store.close()
    return ids


def score(counts: tuple[int, int, int] | None) -> float | None:
    if not counts or not sum(counts):
        return None
    w, d, l = counts
    return (w + 0.5 * d) / (w + d + l)


async def test_sort_orders_the_rows_by_name_games_or_score_against_the_cursor_s_column(tmp_path: Path) -> None:
    ids = cycle_league(tmp_path / "cycle.sqlite")
    app = ArenaApp(tmp_path / "cycle.sqlite", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("2")
        h2h = app.query_one(HeadToHeadTable)
        await wait_for(pilot, lambda: h2h.row_count == 5 and bool(app.snapshot.h2h))
        board = app.snapshot.leaderboard
        by_rank = [str(r.bot_id) for r in board]
        assert rows(h2h) == by_rank

        await sort(pilot, app, "name")
        by_name = [str(ids[n]) for n in sorted(ids)]
        assert by_name != by_rank and rows(h2h) == by_name
        assert columns(h2h) == by_rank  # the columns keep the rank order: only the rows are sorted
        assert "sorted by name" in status(app)

        await sort(pilot, app, "games")
        assert set(rows(h2h)[:2]) == {str(ids["kim"]), str(ids["bea"])}  # the extra pair of games
        assert [next(r.games for r in board if str(r.bot_id) == k) for k in rows(h2h)] == \
            sorted((r.games for r in board), reverse=True)

        # the cursor on kim's column: rows by their score against kim, best first, kim itself last
        await pilot.press("home")
        await pilot.press(*["right"] * (by_rank.index(str(ids["kim"])) + 1))
        assert cursor_keys(h2h)[1] == str(ids["kim"])
        await sort(pilot, app, "score against the cursor's column")
        against = {k: score(app.snapshot.h2h.get((int(k), ids["kim"]))) for k in by_rank}
        expected = sorted((k for k in by_rank if against[k] is not None), key=lambda k: -against[k]) + \
            [k for k in by_rank if against[k] is None]
        assert expected[-1] == str(ids["kim"]) and expected != by_rank
        assert rows(h2h) == expected
        assert "sorted by score against kim" in status(app)
        assert cursor_keys(h2h)[1] == str(ids["kim"])  # the cursor stayed on kim's column

        await sort(pilot, app, "rank (μ-3σ)")
        assert rows(h2h) == by_rank


async def test_the_cell_cursor_follows_its_bot_and_opponent_through_reranks_and_sorts(fixture_store: Fixture) -> None:
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("2")
        h2h = app.query_one(HeadToHeadTable)
        await wait_for(pilot, lambda: h2h.row_count == 4)
        greedy, uct = str(fixture_store.bots["greedy"]), str(fixture_store.bots["uct"])
        await pilot.press(*["down"] * rows(h2h).index(greedy), *["right"] * (columns(h2h).index(uct) + 1))
        assert cursor_keys(h2h) == (greedy, uct)
        # a newcomer ranks above greedy: a new row and a new column, and the matrix is rebuilt
        fixture_store.store.upsert_bot(fixture_store.demo.id, "newbie", origin="submit", spec="random")
        await wait_for(pilot, lambda: h2h.row_count == 5)
        assert cursor_keys(h2h) == (greedy, uct)
        await sort(pilot, app, "name")
        assert cursor_keys(h2h) == (greedy, uct)
        await search(pilot, app, "e")  # greedy, newbie (not uct): the cursor keeps greedy's row
        assert [app.snapshot.labels[int(k)] for k in rows(h2h)] == ["greedy", "newbie"]
        assert cursor_keys(h2h)[0] == greedy
        # games arrive while sorted and searched: both hold
        fixture_store.add_round([("random", "greedy")])
        await wait_for(pilot, lambda: app.snapshot.n_games == 52)
        assert [app.snapshot.labels[int(k)] for k in rows(h2h)] == ["greedy", "newbie"]
        assert cursor_keys(h2h)[0] == greedy


async def test_search_takes_a_pasted_hostile_name_and_keeps_it_escaped(tmp_path: Path) -> None:
    db = tmp_path / "arena.sqlite"
    ids = hostile_league(db)
    app = ArenaApp(db, poll_interval=0.05)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        board = app.query_one(LeaderboardTable)
        # pasted raw (ESC, BEL, a bidi override): it finds the bot whose name is drawn escaped, and stays escaped
        await pilot.press("slash")
        box = app.screen.query_one(Input)
        box.value = BAD
        await pilot.pause()
        assert box.value == shown(BAD) and not unsafe(box.value)
        await pilot.press("enter")
        await pilot.pause()
        assert rows(board) == [str(ids[BAD])]
        assert not unsafe(status(app)) and f"rows with '{shown(BAD)}'" in status(app)

        await pilot.press("2")
        h2h = app.query_one(HeadToHeadTable)
        await search(pilot, app, "\\x1b[2J")  # typed as it is drawn: the escape's text
        await wait_for(pilot, lambda: rows(h2h) == columns(h2h) == [str(ids[BAD])])
        await search(pilot, app, MARKUP)  # markup is searched as text, never parsed
        assert rows(h2h) == [str(ids[MARKUP])]
        drawn = [getattr(c, "plain", str(c)) for r in h2h.ordered_rows for c in h2h.get_row(r.key)]
        assert any(MARKUP in t for t in drawn) and not any(unsafe(t) for t in drawn + [status(app)])
