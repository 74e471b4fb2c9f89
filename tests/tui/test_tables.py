"""The live tables' own render cache: after a change only the changed cells are rendered again, and what is
drawn is never stale."""
from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from arena.tui.tables import Cell, GamesTable, right


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield GamesTable(id="t")


def rows(n: int, changed: int | None = None) -> list[tuple[str, list[Cell]]]:
    out = []
    for i in range(n, 0, -1):  # newest first, as the games table shows them
        winner = "botX" if i == changed else f"bot{i % 7}"  # the same width: the column keeps its width
        out.append((str(i), [right(str(i)), Cell("nim"), Cell(f"bot{i % 7} v bot{i % 5}"), Cell(winner),
                             Cell("normal"), right("9"), right("0.05s")]))
    return out


def screen_text(table: DataTable) -> str:
    return "\n".join(table.render_line(y).text for y in range(table.size.height))


@pytest.mark.asyncio
async def test_a_changed_cell_is_the_only_one_rendered_again_and_shows_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: list[tuple[int, int]] = []
    original = DataTable._render_cell

    def counting(self: DataTable, row_index: int, column_index: int, *args: Any, **kwargs: Any) -> Any:
        rendered.append((row_index, column_index))
        return original(self, row_index, column_index, *args, **kwargs)

    monkeypatch.setattr(DataTable, "_render_cell", counting)
    app = OneTable()
    async with app.run_test(size=(100, 20)) as pilot:
        table = app.query_one(GamesTable)
        table.sync(rows(40))
        await pilot.pause()
        first = screen_text(table)
        assert "botX" not in first and rendered, "the first paint renders every visible cell"
        rendered.clear()
        table.sync(rows(40, changed=39))  # the second row from the top
        await pilot.pause()
        after = screen_text(table)
        assert "botX" in after.splitlines()[2]  # header, row 40, then row 39: drawn, not a stale cache
        assert after.replace("botX", "bot4") == first  # row 39's winner was bot4; nothing else moved
        data_cells = {(r, c) for r, c in rendered if r >= 0}
        assert data_cells == {(1, 3)}, "only the changed cell is rendered again"
