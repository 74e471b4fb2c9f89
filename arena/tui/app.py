"""``arena tui``: the Textual dashboard over a results store.

A thread worker polls the store (:class:`arena.tui.data.StoreReader`, every ``poll_interval`` seconds, a
cheap ``PRAGMA data_version`` check when nothing changed) and hands finished :class:`Snapshot` objects to
the UI thread with ``call_from_thread``; the tables then update only the cells that changed. Replays and
bot details load in short thread workers of their own, so the interface never waits on SQLite.
"""
from __future__ import annotations

import gc
import threading
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, VerticalScroll
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from arena.text import shown, text
from arena.tui.data import RECENT_GAMES, Snapshot, StoreReader, Unavailable
from arena.tui.replay import Replay
from arena.tui.screens import BotDetailScreen, GamesListScreen, HelpScreen, PickerScreen, ReplayScreen, SearchScreen
from arena.tui.tables import GamesTable, HeadToHeadTable, LeaderboardTable, LiveTable, prepare
from leaderboards.ratings import ALL

TABS = ("leaderboard", "h2h", "games")
TREND_SLICE = 0.2
"""Seconds of trend reading per slice while a big league's history is being loaded (the UI thread never waits;
the poller leaves it the GIL for a moment between slices)."""


class ArenaApp(App[None]):
    """The dashboard. ``league`` None shows the store's first league; ``poll_interval`` in seconds."""

    CSS_PATH = str(Path(__file__).with_name("app.tcss"))  # absolute: subclasses live elsewhere
    TITLE = "arena"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("1", "tab('leaderboard')", "Board"),
        Binding("2", "tab('h2h')", "H2H"),
        Binding("3", "tab('games')", "Games"),
        Binding("4", "tab('bracket')", "Bracket"),  # (a tournament league's only: check_action)
        Binding("l", "pick_league", "League"),
        Binding("g", "pick_game", "Game"),
        Binding("r", "reload", "Reload", show=False),
        Binding("f", "failed_games", "Failures", show=False),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("s", "sort", "Sort"),
    ]

    def __init__(self, db_path: str | Path, *, league: str | None = None, poll_interval: float = 0.5) -> None:
        super().__init__()
        self.db_path = Path(db_path)
        self.league = league
        self.scope = ALL
        self.poll_interval = poll_interval
        self.snapshot: Snapshot | None = None
        self.message: str | None = None
        """The message shown instead of the tables (missing / empty / newer store), or None."""
        self.snapshots_applied = 0
        self.known_leagues: list[str] = []
        """League names from the last snapshot (or from an unknown-league message), for the picker."""
        self._wake = threading.Event()
        self._h2h_visible = False
        self._force = False
        self._gc_frozen = False
        self.games_limit = RECENT_GAMES
        self._bracket_shown = False
        """Newest games in the games tab; grows by RECENT_GAMES when the cursor reaches the last one."""

    # -- layout ----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="status", classes="title")
        yield Static(id="relaxed")  # SANDBOX RELAXED, shown only for a league that turned sandbox layers off
        with Container(id="message-box"):
            yield Static("Opening the store…", id="message")
        with TabbedContent(id="tabs", initial="leaderboard"):
            with TabPane("Leaderboard", id="leaderboard"):
                yield LeaderboardTable(id="leaderboard-table")
            with TabPane("Head-to-head", id="h2h"):
                yield HeadToHeadTable(id="h2h-table")
            with TabPane("Games", id="games"):
                yield GamesTable(id="games-table")
            with TabPane("Bracket", id="bracket"), VerticalScroll(id="bracket-view"):
                yield Static(id="bracket-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#tabs").display = False
        self.query_one(TabbedContent).hide_tab("bracket")  # shown for a tournament league (_show_bracket)
        self._update_status()
        self.poll_store()

    def on_unmount(self) -> None:
        self._wake.set()  # the poller leaves its wait at once

    # -- polling (worker thread) -----------------------------------------------------------------
    @work(thread=True, exclusive=True, group="poll")
    def poll_store(self) -> None:
        """The poller: a snapshot when something changed, then a slice of trend reading, then a nap."""
        worker = get_current_worker()
        reader = StoreReader(self.db_path)
        try:
            while not worker.is_cancelled:
                force, self._force = self._force, False
                self._wake.clear()
                try:
                    snapshot = reader.poll(self.league, self.scope, force=force, h2h=self._h2h_visible,
                                           limit=self.games_limit)
                except Unavailable as exc:
                    self.known_leagues = exc.leagues or self.known_leagues
                    if not self._deliver(self._show_message, exc.message) or exc.final:
                        return
                else:
                    if snapshot is not None and not self._deliver(self._apply_snapshot, prepare(snapshot)):
                        return
                read = reader.trends.catch_ups
                more = reader.load_trends(TREND_SLICE)
                if more:  # loading a big league's history: leave the UI thread the GIL between slices
                    self._wake.wait(0.02)
                elif reader.trends.catch_ups == read:  # caught up: nap until the next tick
                    self._wake.wait(self.poll_interval)
        finally:
            reader.close()

    def _deliver(self, callback: Any, *args: Any, **kwargs: Any) -> bool:
        """Runs ``callback`` on the UI thread; False when the app is shutting down."""
        if get_current_worker().is_cancelled:
            return False
        try:
            self.call_from_thread(callback, *args, **kwargs)
        except RuntimeError:  # the app has stopped
            return False
        return True

    def _show_message(self, message: str) -> None:
        if not self.is_running:  # the delivery lost the race with the app's closing: its widgets are gone
            return
        if message == self.message and self.snapshot is None:
            return
        self.message = message
        self.snapshot = None
        self.query_one("#message", Static).update(text(message, lines=True))  # names in it: never markup
        self.query_one("#message-box").display = True
        self.query_one("#tabs").display = False
        self._update_status()

    def _apply_snapshot(self, snapshot: Snapshot) -> None:
        if not self.is_running:  # as in _show_message
            return
        if (self.league is not None and snapshot.league != self.league) or \
                (snapshot.scope != self.scope and self.scope in snapshot.scopes):
            return  # built for a selection the user has just changed; the next poll brings the right one
        previous = self.snapshot
        first = previous is None
        if previous is not None and (snapshot.league, snapshot.scope) != (previous.league, previous.scope):
            for table in (self.query_one(LeaderboardTable), self.query_one(GamesTable)):
                table.reset()  # another selection: fresh rows and column widths
        self.snapshot = snapshot
        self.message = None
        self.league = snapshot.league
        self.scope = snapshot.scope
        self.known_leagues = snapshot.leagues
        self.query_one("#message-box").display = False
        self.query_one("#tabs").display = True
        self.query_one(LeaderboardTable).show(snapshot)
        if self._h2h_visible:  # the matrix is drawn only while its tab is shown
            self.query_one(HeadToHeadTable).show(snapshot)
        self.query_one(GamesTable).show(snapshot)
        self._show_bracket(snapshot)
        self._update_status()
        if first:
            self._focus_table()
        if snapshot.trends_complete and not self._gc_frozen:
            # What is loaded now (the history, the widgets) lives as long as the dashboard: out of the cyclic
            # GC's sight, whose full collections otherwise stall the UI 50-135 ms at a time with 200 bots.
            # Once only: what is frozen is still freed by reference counting, only its cycles would stay.
            gc.freeze()
            self._gc_frozen = True
        self.snapshots_applied += 1

    def _show_bracket(self, snapshot: Snapshot) -> None:
        """The Bracket tab: shown with its text for a tournament league, hidden otherwise (key 4 too)."""
        tabs = self.query_one(TabbedContent)
        wanted = snapshot.bracket is not None
        if snapshot.bracket is not None:
            self.query_one("#bracket-text", Static).update(snapshot.bracket)  # (a Text: names never markup)
        if wanted == self._bracket_shown:
            return
        self._bracket_shown = wanted
        if wanted:
            tabs.show_tab("bracket")
        else:
            if tabs.active == "bracket":  # another league picked: back to its leaderboard
                tabs.active = "leaderboard"
                self._focus_table()
            tabs.hide_tab("bracket")
        self.refresh_bindings()

    def _update_status(self) -> None:
        s = self.snapshot
        if s is None:
            line = Text.assemble(("arena", "bold"), f"  {shown(self.db_path)}")
        else:
            scope = "all games" if s.scope == ALL else shown(s.scope)
            line = Text.assemble(("arena", "bold"), "  league ", (shown(s.league), "bold cyan"), "  ", (scope, "bold"),
                                 f"  {s.n_games} games  {len(s.leaderboard)} bots")
            table = self._listed() if self.query_one("#tabs").display else None
            if table is not None and table.search:  # what the table hides or reorders, said (search: escaped)
                line.append(f"  rows with '{shown(table.search)}'", style="bold yellow")
            if table is not None and table.order and table.order != next(iter(table.SORTS)):
                line.append(f"  sorted by {table.order_label()}", style="bold yellow")
            if table is not None and table.cut:  # the head-to-head's cap: say that more bots are there
                shown_bots, there = table.cut
                line.append(f"  {'first' if table.search else 'top'} {shown_bots} of {there} bots"
                            f"{'' if table.search else ' (/ finds others)'}", style="bold yellow")
            if s.running:  # a league runner is playing this store: done/total, rate, ETA, games at once
                line.append(f"  {s.running}", style="bold green")
            if s.provisional:
                line.append(f"  provisional ({s.provisional} games rated out of order)", style="italic yellow")
            if s.trends_note:
                line.append(f"  {s.trends_note}", style="italic grey50")
            elif not s.trends_complete:
                line.append("  trends loading…", style="italic grey50")
        self.query_one("#status", Static).update(line)
        relaxed = self.query_one("#relaxed", Static)
        relaxed.display = bool(s and s.relaxed)
        if s and s.relaxed:  # as `arena leaderboard` says it; the reasons come from the store, shown escaped
            relaxed.update(Text.assemble(("SANDBOX RELAXED", "bold red"),
                                         f" in this league: {shown('; '.join(s.relaxed))}"))

    def wake(self, *, force: bool = False) -> None:
        """Polls now instead of at the next tick (after a selection change)."""
        self._force = self._force or force
        self._wake.set()

    # -- actions ---------------------------------------------------------------------------------
    MAIN_ONLY = frozenset({"tab", "pick_league", "pick_game", "reload", "failed_games", "search", "sort"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The dashboard's own keys work (and show in the footer) only on the dashboard, not over a replay; the
        Bracket tab's only for a tournament league."""
        if action == "tab" and parameters == ("bracket",) and (self.snapshot is None or self.snapshot.bracket is None):
            return False
        return not (action in self.MAIN_ONLY and len(self.screen_stack) > 1)

    def action_tab(self, tab: str) -> None:
        if self.query_one("#tabs").display:
            self.query_one(TabbedContent).active = tab
            self._focus_table()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._focus_table()
        self._update_status()  # the search and sort shown are the active table's
        visible = self.query_one(TabbedContent).active == "h2h"
        if visible != self._h2h_visible:  # the head-to-head counts are queried only while they are shown
            self._h2h_visible = visible
            if visible and self.snapshot is not None:
                self.query_one(HeadToHeadTable).show(self.snapshot)
            self.wake()

    def _focus_table(self) -> None:
        active = self.query_one(TabbedContent).active
        if active == "bracket":  # text, scrolled with the arrow keys
            self.query_one("#bracket-view").focus()
            return
        self.query_one(f"#{active}-table", DataTable).focus()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_reload(self) -> None:
        self.wake(force=True)

    def action_pick_league(self) -> None:
        if not self.known_leagues:
            return

        def chosen(name: str | None) -> None:
            if name is not None and name != self.league:
                self.league, self.scope = name, ALL
                self.wake()
        self.push_screen(PickerScreen("League", [(n, n) for n in self.known_leagues], self.league), chosen)

    def action_pick_game(self) -> None:
        if self.snapshot is None:
            return
        choices = [(s, "all games" if s == ALL else s) for s in self.snapshot.scopes]

        def chosen(scope: str | None) -> None:
            if scope is not None and scope != self.scope:
                self.scope = scope
                self.wake()
        self.push_screen(PickerScreen("Game", choices, self.snapshot.scope), chosen)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The games tab loads older games when its cursor reaches the last row (RECENT_GAMES more each time)."""
        table = event.data_table
        if isinstance(table, GamesTable) and table.id == "games-table" and table.row_count >= self.games_limit \
                and event.cursor_row >= table.row_count - 1:
            self.games_limit += RECENT_GAMES
            self.wake()

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        """Enter on the head-to-head: on a bot's name its detail, on a cell the games behind that number."""
        if not isinstance(event.data_table, HeadToHeadTable) or event.cell_key.row_key.value is None:
            return
        row, column = int(event.cell_key.row_key.value), event.cell_key.column_key.value
        if column in (None, "bot") or int(column) == row:
            self.open_bot(row)
        else:
            self.open_games(row, opponent=int(column))

    def _listed(self) -> LiveTable | None:
        """The table that search and sort apply to: the active tab's."""
        active = self.query_one(TabbedContent).active
        return self.query_one(f"#{active}-table", LiveTable) if active in TABS else None

    def action_search(self) -> None:
        table = self._listed()
        if table is None:
            return

        def chosen(text: str | None) -> None:
            if text is not None:
                table.search = text
                self._reshow(table)
        self.push_screen(SearchScreen(table.search, table.SEARCH_HINT), chosen)

    def action_sort(self) -> None:
        table = self._listed()
        if table is None:
            return

        def chosen(order: str | None) -> None:
            if order is not None:
                table.choose_order(order)
                self._reshow(table)
        self.push_screen(PickerScreen("Sort by", [(k, k) for k in table.SORTS], table.order or next(iter(table.SORTS))),
                         chosen)

    def _reshow(self, table: LiveTable) -> None:
        if self.snapshot is not None:
            table.show(self.snapshot)
        self._update_status()
        table.focus()

    def action_failed_games(self) -> None:
        """The games behind the selected bot's failure count."""
        board = self.query_one(LeaderboardTable)
        key = board.selected_key()
        if key is not None and self.query_one(TabbedContent).active == "leaderboard":
            self.open_games(int(key), failed=True)

    @work(thread=True, group="load", exclusive=True, exit_on_error=False)
    def open_games(self, bot_id: int, *, opponent: int | None = None, failed: bool = False) -> None:
        reader = StoreReader(self.db_path)
        try:
            rows = reader.games_of(bot_id, opponent=opponent, failed=failed, scope=self.scope)
        except Unavailable as exc:
            self._deliver(self.notify, shown(exc), severity="error", markup=False)
            return
        finally:
            reader.close()
        labels = self.snapshot.labels if self.snapshot else {}
        name = labels.get(bot_id, f"bot {bot_id}")
        title = f"{name}: games it failed in" if failed else f"{name} against {labels.get(opponent or 0, opponent)}"
        self._deliver(self._push_once, GamesListScreen(title, rows))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key is None:
            return
        if isinstance(event.data_table, GamesTable):
            self.open_replay(int(key))
        elif isinstance(event.data_table, (LeaderboardTable, HeadToHeadTable)):
            self.open_bot(int(key))

    def _push_once(self, screen: Any) -> None:
        """Pushes a replay or bot screen unless one is already open, so that Enter pressed twice while the first
        is loading stacks one screen, not two (Esc would show the same replay again)."""
        if not isinstance(self.screen, type(screen)):
            self.push_screen(screen)

    @work(thread=True, group="load", exclusive=True, exit_on_error=False)
    def open_replay(self, game_id: int) -> None:
        reader = StoreReader(self.db_path)
        try:
            data = reader.replay(game_id)
            replay = Replay(data.spec, data.history, data.opening)
        except (Unavailable, ValueError, ImportError) as exc:
            self._deliver(self.notify, shown(f"cannot replay game {game_id}: {exc}"), severity="error", markup=False)
            return
        finally:
            reader.close()
        self._deliver(self._push_once, ReplayScreen(data, replay))

    @work(thread=True, group="load", exclusive=True, exit_on_error=False)
    def open_bot(self, bot_id: int) -> None:
        reader = StoreReader(self.db_path)
        try:
            detail = reader.bot_detail(bot_id, self.scope)
        except Unavailable as exc:
            self._deliver(self.notify, shown(exc), severity="error", markup=False)
            return
        finally:
            reader.close()
        row = next((r for r in self.snapshot.leaderboard if r.bot_id == bot_id), None) if self.snapshot else None
        self._deliver(self._push_once, BotDetailScreen(detail, row))


def run(db_path: str | Path, league: str | None = None) -> None:
    """Runs the dashboard until the user quits."""
    ArenaApp(db_path, league=league).run()
