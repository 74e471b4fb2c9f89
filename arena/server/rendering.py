"""How the site answers: its pages (Jinja2 templates in ``templates/`` with ``arena report``'s macros, every value
escaped as the report escapes it: arena.output.pages), its 404 page, and the API's JSON error line."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import jinja2
from starlette.responses import HTMLResponse, JSONResponse

from arena.output.pages import Block, escaping_environment
from arena.server.site import Site
from arena.server.viewers import Viewer
from arena.text import shown
from leaderboards import accounts as acc


def when(t: float | None) -> str:
    """A stored time as the pages show it (UTC, to the second)."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if t else ""


# The server's pages and arena report's templates (results.html: the macros both render results with), escaping
# every value as the report does (arena.output.pages).
templates = escaping_environment(jinja2.ChoiceLoader([jinja2.PackageLoader("arena.server", "templates"),
                                                      jinja2.PackageLoader("arena.output", "templates")]))
templates.filters["shown"] = lambda v, lines=False: Block(shown(v, lines=True)) if lines else shown(v)
templates.filters["when"] = when


def page(name: str, viewer: Viewer, site: Site, status: int = 200, **values: Any) -> HTMLResponse:
    """A page of the site (never kept by a cache: it may be one account's)."""
    html = templates.get_template(name).render(viewer=viewer, league=site.config.name, **values)
    return HTMLResponse(html, status_code=status, headers={"cache-control": "no-store"})


def not_found(viewer: Viewer, site: Site) -> HTMLResponse:
    return page("message.html", viewer, site, 404, title="Not found", message="There is no such page.")


def error(status: int, message: str) -> JSONResponse:
    """The API's answer to a request it refuses: ``{"error": LINE}``."""
    return JSONResponse({"error": message}, status_code=status)


MAX_ROW_ID = (1 << 63) - 1
"""SQLite's largest integer: a bigger id raised OverflowError in the store (a 500 and a traceback in the log)."""


def row_id(text: str) -> int | None:
    """An id from a URL or a form, or None (answered as a missing one) unless it is ASCII digits within SQLite's
    range (length first: ``int`` refuses strings of over 4,300 digits with a ValueError)."""
    if not (text.isascii() and text.isdigit() and len(text) <= 19):
        return None
    number = int(text)
    return number if number <= MAX_ROW_ID else None


def revoked_line(account: acc.Account) -> str:
    """What the holder of a revoked account's token or session is told."""
    return (f"The account {shown(account.name)} was revoked by the league's organisers at "
            f"{when(account.revoked)}: its token and sessions no longer work. "
            "Ask the course staff why, or for a new account.")
