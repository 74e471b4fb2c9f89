"""The three live tables. Each ``show(snapshot)`` updates its DataTable in place.

Rebuilding a DataTable every tick is slow with many rows and makes the cursor jump, so only cells whose
text changed are rewritten (``update_cell``), rows are added only for new keys, removed only for keys that
left, and the rows are re-sorted only when the order changed.
"""
from __future__ import annotations

from typing import Any, Sequence

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from arena.tui.data import GameRow, LeaderRow, Snapshot
from arena.tui.format import seconds, sparkline, win_rate_cell

TREND_WIDTH = 10


def _plain(value: Any) -> str:
    return value.plain if isinstance(value, Text) else str(value)


class LiveTable(DataTable):  # type: ignore[type-arg]
    """A DataTable that syncs to a list of (key, cells) rows without rebuilding."""

    BINDINGS = [Binding("enter", "select_cursor", "Open")]
    COLUMNS: Sequence[tuple[str, str]] = ()
    """(key, label) of every column; the first column's cells start with the row's order number."""
    DESCENDING = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._cells: dict[str, tuple[str, ...]] = {}
        self.cell_updates = 0
        """Cells rewritten since the table was made (the tests check that unchanged cells are left alone)."""
        for key, label in self.COLUMNS:
            self.add_column(label, key=key)

    def sync(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Makes the table show ``rows`` (in that order), touching only what changed."""
        wanted = [key for key, _ in rows]
        for key in [k for k in self._cells if k not in set(wanted)]:
            self.remove_row(key)
            del self._cells[key]
        columns = [key for key, _ in self.COLUMNS]
        for key, cells in rows:
            plain = tuple(_plain(c) for c in cells)
            old = self._cells.get(key)
            if old is None:
                self.add_row(*cells, key=key)
            elif old != plain:
                for column, value, before, after in zip(columns, cells, old, plain):
                    if before != after:
                        self.update_cell(key, column, value)
                        self.cell_updates += 1
            self._cells[key] = plain
        if [row.key.value for row in self.ordered_rows] != wanted:
            # the first column of every live table holds the order (a rank or a game id)
            first = columns[0]
            self.sort(first, key=lambda cell: int(_plain(cell).split()[0]), reverse=self.DESCENDING)


class LeaderboardTable(LiveTable):
    COLUMNS = (("rank", "#"), ("bot", "bot"), ("mu", "μ"), ("sigma", "σ"), ("exposed", "μ-3σ"), ("games", "games"),
               ("wdl", "W/D/L"), ("fail", "fail"), ("trend", "trend"))

    def show(self, snapshot: Snapshot) -> None:
        self.sync([(str(row.bot_id), self.cells(rank, row)) for rank, row in enumerate(snapshot.leaderboard, 1)])

    @staticmethod
    def cells(rank: int, row: LeaderRow) -> list[Any]:
        label = Text(row.label, style="" if row.status == "active" else "dim italic")
        if row.status == "probation":
            label.append(" (probation)", style="yellow")
        return [Text(str(rank), justify="right"), label, Text(f"{row.mu:.2f}", justify="right"),
                Text(f"{row.sigma:.2f}", justify="right"), Text(f"{row.exposed:.2f}", style="bold", justify="right"),
                Text(str(row.games), justify="right"), f"{row.wins}/{row.draws}/{row.losses}",
                Text(str(row.failures), style="red" if row.failures else "", justify="right"),
                Text(sparkline(row.trend, TREND_WIDTH), style="cyan")]


class GamesTable(LiveTable):
    COLUMNS = (("id", "id"), ("game", "game"), ("players", "players"), ("result", "winner"), ("reason", "end"),
               ("moves", "moves"), ("time", "time"))
    DESCENDING = True  # newest first

    def show(self, snapshot: Snapshot) -> None:
        self.sync([(str(g.id), self.cells(g)) for g in snapshot.games])

    @staticmethod
    def cells(g: GameRow) -> list[Any]:
        reason = Text(g.reason, style="" if g.reason == "normal" else "bold red")
        return [Text(str(g.id), justify="right"), g.game, " v ".join(g.players), g.winner, reason,
                Text(str(g.moves), justify="right"), Text(seconds(g.duration), justify="right")]


class HeadToHeadTable(LiveTable):
    """Row bot against column bot: score rate (a draw counts half) and games, coloured; columns by rank."""

    COLUMNS = (("bot", "bot"),)

    def show(self, snapshot: Snapshot) -> None:
        bots = [row.bot_id for row in snapshot.leaderboard]
        columns = [str(b) for b in bots]
        if [c.key.value for c in self.ordered_columns[1:]] != columns:
            # the bot set or the ranking changed: the columns must move, which DataTable cannot do in place
            self.clear(columns=True)
            self._cells.clear()
            self.add_column("bot", key="bot")
            for rank, b in enumerate(bots, 1):
                self.add_column(f"#{rank}", key=str(b))
        self.COLUMNS = [("bot", "bot")] + [(str(b), "") for b in bots]
        rows = []
        for rank, a in enumerate(snapshot.leaderboard, 1):
            cells: list[Any] = [Text(f"{rank} {a.label}")]
            for b in bots:
                if a.bot_id == b:
                    cells.append(Text("—", style="grey50", justify="center"))
                else:
                    cells.append(win_rate_cell(*snapshot.h2h.get((a.bot_id, b), (0, 0, 0))))
            rows.append((str(a.bot_id), cells))
        self.sync(rows)
