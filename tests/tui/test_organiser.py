"""The dashboard says what is so (issue 18 §3), driven with Textual's Pilot on the test store."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from arena.tui.app import ArenaApp
from arena.tui.tables import GamesTable, HeadToHeadTable, LeaderboardTable
from leaderboards import ledger
from tests.leaderboards.support import store_game
from tests.tui.pilot import wait_for
from tests.tui.storefix import Fixture

SIZE = (80, 24)


def cell_text(table: DataTable, row_key: str, column: str) -> str:  # type: ignore[type-arg]
    value = table.get_cell(row_key, column)
    return getattr(value, "plain", str(value))


def selected(table: DataTable) -> str | None:  # type: ignore[type-arg]
    return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value


async def test_the_leaderboard_selection_follows_its_bot_when_the_table_reranks(fixture_store: Fixture,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.tui import storefix
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        board = app.query_one(LeaderboardTable)
        await pilot.press("down", "down", "down")  # random, last
        random_id = str(fixture_store.bots["random"])
        assert selected(board) == random_id
        # a newcomer without games is unrated and listed last (issue 23 §3): random keeps its row
        bot, _ = fixture_store.store.upsert_bot(fixture_store.demo.id, "newbie", origin="submit", spec="random")
        await wait_for(pilot, lambda: board.row_count == 5)
        assert board.get_row_index(random_id) == 3 and board.get_row_index(str(bot.id)) == 4
        # once it has beaten random it ranks above it: random moves down a row, the selection with it
        fixture_store.bots["newbie"] = bot.id
        monkeypatch.setitem(storefix.STRENGTH, "newbie", 5)
        fixture_store.add_round([("newbie", "random")])
        await wait_for(pilot, lambda: board.get_row_index(random_id) == 4)
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


def big_league(path: Path, n: int = 12) -> list[int]:
    """A store with one league of ``n`` bots with long names, each pair played twice (the better name wins)."""
    from arena.limits import Limits
    from leaderboards.store import Store
    from tests.tui.storefix import play_record
    store = Store.open(path, create=True)
    league = store.ensure_league("big", {"games": ["nim"], "limits": Limits().to_dict()})
    ids = [store.upsert_bot(league.id, f"student-{i:02d}-long", origin="config", spec="random")[0].id
           for i in range(n)]
    k = 0
    for i in range(n):
        for j in range(n):
            if i != j:
                store_game(store, league.id, f"{k:06d}", "nim", 0, [ids[i], ids[j]],
                                  play_record("nim", k, ["a", "b"], winner_first=i < j))
                k += 1
    ledger.rate_pending(store, league.id)
    store.close()
    return ids


def line(widget, y: int) -> str:  # type: ignore[no-untyped-def]
    return widget.render_line(y).text


async def test_the_head_to_head_at_80_columns_scrolls_by_whole_columns_beside_the_names(tmp_path: Path) -> None:
    big_league(tmp_path / "big.sqlite")
    app = ArenaApp(tmp_path / "big.sqlite", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("2")
        h2h = app.query_one(HeadToHeadTable)
        await wait_for(pilot, lambda: "100% 2" in line(h2h, 1))
        seen = set()
        for _ in range(12):
            await pilot.press("right")
            await pilot.pause(0.05)
            header = line(h2h, 0)
            seen |= {w for w in header.split() if w.startswith("#")}
            for y in range(1, 6):  # the bot's name, then whole cells: never the tail of a half-scrolled one
                row = line(h2h, y)
                name = f"{y} student-{y - 1:02d}-long"
                assert row.startswith(" " + name), row
                after = row[len(name) + 1:].split()
                assert after[0] in ("100%", "0%", "—"), row
        assert {f"#{i}" for i in range(1, 13)} <= seen  # every column can be reached


async def test_trend_sparklines_share_one_scale_and_say_what_they_are(store_file: Path) -> None:
    from arena.tui.format import BARS
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None and app.snapshot.trends_complete)
        board = app.query_one(LeaderboardTable)
        first, last = app.snapshot.leaderboard[0], app.snapshot.leaderboard[-1]  # uct, random (0 wins)
        await wait_for(pilot, lambda: cell_text(board, str(first.bot_id), "trend") != "")
        top = cell_text(board, str(first.bot_id), "trend")
        bottom = cell_text(board, str(last.bot_id), "trend")
        # random's μ-3σ rises as its σ shrinks; on one scale it still ends far below the leader's line
        assert BARS.index(bottom[-1]) < BARS.index(top[-1]) - 2, (top, bottom)
        assert max(top) == BARS[-1] and min(bottom) == BARS[0]
        assert {c.key.value: c.label.plain for c in board.ordered_columns}["trend"] == "μ-3σ trend"


async def test_enter_twice_opens_one_screen(store_file: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import threading

    from arena.tui.data import StoreReader
    from arena.tui.screens import BotDetailScreen, ReplayScreen
    started: list[str] = []
    gate = threading.Event()
    for name in ("replay", "bot_detail"):  # held until both Enters are in: the second comes while the first loads
        original = getattr(StoreReader, name)

        def held(self, *args, _original=original, _name=name, **kwargs):  # type: ignore[no-untyped-def]
            started.append(_name)
            gate.wait(30)
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(StoreReader, name, held)

    def loads_done() -> bool:  # every load worker has delivered its screen (call_from_thread waits for it)
        return not any(w.group == "load" and not w.is_finished for w in app.workers)

    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        for keys, name, screen in ((("3", "enter", "enter"), "replay", ReplayScreen),
                                   (("escape", "1", "enter", "enter"), "bot_detail", BotDetailScreen)):
            gate.clear()
            await pilot.press(*keys)
            await wait_for(pilot, lambda name=name: started.count(name) == 2)  # two loads at once
            gate.set()
            await wait_for(pilot, lambda screen=screen: isinstance(app.screen, screen) and loads_done())
            assert len(app.screen_stack) == 2
        await pilot.press("escape")
        assert len(app.screen_stack) == 1


async def test_a_head_to_head_cell_and_a_failure_count_open_the_games_behind_them(store_file: Path) -> None:
    from arena.tui.screens import GamesListScreen, ReplayScreen
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        uct, mybot = app.snapshot.leaderboard[0], app.snapshot.leaderboard[1]
        await pilot.press("2")
        h2h = app.query_one(HeadToHeadTable)
        await wait_for(pilot, lambda: cell_text(h2h, str(uct.bot_id), str(mybot.bot_id)) != "·")
        await pilot.press("right", "right", "enter")  # uct's row, mybot's column
        await wait_for(pilot, lambda: isinstance(app.screen, GamesListScreen))
        listed = app.screen.query_one(GamesTable)
        assert listed.row_count == int(cell_text(h2h, str(uct.bot_id), str(mybot.bot_id)).split()[-1]) == 8
        assert all({"uct", "mybot"} <= set(cell_text(listed, r.key.value, "players").split(" v "))
                   for r in listed.ordered_rows)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("escape")
        assert isinstance(app.screen, GamesListScreen)
        await pilot.press("escape", "1", "down", "f")  # mybot's failure count (2)
        await wait_for(pilot, lambda: isinstance(app.screen, GamesListScreen))
        listed = app.screen.query_one(GamesTable)
        assert listed.row_count == 2
        assert all(cell_text(listed, r.key.value, "reason").startswith("timeout") for r in listed.ordered_rows)


async def test_the_games_tab_loads_older_games_past_the_newest_200(fixture_store: Fixture) -> None:
    for _ in range(8):
        fixture_store.add_round()
    total = fixture_store.store.count_games(fixture_store.demo.id)
    assert total > 200
    fixture_store.close()
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("3")
        games = app.query_one(GamesTable)
        assert games.row_count == 200
        await pilot.press("end")
        await wait_for(pilot, lambda: games.row_count == total)
        assert games.get_row_index(str(min(g.id for g in app.snapshot.games))) == total - 1


async def test_the_replay_shows_whole_names_move_times_and_counts_moves_as_the_games_list(tmp_path: Path) -> None:
    from arena.tui.screens import ReplayScreen
    big_league(tmp_path / "big.sqlite", n=3)
    app = ArenaApp(tmp_path / "big.sqlite", poll_interval=0.05)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("3")
        games = app.query_one(GamesTable)
        listed_moves = int(cell_text(games, games.ordered_rows[0].key.value, "moves"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        await pilot.press("right", "right", "right")
        panel = str(screen.query_one("#moves", Static).render())
        assert f"move 3/{listed_moves}" in panel  # nim without coin: every action is a bot move
        lines = [ln for ln in panel.splitlines() if ln[:3].strip().isdigit()]
        assert lines and all("student-0" in ln and "-long" in ln for ln in lines), panel  # not cut to 7
        assert all(ln.rstrip().endswith("ms") for ln in lines), panel  # each move's time
        assert screen.query_one("#moves", Static).size.width > 31  # a wide terminal gives the list room
        await pilot.press("end")
        panel = str(screen.query_one("#moves", Static).render())
        assert f"move {listed_moves}/{listed_moves}" in panel


async def test_double_step_lanes_are_named_by_their_players_in_a_replay(store_file: Path) -> None:
    from arena.tui.screens import ReplayScreen
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        row = next(i for i, g in enumerate(app.snapshot.games) if g.game.startswith("doublestep"))
        players = app.snapshot.games[row].players
        await pilot.press("3", *["down"] * row, "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        board = str(app.screen.query_one("#board", Static).render()).splitlines()
        assert board[0].split()[0] == players[0] and board[1].split()[0] == players[1]


async def test_a_hex_replay_highlights_the_last_move_and_the_winning_chain(store_file: Path) -> None:
    from arena.tui.data import ReplayData
    from arena.tui.replay import Replay
    from arena.tui.screens import ReplayScreen
    history = [0, 1, 3, 4, 6]  # x plays a1 a2 a3: a chain from the top row to the bottom row
    data = ReplayData(7, "hex(size=3)", history, ["alice", "bob"], [1.0, -1.0], ["normal", "normal"], [],
                      [0.01] * 5, 5)
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        app.push_screen(ReplayScreen(data, Replay(data.spec, history)))
        await pilot.pause()
        await pilot.press("end")
        board = app.screen.query_one("#board", Static).render()
        underlined = [sp for sp in board.spans if "underline" in str(sp.style) and sp.end - sp.start == 1]
        assert len(underlined) == 3 and all(board.plain[sp.start] == "x" for sp in underlined)
        marked = [sp for sp in board.spans if "yellow" in str(sp.style)]  # the last move's background
        assert len(marked) == 1 and marked[0] in underlined  # a3, the last move, is part of the chain
        assert "last move a3" in board.plain and "winning chain" in board.plain
        await pilot.press("left")  # before the last move: no chain yet, the last move is o's b2
        board = app.screen.query_one("#board", Static).render()
        assert not [sp for sp in board.spans if "underline" in str(sp.style) and sp.end - sp.start == 1]
        assert "last move b2" in board.plain


async def test_the_bot_detail_says_its_numbers_are_this_versions_and_lists_the_others(fixture_store: Fixture) -> None:
    from arena.tui.screens import BotDetailScreen
    v2, new = fixture_store.store.upsert_bot(fixture_store.demo.id, "mybot", origin="config", filename="mybot.py",
                                             source="class Bot:\n    pass  # v2\n")
    assert new and v2.version == 2
    fixture_store.close()
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        row = next(i for i, r in enumerate(app.snapshot.leaderboard) if r.bot_id == v2.id)
        await pilot.press(*["down"] * row, "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, BotDetailScreen))
        text = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "version  2 of 2: every number below is this version's" in text
        assert "mybot (retired, 24 games), mybot@v2 (active, 0 games); 24 games in all" in text
        assert "failures (0, this version)" in text and "this version: 0 moves" in text


async def test_the_status_line_shows_a_running_league_s_progress(fixture_store: Fixture) -> None:
    from arena.league.progress import Reporter
    from leaderboards import lock
    fixture_store.close()
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=(120, 24)) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        status = app.query_one("#status", Static)
        assert "league run" not in str(status.render())
        with lock.acquire(fixture_store.path):  # as `arena league run` holds it
            reporter = Reporter("league demo", quiet=True, sidecar=fixture_store.path, concurrency=2)
            reporter.start(40)
            reporter.advance(12)
            reporter._write_sidecar(force=True)
            await wait_for(pilot, lambda: "league run: 12/40 games (30%)" in str(status.render()))
            assert "up to 2 at once" in str(status.render())
            reporter.stop()
        await wait_for(pilot, lambda: "league run" not in str(status.render()))
        assert lock.read_note(fixture_store.path) == ""  # the note went with the run
        assert not list(fixture_store.path.parent.glob("*.progress*"))  # no file of its own


async def test_search_and_sort_the_leaderboard_and_the_games(store_file: Path) -> None:
    from arena.tui.screens import PickerScreen, SearchScreen
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        board = app.query_one(LeaderboardTable)
        await pilot.press("slash")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press("g", "r", "e", "e", "enter")
        assert [cell_text(board, r.key.value, "bot") for r in board.ordered_rows] == ["greedy"]
        assert "rows with 'gree'" in str(app.query_one("#status", Static).render())
        await pilot.press("slash", "ctrl+u", "enter")  # empty: every row again
        await wait_for(pilot, lambda: board.row_count == 4)
        await pilot.press("s")
        assert isinstance(app.screen, PickerScreen)
        await pilot.press(*["down"] * 5, "enter")  # failures
        names = [cell_text(board, r.key.value, "bot") for r in board.ordered_rows]
        assert names[0] == "mybot" and sorted(names) == ["greedy", "mybot", "random", "uct"]
        assert "sorted by failures" in str(app.query_one("#status", Static).render())
        await pilot.press("3", "s", "down", "enter")  # games: oldest first
        games = app.query_one(GamesTable)
        ids = [int(r.key.value) for r in games.ordered_rows]
        assert ids == sorted(ids) and len(ids) == 48


async def test_the_footer_and_help_list_every_key(store_file: Path) -> None:
    from arena.tui.screens import HELP, BotDetailScreen, GamesListScreen, HelpScreen, ReplayScreen
    from arena.tui.tables import LiveTable
    shown_as = {"question_mark": "?", "right": "→", "left": "←", "home": "Home", "end": "End", "pagedown": "PgDn",
                "pageup": "PgUp", "plus": "+", "equals_sign": "=", "minus": "-", "escape": "Esc", "enter": "Enter",
                "slash": "/", "space": "space"}
    screens = (ArenaApp, LiveTable, HeadToHeadTable, ReplayScreen, BotDetailScreen, GamesListScreen, HelpScreen)
    for owner in screens:
        for binding in owner.BINDINGS:
            for key in binding.key.split(","):
                assert shown_as.get(key, key) in HELP, (owner.__name__, key)
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        from textual.widgets import Footer
        footer = app.query_one(Footer)
        await pilot.pause(0.2)
        keys = {k.key for k in footer.query("FooterKey")} if footer.query("FooterKey") else set()
        assert {"1", "2", "3"} <= keys, keys


async def test_the_help_scrolls_to_its_last_line_at_80x24(store_file: Path) -> None:
    from arena.tui.screens import HelpScreen
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        scroll = app.screen.query_one("#help-scroll")
        await pilot.press("end")
        await pilot.pause(0.2)
        assert scroll.max_scroll_y > 0 and scroll.scroll_y == scroll.max_scroll_y


async def test_the_games_tab_keeps_its_numbers_in_sight_at_80_columns(tmp_path: Path) -> None:
    big_league(tmp_path / "big.sqlite", n=12)
    app = ArenaApp(tmp_path / "big.sqlite", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("3")
        games = app.query_one(GamesTable)
        await pilot.pause(0.2)
        header, first = line(games, 0), line(games, 1)
        newest = app.snapshot.games[0]
        assert "moves" in header and "time" in header
        assert first.split()[:2] == [str(newest.id), str(newest.moves)] and first.split()[2].endswith("s")


async def test_the_bot_detail_shows_the_rating_s_uncertainty(store_file: Path) -> None:
    from arena.tui.screens import BotDetailScreen
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        await pilot.press("enter")  # uct
        await wait_for(pilot, lambda: isinstance(app.screen, BotDetailScreen))
        text = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "σ 3.54" in text and "(95%), rank 1" in text and "tied group g" in text, text


async def test_the_status_line_shows_the_games_in_flight_not_the_concurrency(fixture_store: Fixture) -> None:
    """Issue 18 §3: the running league's line said "up to N at once" (its concurrency); it says how many games
    are being played now, and follows the runner's live count without waiting for a game to end."""
    from arena.league.progress import Reporter
    from leaderboards import lock
    fixture_store.close()
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=(120, 24)) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        status = app.query_one("#status", Static)
        flying = [3]
        with lock.acquire(fixture_store.path):  # as `arena league run` holds it
            reporter = Reporter("league demo", quiet=True, sidecar=fixture_store.path, concurrency=4)
            reporter.playing = lambda: flying[0]  # (run_league keeps RunSummary.in_flight live; the command reads it)
            reporter.start(40)
            reporter.advance(12)
            await wait_for(pilot, lambda: "3 games in flight" in str(status.render()))
            assert "up to 4" not in str(status.render())
            flying[0] = 1  # the tail of the league: no game ends, the count still follows
            await wait_for(pilot, lambda: "1 game in flight" in str(status.render()))
            reporter.stop()
        await wait_for(pilot, lambda: "league run" not in str(status.render()))


async def test_a_league_that_relaxed_the_sandbox_says_so_above_its_leaderboard(tmp_path: Path) -> None:
    """Issue 13 §1: `arena leaderboard` says SANDBOX RELAXED; the dashboard did not. The reasons come from the
    store and are shown escaped (no markup, no escape sequence reaches the terminal)."""
    from arena.limits import Limits
    from leaderboards.store import Store
    path = tmp_path / "arena.sqlite"
    with Store.open(path, create=True) as store:
        lg = store.ensure_league("lab", {"games": ["nim"], "limits": Limits(debug=True).to_dict(),
                                         "sandbox_relaxed": ["limits: debug = true [b]x[/b] \x1b[2J"]})
        store.upsert_bot(lg.id, "alpha", origin="config", spec="random")
    app = ArenaApp(path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        banner = app.query_one("#relaxed", Static)
        assert banner.display
        shown_text = str(banner.render())
        assert "SANDBOX RELAXED" in shown_text and "debug = true [b]x[/b] \\x1b[2J" in shown_text
        assert "\x1b" not in shown_text


async def test_a_league_with_the_full_sandbox_shows_no_relaxed_banner(store_file: Path) -> None:
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        assert not app.query_one("#relaxed", Static).display


def _history_until(spec: str, wanted: Callable[[int, int], bool], seed: int = 3) -> list[int]:
    """A legal seeded random history of ``spec`` that ends with the first bot move ``wanted(action, seat)``."""
    import random

    import games
    state, rng, history = games.load(spec).new_initial_state(), random.Random(seed), []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, weights = zip(*state.chance_outcomes())
            action = rng.choices(outcomes, weights)[0]
        else:
            action = rng.choice(list(state.legal_actions()))
        seat = state.current_player()
        state.apply_action(action)
        history.append(action)
        if seat >= 0 and wanted(action, seat):
            return history
    raise AssertionError(f"no such move in a random {spec} game (seed {seed})")


def _sorry_pawn_move(action: int, seat: int) -> bool:
    from games.sorry.naming import FWD, SPLIT
    return FWD <= action < SPLIT  # a pawn forward or back: the board marks that pawn


@pytest.mark.parametrize(("spec", "wanted", "mark"), [
    ("nim", lambda a, s: a >= 2, lambda a, s: "○" * a),  # the counters taken, drawn hollow
    ("doublestep", lambda a, s: s == 1, lambda a, s: "●"),  # seat 1's stone, in its lane (the second)
    ("colosseum(size=5)", lambda a, s: True, lambda a, s: f" {'AB'[s]} "),  # the mover's mark, where it went
    ("sorry", _sorry_pawn_move, lambda a, s: "RBYG"[s] + str((a - 15) % 4 + 1)),  # the pawn moved (seat = colour)
])
async def test_every_game_s_replay_marks_the_last_move(store_file: Path, spec: str, wanted: Any, mark: Any) -> None:
    """Issue 18 §3: "the last move highlighted" was Hex's only; every game's board now marks what the move that
    led to the shown position changed, and names it under the board."""
    from arena.tui.data import ReplayData
    from arena.tui.replay import Replay
    from arena.tui.screens import ReplayScreen
    history = _history_until(spec, wanted)
    seat = Replay(spec, history).move(len(history))[0]
    names = ["alice", "bob", "carol", "dave"][:4 if spec == "sorry" else 2]
    data = ReplayData(7, spec, history, names, [0.0] * len(names), ["normal"] * len(names), [],
                      [0.01] * len(history), len(history))
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        app.push_screen(ReplayScreen(data, Replay(data.spec, history)))
        await pilot.pause()
        await pilot.press("end")
        board = app.screen.query_one("#board", Static).render()
        below = board.plain.index("last move: ")
        marked = [board.plain[sp.start:sp.end] for sp in board.spans if "on ansi_yellow" in str(sp.style) and
                  sp.end <= below]  # highlighted on the board itself
        assert marked == [mark(history[-1], seat)]
        if spec == "doublestep":  # in the second lane: the one of seat 1, who moved
            lane = board.plain[:below].splitlines()[1]
            stone = next(sp for sp in board.spans if "on ansi_yellow" in str(sp.style) and sp.end <= below)
            assert board.plain.index(lane) <= stone.start < board.plain.index(lane) + len(lane)
        assert f"last move: {names[seat]}: " in board.plain
        await pilot.press("home")  # the start: no move led here, nothing is marked
        board = app.screen.query_one("#board", Static).render()
        assert "last move" not in board.plain and not [sp for sp in board.spans if "on ansi_yellow" in str(sp.style)]
