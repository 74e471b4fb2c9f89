"""An 80x24 terminal shows what matters whole (issue 23 §5): the leaderboard's rank, name, rating, games and
trend, and the status line however much it says; the missing-store message names the league file."""
from __future__ import annotations

import html
import re
from pathlib import Path

from textual.widgets import Static

from arena.tui.app import ArenaApp
from arena.tui.tables import TREND_WIDTH
from tests.tui.pilot import wait_for
from tests.tui.storefix import Fixture

SIZE = (80, 24)
CELL = 12.2  # Textual's SVG export: one cell is 0.61 of its 20 px font


def screen_lines(app: ArenaApp) -> list[str]:
    """The screen as text: what the user sees, rebuilt from Textual's own screenshot (nothing off-screen)."""
    rows: dict[int, list[str]] = {}
    width, height = app.size
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+" textLength="[\d.]+" '
                         r'clip-path="url\(#[\w-]*line-(\d+)\)">([^<]*)</text>', app.export_screenshot()):
        col, line = round(float(m.group(1)) / CELL), int(m.group(2))
        row = rows.setdefault(line, [" "] * width)
        for i, ch in enumerate(html.unescape(m.group(3)).replace("\xa0", " ")):
            if 0 <= col + i < width:
                row[col + i] = ch
    return ["".join(rows.get(i, [])).rstrip() for i in range(height)]


async def test_the_leaderboard_shows_rank_name_rating_games_and_trend_at_80_columns(store_file: Path) -> None:
    app = ArenaApp(store_file, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None and app.snapshot.trends_complete)
        await pilot.pause(0.2)
        lines = screen_lines(app)
        header = next(line for line in lines if " bot " in line)
        for column in ("#", "bot", "μ-3σ", "games", "μ-3σ trend"):
            assert f" {column} " in header + " ", header
        for rank, row in enumerate(app.snapshot.leaderboard, 1):
            line = next(line for line in lines if re.match(rf"\s*{rank}\s+{re.escape(row.label)} ", line))
            assert f" {row.exposed:.2f} " in line and f" {row.games} " in line, line
            assert re.search(rf"[▁▂▃▄▅▆▇█]{{{TREND_WIDTH}}}", line), line  # the whole sparkline


async def test_the_status_line_is_whole_at_80_columns(fixture_store: Fixture) -> None:
    """A running league, a search and the trend note made it longer than the screen: it was cut (at 120
    columns too)."""
    from arena.league.progress import Reporter
    from leaderboards import lock
    fixture_store.close()
    app = ArenaApp(fixture_store.path, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None and app.snapshot.trends_complete)
        status = app.query_one("#status", Static)
        with lock.acquire(fixture_store.path):
            reporter = Reporter("league demo", quiet=True, sidecar=fixture_store.path, concurrency=2)
            reporter.start(40)
            reporter.advance(12)
            reporter._write_sidecar(force=True)
            await wait_for(pilot, lambda: "league run: 12/40" in str(status.render()))
            await pilot.press("slash", *"uct", "enter")
            await wait_for(pilot, lambda: "rows with 'uct'" in str(status.render()))
            await pilot.pause(0.2)
            said = str(status.render())
            assert len(said) > SIZE[0], said  # longer than one line: the case in question
            top = status.region.y
            shown_text = " ".join(screen_lines(app)[top:top + status.region.height])
            assert "".join(shown_text.split()) == "".join(said.split()), (shown_text, said)
            reporter.stop()


async def test_the_missing_store_message_names_the_league_file(tmp_path: Path) -> None:
    app = ArenaApp(tmp_path / "missing.sqlite", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.message is not None)
        assert "--league FILE" in app.message, app.message
        assert "--league FILE" in " ".join(screen_lines(app))
