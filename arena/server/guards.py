"""Who may call an endpoint, said once on the endpoint as a decorator (the viewer is
:mod:`arena.server.viewers`'s, set before any endpoint runs):

- :func:`public`: the league's public pages (the leaderboard, bots, games, the bracket), open to anyone unless the
  league file says ``leaderboard_public = false``, then to its accounts;
- :func:`logged_in`: an account's own pages;
- :data:`organiser`: the organisers' pages, answered 404 to anyone else (as a page that does not exist, so they
  cannot be probed);
- :data:`token`: the API's writes, for scripts with a bearer token, never a browser's cookie (so they need no CSRF).

A guard wraps either a page's handler (``handler(request, site, store, viewer, ...)``, run in the thread pool by
:func:`threaded`) or an async endpoint (``endpoint(request)``: checked before its body is read).
"""
from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from arena.server.rendering import error, not_found, revoked_line
from arena.server.site import Site
from arena.server.viewers import Viewer, viewer_of
from leaderboards.store import Store

Handler = Callable[[Request, Site, Store, Viewer], Response]
Endpoint = Callable[[Request], Awaitable[Response]]
Guarded = TypeVar("Guarded", bound=Callable[..., Any])
Refusal = Callable[[Site, Viewer], Response]


def site_of(request: Request) -> Site:
    """The site the request's application serves (``create_app`` keeps it in the application's state)."""
    site: Site = request.app.state.site
    return site


def threaded(handler: Handler) -> Endpoint:
    """An endpoint that runs ``handler`` in the thread pool with this thread's store connection and the viewer."""
    async def endpoint(request: Request) -> Response:
        site, viewer = site_of(request), viewer_of(request)
        return await run_in_threadpool(lambda: handler(request, site, site.store(), viewer))
    endpoint.__name__, endpoint.__doc__ = handler.__name__, handler.__doc__
    return endpoint


def guard(allowed: Callable[[Site, Viewer], bool], refuse: Refusal) -> Callable[[Guarded], Guarded]:
    """A decorator that answers ``refuse(site, viewer)`` instead of calling the endpoint when ``allowed`` is not."""
    def decorate(handler: Guarded) -> Guarded:
        if inspect.iscoroutinefunction(handler):
            async def endpoint(request: Request) -> Response:
                site, viewer = site_of(request), viewer_of(request)
                if not allowed(site, viewer):
                    return refuse(site, viewer)
                answer: Response = await handler(request)
                return answer
            checked: Any = endpoint
        else:
            def checked(request: Request, site: Site, store: Store, viewer: Viewer, *more: Any) -> Response:
                if not allowed(site, viewer):
                    return refuse(site, viewer)
                answer: Response = handler(request, site, store, viewer, *more)
                return answer
        checked.__name__, checked.__doc__ = handler.__name__, handler.__doc__
        result: Guarded = checked
        return result
    return decorate


def to_login(site: Site, viewer: Viewer) -> Response:
    return RedirectResponse("/login", 303)


def sees_public(site: Site, viewer: Viewer) -> bool:
    return site.config.leaderboard_public or viewer.account is not None


def public(refuse: Refusal = to_login) -> Callable[[Guarded], Guarded]:
    """The league's public pages: anyone's, or its accounts' only with ``leaderboard_public = false``."""
    return guard(sees_public, refuse)


def logged_in(refuse: Refusal = to_login) -> Callable[[Guarded], Guarded]:
    """An account's pages: a logged-in viewer (a session or a bearer token)."""
    return guard(lambda site, viewer: viewer.account is not None, refuse)


organiser = guard(lambda site, viewer: viewer.organiser, lambda site, viewer: not_found(viewer, site))
"""The organisers' pages: 404 to anyone else."""


def revoked_token(viewer: Viewer) -> Response | None:
    """The API's 401 for a revoked account's token (its holder is told so, and when); None for any other viewer."""
    return error(401, revoked_line(viewer.revoked)) if viewer.revoked is not None and viewer.via_token else None


def api_refusal(line: str) -> Refusal:
    """The API's 401: ``line``, unless the request's token is a revoked account's (:func:`revoked_token`)."""
    def refuse(site: Site, viewer: Viewer) -> Response:
        return revoked_token(viewer) or error(401, line)
    return refuse


token = guard(lambda site, viewer: viewer.via_token and viewer.account is not None,
              api_refusal("send Authorization: Bearer TOKEN (the token of `arena accounts add`)"))
"""The API's writes: a bearer token's account (a cookie is not enough: the API takes no CSRF token)."""
