"""The site's static files, served by Starlette's ``StaticFiles`` under ``/static/``: the scripts the pages run
(``status.js``, ``bracket.js``: arena/server/static/; ``replay.js``, the report's replay viewer) and the
stylesheets (``report.css``, the report's, then ``site.css``, the site's own). They are the same for everyone: a
cache may keep them :data:`MAX_AGE` seconds. Only :data:`FILES` are served (the report's templates sit beside its
script); any other path is the site's 404 page."""
from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

MAX_AGE = 300
FILES = {"site.css": "text/css", "report.css": "text/css", "replay.js": "text/javascript",
         "status.js": "text/javascript", "bracket.js": "text/javascript"}
"""The files served, with their types (said here, not guessed from the machine's mime.types)."""


class Assets(StaticFiles):
    """:data:`FILES` from this package's ``static/`` and arena.output's ``templates/``; ``missing`` answers the
    rest."""

    def __init__(self, missing: Callable[[Request], Awaitable[Response]]) -> None:
        super().__init__(packages=[("arena.server", "static"), ("arena.output", "templates")])
        self.missing = missing

    async def get_response(self, path: str, scope: Scope) -> Response:
        name = os.path.basename(path)
        if path != name or name not in FILES or scope["method"] not in ("GET", "HEAD"):
            return await self.missing(Request(scope))
        response = await super().get_response(path, scope)
        response.headers["cache-control"] = f"max-age={MAX_AGE}"
        if response.status_code == 200:
            response.headers["content-type"] = FILES[name] + "; charset=utf-8"
        return response
