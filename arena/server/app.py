"""The web side of ``arena serve``: a Starlette application over the league's store (docs/server.md).

:func:`create_app` assembles it: the routes of each audience's module (:mod:`arena.server.public_pages`,
:mod:`arena.server.student_pages`, :mod:`arena.server.organiser_pages`, :mod:`arena.server.api`,
:mod:`arena.server.scrimmage_pages`), the static files (:mod:`arena.server.assets`), the authentication backend
that finds the viewer of every request (:mod:`arena.server.viewers`; the guards on the endpoints decide from it:
:mod:`arena.server.guards`), the forms' CSRF check (:mod:`arena.server.forms`) and :class:`SecurityHeaders`.

Pages are Jinja2 templates in ``templates/`` (autoescape on: every name, traceback and file is escaped by the
engine). Private data (a submission's status, source and traceback, an account's pages) answers only its owner:
anyone else gets 404 (the same answer as for an id that does not exist, so ids and names cannot be probed);
organiser pages answer 404 to other accounts.

The leaderboard, bot and game pages render :mod:`arena.output.views`' typed rows through the same macros as
``arena report`` (``arena/output/templates/results.html``), with the same pictures (inline SVG) and, on a game's
page, the report's replay viewer (``replay.js``, served from this origin with the game's data as a script of its
own), /me follows a waiting submission's verdict with ``status.js`` (it polls ``/api/submissions/ID``) and a
tournament's /bracket follows its matches with ``bracket.js`` (it polls ``/api/bracket``). Every
response carries a Content-Security-Policy without inline script (``script-src 'self'``: only those four
files; ``connect-src 'self'``), ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` and
``X-Frame-Options: DENY``.
"""
from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.server import api, auth, connections, organiser_pages, public_pages, scrimmage_pages, student_pages
from arena.server.assets import Assets
from arena.server.site import Site
from arena.server.viewers import Viewer, ViewerBackend, busy

__all__ = ["CSP", "Site", "Viewer", "create_app"]

CSP = ("default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self' data:; "
       "form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY")]
NO_STORE = [(b"cache-control", b"no-store")]


def private(scope: Scope) -> bool:
    """Whether a request carries a credential (a bearer token or the session cookie): its answer may be one
    account's, and is never kept by a cache (``Cache-Control: no-store``), whatever its handler said. The site's
    static files are the same for everyone."""
    if scope["path"].startswith("/static/"):
        return False
    for name, value in scope.get("headers", []):
        if name == b"authorization" or (name == b"cookie" and auth.SESSION_COOKIE.encode() + b"=" in value):
            return True
    return False


class SecurityHeaders:
    """Adds :data:`HEADERS` to every response, and ``Cache-Control: no-store`` to every :func:`private` one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        secret = private(scope)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if secret:
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"] + NO_STORE
                message["headers"] = headers + HEADERS
            await send(message)
        await self.app(scope, receive, sending)


EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]
ROUTES = [
    Route("/", public_pages.leaderboard_page),
    Route("/bots/{bot_id}", public_pages.bot_page),
    Route("/games/{game_id}", public_pages.game_page),
    Route("/games/{game_id}/replay-data.js", public_pages.game_data),
    Route("/bracket", public_pages.bracket_page),
    Route("/guide", public_pages.guide_page, methods=["GET"]),
    Route("/login", student_pages.login_get, methods=["GET"]),
    Route("/login", student_pages.login_post, methods=["POST"]),
    Route("/logout", student_pages.logout, methods=["POST"]),
    Route("/submit", student_pages.submit_page, methods=["GET"]),
    Route("/submit", student_pages.submit_post, methods=["POST"]),
    Route("/me", student_pages.me_page),
    Route("/admin", organiser_pages.admin_page),
    Route("/admin/submissions/{sid}", organiser_pages.admin_submission),
    Route("/admin/{action}", organiser_pages.admin_action, methods=["POST"]),
    Route("/api/submissions", api.submit, methods=["POST"]),
    Route("/api/submissions/{sid}", api.submission),
    Route("/api/leaderboard", api.leaderboard),
    Route("/api/bracket", api.bracket),
    *scrimmage_pages.ROUTES,
    Mount("/static", Assets(missing=public_pages.nowhere)),
    Route("/{path:path}", public_pages.nowhere, methods=EVERY_METHOD),
]
"""Every address of the site (docs/server.md lists them); any other is the site's 404 page."""

Lifespan = Callable[[Starlette], contextlib.AbstractAsyncContextManager[Any]]


@contextlib.asynccontextmanager
async def _quiet(app: Starlette) -> AsyncIterator[None]:
    yield


def create_app(site: Site, lifespan: Lifespan = _quiet) -> ASGIApp:
    """The site's application over ``site`` (built whole: the ladder's hooks included). ``lifespan``: what starts
    with the web server and stops with it (``arena serve``'s: arena.commands.serve)."""
    app = Starlette(routes=ROUTES, exception_handlers=connections.exception_handlers(), lifespan=lifespan,
                    middleware=[Middleware(AuthenticationMiddleware, backend=ViewerBackend(site), on_error=busy)])
    app.state.site = site
    return SecurityHeaders(app)
