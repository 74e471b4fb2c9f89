"""`arena serve`'s pages and `arena report`'s render results with one markup: the macros of
arena/output/templates/results.html (test_web checks that no other template writes those tables). Here: the two
sides render the same rows into the same table structure (tags and cells, not their links or columns), and the
site's bot page has the report's head-to-head table."""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import arena.server
from arena.output.report import index_page
from arena.output.views import Standing
from arena.server import rendering
from arena.server.viewers import Viewer


def test_the_sites_bot_page_has_the_reports_head_to_head_table():
    text = (Path(arena.server.__file__).parent / "templates" / "bot.html").read_text()
    assert 'from "results.html" import' in text and "h2h_table(cells)" in text


class Structure(HTMLParser):
    """The tags (with their ids) inside the first ``<table id=...>``, text cells as one marker each."""

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id, self.depth, self.out = table_id, 0, []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth == 0 and tag == "table" and ("id", self.table_id) in attrs:
            self.depth = 1
        elif self.depth and tag != "a":  # links differ by design: a file of the report, a page of the site
            self.depth += tag == "table"
            self.out.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag == "table":
            self.depth -= 1
        if self.depth and tag != "a":
            self.out.append("/" + tag)


def table(html: str, table_id: str) -> list[str]:
    p = Structure(table_id)
    p.feed(html)
    assert p.out, f"no table {table_id} in the page"
    return p.out


def row(rank: int, bot: str) -> Standing:
    return Standing(rank=rank, bot=bot, bot_id=rank, name=bot, version=1, kind="file", origin="", spec=f"{bot}.py",
                    status="active", status_reason=None, plays=None, mu=25.0, sigma=8.0, exposed=1.0, games=3,
                    wins=1, draws=1, losses=1, timeouts=1, crashes=0, illegal=0, memory=0, protocol=0, failures=1)


def test_the_site_and_the_report_render_the_same_leaderboard_table():
    rows = [row(1, "alice"), row(2, "<b>bob</b>")]
    report = index_page("L", rows, [], 3, 0)

    class Board:
        league, games = "L", 3

    Board.rows = rows  # type: ignore[attr-defined]
    site = rendering.templates.get_template("leaderboard.html").render(
        viewer=Viewer(None), league="L", board=Board, bot_href=lambda r: f"/bots/{r.bot_id}", matrix="")
    served, written = table(site, "leaderboard"), table(report, "leaderboard")
    # the site leaves out the file column (a student's file name is theirs): one th and one td a row fewer
    assert [t for t in served if t not in ("th", "/th", "td", "/td")] == \
        [t for t in written if t not in ("th", "/th", "td", "/td")]
    assert written.count("td") - served.count("td") == len(rows)
    assert "&lt;b&gt;bob&lt;/b&gt;" in site and "<b>bob" not in site
