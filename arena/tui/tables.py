"""The three live tables. Each ``show(snapshot)`` updates its DataTable in place.

Rebuilding a DataTable every tick is slow with many rows and makes the cursor jump, so only cells whose
text or style changed are rewritten (``update_cell``), rows are added only for new keys, removed only for
keys that left, and the rows are re-sorted only when the order changed. Cells are compared as plain
``(text, style, justify)`` tuples; a rich Text is made only for a cell that is written.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, NamedTuple

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, ColumnKey

from arena.text import shown
from arena.tui.data import GameRow, LeaderRow, Snapshot
from arena.tui.format import rate_style, seconds, sparkline
from leaderboards.ratings import elo_text

TREND_WIDTH = 10
H2H_MAX_BOTS = 20
"""The head-to-head matrix shows the top bots only (a 200 x 200 matrix is neither readable nor cheap)."""


class Cell(NamedTuple):
    text: str
    style: str = ""
    justify: str = "left"

    def render(self) -> Text:
        return Text(self.text, style=self.style, justify=self.justify)  # type: ignore[arg-type]


def right(text: str, style: str = "") -> Cell:
    return Cell(text, style, "right")


class LiveTable(DataTable):
    """A DataTable that syncs to a list of (key, cells) rows without rebuilding."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "select_cursor", "Open"),
                                             Binding("home", "first_row", "First", show=False),
                                             Binding("end", "last_row", "Last", show=False)]

    def action_first_row(self) -> None:
        self.move_cursor(row=0)

    def action_last_row(self) -> None:
        """The cursor to the last row (in the games tab: older games load from there)."""
        self.move_cursor(row=max(0, self.row_count - 1))
    COLUMNS: Sequence[tuple[str, str]] = ()
    """(key, label) of every column; the first column's cells start with the row's order number."""
    DESCENDING = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._cells: dict[str, tuple[Cell, ...]] = {}
        self._rendered: dict[tuple[Any, ...], Any] = {}
        """Rendered cells by (place, content, look): see ``_render_cell``."""
        self.cell_updates = 0
        """Cells rewritten since the table was made (the tests check that unchanged cells are left alone)."""
        for key, label in self.COLUMNS:
            self.add_column(label, key=key)

    NAME = ""
    """The key of this table's rows in ``Snapshot.prepared``."""

    RENDERED_MAX = 20_000
    """Rendered cells kept (a 200-row table of 12 columns with cursor, hover and zebra variants fits)."""

    def _render_cell(self, row_index: int, column_index: int, *args: Any, **kwargs: Any) -> Any:
        """DataTable keys its render caches by one table-wide update counter, so after any ``update_cell`` it
        renders every visible cell again (~0.4 ms each: 0.15-0.2 s a repaint with 36 rows on screen). Here a
        cell is rendered again only when its content, its place or its look (the arguments: base style, width,
        cursor, hover; the focus state) changed; the output is DataTable's own."""
        try:
            cell_key = self.coordinate_to_cell_key(Coordinate(row_index, column_index))
            content = self._cells[cell_key.row_key.value or ""][column_index]
        except (CellDoesNotExist, KeyError, IndexError):  # the header, or a row being built
            return super()._render_cell(row_index, column_index, *args, **kwargs)
        key = (row_index, column_index, cell_key.row_key.value, content, args, tuple(sorted(kwargs.items())),
               self._show_hover_cursor, self._pseudo_class_state)
        lines = self._rendered.get(key)
        if lines is None:
            if len(self._rendered) >= self.RENDERED_MAX:
                self._rendered.clear()
            lines = self._rendered[key] = super()._render_cell(row_index, column_index, *args, **kwargs)
        return lines

    def _clear_caches(self) -> None:
        super()._clear_caches()
        if hasattr(self, "_rendered"):  # DataTable.__init__ clears its caches before ours exists
            self._rendered.clear()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if hasattr(self, "_rendered"):
            self._rendered.clear()

    @classmethod
    def build_rows(cls, snapshot: Snapshot) -> list[tuple[str, list[Cell]]]:
        """(row key, cells) of every row, in order; pure, so it can run on the worker thread."""
        raise NotImplementedError

    def _rows_of(self, snapshot: Snapshot) -> list[tuple[str, list[Cell]]]:
        rows = snapshot.prepared.get(self.NAME)
        return rows if rows is not None else self.build_rows(snapshot)

    SORTS: ClassVar[dict[str, tuple[int, bool]]] = {}
    """Sort name -> (column index, descending) offered by ``s``; the first one is the table's own order."""
    SEARCH_HINT = "Show the rows containing (empty: all rows)"
    search = ""
    """Rows whose text does not contain this (any case) are hidden (``/``). Matched against the cells as drawn,
    names escaped (``arena.text.shown``): a pasted raw name is escaped the same way before it is compared."""
    order = ""
    """The chosen sort (a key of SORTS; "" is the table's own order)."""
    cut: tuple[int, int] | None = None
    """(bots shown, bots there) when the table shows fewer than would match (the head-to-head's cap), else None."""

    def searched(self, cells: Sequence[Cell]) -> Iterable[str]:
        """The texts of a row that ``/`` looks in: every cell's."""
        return (c.text for c in cells)

    def matches(self, cells: Sequence[Cell]) -> bool:
        needle = shown(self.search).casefold()
        return any(needle in t.casefold() for t in self.searched(cells))

    def sort_key(self, order: str) -> Callable[[tuple[str, Sequence[Cell]]], tuple[int, float | str]] | None:
        """The key of the rows for the sort ``order`` (None: the table's own order); by SORTS' column's value."""
        column = self.SORTS[order][0]
        return lambda r: sort_value(r[1][column].text)

    def choose_order(self, order: str) -> None:
        """``s`` picked ``order`` (a key of SORTS)."""
        self.order = order

    def order_label(self) -> str:
        """The sort in force as the status line says it."""
        return self.order

    def view(self, rows: list[tuple[str, list[Cell]]]) -> list[tuple[str, list[Cell]]]:
        """``rows`` searched and sorted as the user asked (the snapshot's rows stay as they are)."""
        if self.search:
            rows = [r for r in rows if self.matches(r[1])]
        key = self.sort_key(self.order) if self.order in self.SORTS and self.order != next(iter(self.SORTS)) \
            else None
        if key is not None:
            rows = sorted(rows, key=key, reverse=self.SORTS[self.order][1])
            rows.sort(key=lambda r: key(r)[0])  # (stable) a missing value ("-", "·") last, whichever the direction
        return rows

    def show(self, snapshot: Snapshot) -> None:
        self.sync(self.view(self._rows_of(snapshot)))

    def reset(self) -> None:
        """Forgets every row (a new league or game filter): the next ``show`` measures its columns afresh,
        since live updates only ever widen them."""
        self.clear()
        self._cells.clear()
        for column in self.columns.values():  # clear() keeps the columns at their widest
            column.content_width = column.label.cell_len

    def selected_key(self) -> str | None:
        """The key of the row under the cursor (None in an empty table)."""
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value
        except CellDoesNotExist:
            return None

    def follow(self, key: str | None) -> None:
        """Puts the cursor back on the row ``key`` (the selection follows the bot or game, not the row index)."""
        if key is None or key not in self._cells:
            return
        index = self.get_row_index(key)
        if index != self.cursor_row:
            self.move_cursor(row=index, animate=False)

    def sync(self, rows: Sequence[tuple[str, Sequence[Cell]]], selected: str | None = None) -> None:
        """Makes the table show ``rows`` (in that order), touching only what changed; the cursor stays on the row
        it was on (or on ``selected``), wherever a re-rank or new games move it."""
        selected = self.selected_key() if selected is None else selected
        wanted = [key for key, _ in rows]
        wanted_set = set(wanted)
        for key in [k for k in self._cells if k not in wanted_set]:
            self.remove_row(key)
            del self._cells[key]
        columns = [key for key, _ in self.COLUMNS]
        for key, cells in rows:
            cells = tuple(cells)
            old = self._cells.get(key)
            if old is None:
                self.add_row(*(c.render() for c in cells), key=key)
            elif old != cells:
                for column, before, after in zip(columns, old, cells):
                    if before != after:
                        text = after.render()
                        # Widen the column here, not with update_width=True: DataTable would measure the cell
                        # only when idle (a frame drawn in between stays cached with the cell cut), and a
                        # cell narrower than its column makes it re-measure the whole column: 200 rows for
                        # every changed cell, 0.3 s a snapshot with 200 bots. Columns only grow.
                        col = self.columns[ColumnKey(column)]
                        if text.cell_len > col.content_width:
                            col.content_width = text.cell_len
                            self._require_update_dimensions = True
                        self.update_cell(key, column, text)
                        self.cell_updates += 1
            self._cells[key] = cells
        if [row.key.value for row in self.ordered_rows] != wanted:
            # rows in the order given (a rank, the newest game first, or the user's sort); the first column's
            # text (a rank or a game id) tells the rows apart
            place = {cells[0].text: i for i, (_, cells) in enumerate(rows)}
            self.sort(columns[0], key=lambda cell: place.get(cell.plain, len(place)))
        self.follow(selected)


def elo_cells(row: LeaderRow) -> list[Cell]:
    """The batch Elo with its 95% interval, and the tied group (bots whose intervals overlap; docs/ratings.md)."""
    if not row.fitted:  # (not fitted yet)
        return [right("-", "dim"), right("-", "dim")]
    text, group = elo_text(row.elo, row.elo_low, row.elo_high), row.group
    if group is None:  # no games: unrated, no interval and no group claimed
        return [right(text, "dim"), right("-", "dim")]
    return [right(text), right(f"g{group}", "dim" if group > 1 else "")]


class LeaderboardTable(LiveTable):
    # What an 80-column screen must show comes first: rank, name, the rating it is ranked by, games and its trend;
    # μ and σ (the rating's parts, also on the bot's page) last, reached by scrolling sideways
    COLUMNS = (("rank", "#"), ("bot", "bot"), ("exposed", "μ-3σ"), ("games", "games"), ("trend", "μ-3σ trend"),
               ("wdl", "W/D/L"), ("fail", "fail"), ("elo", "Elo (95%)"), ("tied", "tied"), ("mu", "μ"), ("sigma", "σ"))

    NAME = "leaderboard"
    SORTS: ClassVar[dict[str, tuple[int, bool]]] = {
        "rank (μ-3σ)": (0, False), "μ": (9, True), "σ (most uncertain first)": (10, True), "games": (3, True),
        "wins": (5, True), "failures": (6, True), "name": (1, False)}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fixed_columns = 2  # rank and name stay in sight while the table scrolls sideways

    @classmethod
    def build_rows(cls, snapshot: Snapshot) -> list[tuple[str, list[Cell]]]:
        scale = trend_scale(snapshot.leaderboard)
        return [(str(row.bot_id), cls.cells(rank, row, scale)) for rank, row in enumerate(snapshot.leaderboard, 1)]

    @staticmethod
    def cells(rank: int, row: LeaderRow, scale: tuple[float, float] | None = None) -> list[Cell]:
        if row.status == "active":
            label = Cell(row.label)
        else:
            label = Cell(f"{row.label} ({row.status})", "yellow" if row.status == "probation" else "dim italic")
        return [right(str(rank)), label, right(f"{row.exposed:.2f}", "bold"), right(str(row.games)),
                Cell(trend_line(row.trend, scale), "cyan"), Cell(f"{row.wins}/{row.draws}/{row.losses}"),
                right(str(row.failures), "red" if row.failures else ""), *elo_cells(row),
                right(f"{row.mu:.2f}"), right(f"{row.sigma:.2f}")]


_TREND_LINES: dict[int, tuple[tuple[float, ...], tuple[float, float] | None, str]] = {}
_TREND_RANGES: dict[int, tuple[tuple[float, ...], float, float]] = {}


def trend_scale(rows: list[LeaderRow]) -> tuple[float, float] | None:
    """The lowest and highest μ-3σ over every bot's trend: one scale for all sparklines, so a bot whose line
    is low is low against the others (scaled per bot, a losing bot's rising μ-3σ would look like a winner's)."""
    lo = hi = None
    for row in rows:
        if not row.trend:
            continue
        hit = _TREND_RANGES.get(id(row.trend))  # min/max once per trend tuple (they are long at 100k games)
        if hit is None or hit[0] is not row.trend:
            if len(_TREND_RANGES) > 4096:
                _TREND_RANGES.clear()
            hit = _TREND_RANGES[id(row.trend)] = (row.trend, min(row.trend), max(row.trend))
        lo = hit[1] if lo is None else min(lo, hit[1])
        hi = hit[2] if hi is None else max(hi, hit[2])
    return None if lo is None or hi is None else (lo, hi)


def trend_line(trend: tuple[float, ...], scale: tuple[float, float] | None = None) -> str:
    """The leaderboard's sparkline of a trend on the shared ``scale``. A trend tuple stays the same object until
    its bot plays again (the reader caches them), so each is squeezed once per scale, not on every poll (4,000
    points a bot at 100k games)."""
    hit = _TREND_LINES.get(id(trend))
    if hit is not None and hit[0] is trend and hit[1] == scale:
        return hit[2]
    if len(_TREND_LINES) > 4096:  # trends replaced by newer ones: forget them all now and then
        _TREND_LINES.clear()
    line = sparkline(trend, TREND_WIDTH, *(scale or (None, None)))
    _TREND_LINES[id(trend)] = (trend, scale, line)
    return line


def sort_value(text: str) -> tuple[int, float | str]:
    """A cell's text as a sort key: numbers (``12``, ``-0.10``, ``14/0/10``'s wins, ``12.3ms``, ``1.25s``, the rate of
    ``62% 13``) by value, anything else by its text."""
    head = text.split("/")[0].split()[0] if text.split() else ""
    for suffix, scale in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("%", 0.01), ("", 1.0)):
        if head.endswith(suffix):
            try:
                return (0, float(head[:len(head) - len(suffix)] if suffix else head) * scale)
            except ValueError:
                continue
    return (1, text.casefold())


class GamesTable(LiveTable):
    # the numbers first: at 80 columns long names pushed moves and time off the screen
    COLUMNS = (("id", "id"), ("moves", "moves"), ("time", "time"), ("game", "game"), ("reason", "end"),
               ("result", "winner"), ("players", "players"))
    DESCENDING = True  # newest first

    NAME = "games"
    SORTS: ClassVar[dict[str, tuple[int, bool]]] = {
        "newest first": (0, True), "oldest first": (0, False), "moves": (1, True), "time": (2, True),
        "game": (3, False)}

    @classmethod
    def build_rows(cls, snapshot: Snapshot) -> list[tuple[str, list[Cell]]]:
        return [(str(g.id), cls.cells(g)) for g in snapshot.games]

    @staticmethod
    def cells(g: GameRow) -> list[Cell]:
        return [right(str(g.id)), right(str(g.moves)), right(seconds(g.duration)), Cell(g.game),
                Cell(g.reason, "" if g.reason == "normal" else "bold red"), Cell(g.winner), Cell(" v ".join(g.players))]


def win_rate(wins: int, draws: int, losses: int) -> Cell:
    """``62% 13``: the score rate (a draw counts half) and the number of games, coloured by the rate."""
    games = wins + draws + losses
    if games == 0:
        return Cell("·", "grey50", "center")
    rate = (wins + 0.5 * draws) / games
    return right(f"{rate * 100:3.0f}% {games}", rate_style(rate))


class HeadToHeadTable(LiveTable):
    """Row bot against column bot: score rate and games, coloured. The top H2H_MAX_BOTS bots by rank, or with
    ``/`` the first H2H_MAX_BOTS (by rank) of all the bots whose name contains the text.

    The search picks the bots of the matrix, rows and columns alike: the columns are headed by rank numbers
    only (names are too wide), so a column is readable only when its bot is also a row on the same screen,
    and a square keeps the diagonal and Enter's meaning (a name opens the bot, a cell the games of a pair).
    One student's results against everyone are in its detail (Enter on its name); a common prefix (a group,
    a section) shows that group's games against each other. The sort (``s``) orders the rows only: the columns
    stay by rank, as a spreadsheet's columns stay put when its rows are sorted by one of them."""

    COLUMNS: Sequence[tuple[str, str]] = (("bot", "bot"),)
    NAME = "h2h"
    AGAINST = "score against the cursor's column"
    SORTS: ClassVar[dict[str, tuple[int, bool]]] = {
        "rank (μ-3σ)": (0, False), "name": (0, False), "games": (0, True), AGAINST: (0, True)}
    SEARCH_HINT = f"Show the bots whose name contains (of all bots, the first {H2H_MAX_BOTS}; empty: the top)"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fixed_columns = 1  # the row bot stays in sight while a wide matrix scrolls sideways (left/right)
        self.cursor_type = "cell"
        self.against: str | None = None
        """The bot (key) whose column the AGAINST sort reads, fixed when that sort is chosen."""
        self._games: dict[str, int] = {}
        self._labels: dict[str, str] = {}

    def searched(self, cells: Sequence[Cell]) -> Iterable[str]:
        """The row bot's name only (its cell is ``rank name``): not the numbers of the matrix, not the rank."""
        return (cells[0].text.split(" ", 1)[-1],)

    def sort_key(self, order: str) -> Callable[[tuple[str, Sequence[Cell]]], tuple[int, float | str]] | None:
        if order == "name":
            return lambda r: (1, r[1][0].text.split(" ", 1)[-1].casefold())
        if order == "games":  # the bot's rated games, as the leaderboard counts them
            return lambda r: (0, float(self._games.get(r[0], 0)))
        if order == self.AGAINST:
            keys = [key for key, _ in self.COLUMNS]
            if self.against not in keys:  # that bot left the matrix (another search): the rank order
                return None
            column = keys.index(self.against)
            return lambda r: sort_value(r[1][column].text)  # "·" (never met) and "—" (itself) go last
        return super().sort_key(order)

    def choose_order(self, order: str) -> None:
        """The AGAINST sort reads the column under the cursor now (on the names: the row's bot), not wherever the
        cursor goes next."""
        if order == self.AGAINST:
            row, column = self.selected_cell()
            self.against = row if column in (None, "bot") else column
        self.order = order

    def order_label(self) -> str:
        if self.order == self.AGAINST:
            return f"score against {self._labels.get(self.against or '', '?')}"
        return self.order

    def selected_cell(self) -> tuple[str | None, str | None]:
        """The row and column keys under the cell cursor ((None, None) in an empty table)."""
        if not self.row_count:
            return None, None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate)
        except CellDoesNotExist:
            return None, None
        return key.row_key.value, key.column_key.value

    def fit_names(self) -> None:
        """Widens the bot column by the width's remainder so that the scrolling part shows whole columns: then
        scrolling by whole columns also reaches the last one (the matrix's columns are all as wide)."""
        columns = list(self.ordered_columns)
        if len(columns) < 2:
            return
        names = columns[0]
        natural = max(names.content_width, names.label.cell_len)
        pad = 2 * self.cell_padding
        step = columns[-1].get_render_width(self)
        rest = self.scrollable_content_region.width - (natural + pad)
        cells = sum(c.get_render_width(self) for c in columns[1:])
        extra = rest % step if step and cells > rest > 0 else 0
        if names.auto_width or names.width != natural + extra:
            names.auto_width, names.width = False, natural + extra
            self._require_update_dimensions = True
            self.refresh()

    def on_resize(self) -> None:
        self.fit_names()

    def watch_scroll_x(self, old: float, new: float) -> None:
        """Scrolls sideways by whole columns: beside the fixed bot column a partly scrolled column would show the
        tail of its cells ("% 2") as if it belonged to the bot's name."""
        edges, x = [0], 0
        for column in list(self.ordered_columns)[self.fixed_columns:]:
            x += column.get_render_width(self)
            edges.append(x)
        snapped = min((e for e in edges if e >= new), default=new) if new >= old else \
            max((e for e in edges if e <= new), default=0)
        snapped = min(snapped, self.max_scroll_x) if snapped > self.max_scroll_x and new < self.max_scroll_x \
            else snapped
        if snapped != new and snapped <= self.max_scroll_x:
            self.scroll_x = snapped
            return
        super().watch_scroll_x(old, new)

    @staticmethod
    def name_cell(rank: int, row: LeaderRow) -> Cell:
        return Cell(f"{rank} {row.label}")

    @classmethod
    def build_rows(cls, snapshot: Snapshot, bots: Sequence[LeaderRow] | None = None) -> list[tuple[str, list[Cell]]]:
        """The matrix of ``bots`` (default: the top H2H_MAX_BOTS) in the order given, each named by its rank."""
        top = snapshot.leaderboard[:H2H_MAX_BOTS] if bots is None else bots
        ranks = {r.bot_id: i for i, r in enumerate(snapshot.leaderboard, 1)} if bots is not None else \
            {r.bot_id: i for i, r in enumerate(top, 1)}
        rows = []
        for a in top:
            cells = [cls.name_cell(ranks[a.bot_id], a)]
            for b in top:
                cells.append(Cell("—", "grey50", "center") if a.bot_id == b.bot_id
                             else win_rate(*snapshot.h2h.get((a.bot_id, b.bot_id), (0, 0, 0))))
            rows.append((str(a.bot_id), cells))
        return rows

    def _matrix(self, snapshot: Snapshot) -> list[tuple[str, list[Cell]]]:
        """The rows of the bots the matrix shows: the prepared top, or the searched ones from every bot."""
        board = snapshot.leaderboard
        if not self.search:
            self.cut = (H2H_MAX_BOTS, len(board)) if len(board) > H2H_MAX_BOTS else None
            return self._rows_of(snapshot)
        found = [row for rank, row in enumerate(board, 1) if self.matches([self.name_cell(rank, row)])]
        self.cut = (H2H_MAX_BOTS, len(found)) if len(found) > H2H_MAX_BOTS else None
        return self.build_rows(snapshot, found[:H2H_MAX_BOTS])  # at most 20 x 20 cells, on the UI thread

    def show(self, snapshot: Snapshot) -> None:
        self._games = {str(r.bot_id): r.games for r in snapshot.leaderboard}
        self._labels = {str(r.bot_id): r.label for r in snapshot.leaderboard}
        matrix = self._matrix(snapshot)
        header = [(key, "#" + cells[0].text.split(" ", 1)[0]) for key, cells in matrix]  # columns by rank
        row, column = self.selected_cell()  # (clearing the columns below forgets the cursor)
        if [(c.key.value, c.label.plain) for c in self.ordered_columns[1:]] != header:
            # other bots or another ranking: columns must move, which DataTable cannot do in place
            self.clear(columns=True)
            self._cells.clear()
            self.add_column("bot", key="bot")
            for key, label in header:
                self.add_column(label, key=key)
        self.COLUMNS = [("bot", "bot")] + [(key, "") for key, _ in header]
        self.sync(self.view(matrix), row)  # the rows searched (already) and sorted
        if column is not None and column in self.columns and self.row_count:  # the cursor keeps its column too
            index = self.get_column_index(column)
            if index != self.cursor_column:
                self.move_cursor(column=index, animate=False)
        self.fit_names()


TABLES = (LeaderboardTable, GamesTable, HeadToHeadTable)


def prepare(snapshot: Snapshot) -> Snapshot:
    """Builds every table's cells on the worker thread, so the UI thread only compares and writes."""
    for table in TABLES:
        snapshot.prepared[table.NAME] = table.build_rows(snapshot)
    return snapshot
