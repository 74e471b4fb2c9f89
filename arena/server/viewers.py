"""Who is asking, once per request: :class:`ViewerBackend` is the site's Starlette authentication backend
(``AuthenticationMiddleware``), so every endpoint finds its :class:`Viewer` as ``request.user`` (:func:`viewer_of`)
and the guards of :mod:`arena.server.guards` decide from it alone.

A bearer token (a script) or the session cookie (a browser) is looked up in the store at every request, never
cached, so a revoked account is refused at its next request (arena.server.auth). A credential that names no live
account yields the account it named if that account was revoked (:attr:`Viewer.revoked`): its holder is told why.
"""
from __future__ import annotations

from starlette.authentication import AuthCredentials, AuthenticationBackend, AuthenticationError, BaseUser
from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection, Request
from starlette.responses import PlainTextResponse, Response

from arena.server import auth
from arena.server.connections import out_of_files
from arena.server.site import Site
from leaderboards import accounts as acc
from leaderboards.store import Store


class Viewer(BaseUser):
    """Who is asking (``account`` None: nobody logged in), the session's CSRF token, and whether the credential
    was a bearer token (the API's) rather than the session cookie (a browser's)."""

    def __init__(self, account: acc.Account | None, csrf: str = "", via_token: bool = False,
                 revoked: acc.Account | None = None) -> None:
        self.account, self.csrf, self.via_token, self.revoked = account, csrf, via_token, revoked

    @property
    def organiser(self) -> bool:
        return self.account is not None and self.account.organiser

    @property
    def is_authenticated(self) -> bool:
        return self.account is not None

    @property
    def display_name(self) -> str:
        return self.account.name if self.account is not None else ""

    @property
    def identity(self) -> str:
        return str(self.account.id) if self.account is not None else ""


NOBODY = Viewer(None)


def bearer(connection: HTTPConnection) -> str | None:
    """The request's bearer token, or None."""
    header = connection.headers.get("authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else None


def look_up(site: Site, store: Store, connection: HTTPConnection) -> Viewer:
    """The viewer of a request's credential (a bearer token first, else the session cookie)."""
    league_id = site.league_id(store)
    token = bearer(connection)
    if token is not None:  # not limited per address: see arena.server.auth
        account = acc.by_token(store, league_id, token)
        gone = acc.revoked_by_token(store, league_id, token) if account is None else None
        return Viewer(account, via_token=True, revoked=gone)
    key = connection.cookies.get(auth.SESSION_COOKIE)
    if not key:
        return NOBODY
    found = acc.session(store, key)
    if found and found[0].league_id == league_id:
        return Viewer(*found)
    return Viewer(None, revoked=acc.revoked_session(store, key) if found is None else None)


def scopes(viewer: Viewer) -> list[str]:
    if viewer.account is None:
        return []
    return ["authenticated", *(["organiser"] if viewer.organiser else []), *(["token"] if viewer.via_token else [])]


class ViewerBackend(AuthenticationBackend):
    """The site's authentication: the viewer of every request but the static files' (the same for everyone)."""

    def __init__(self, site: Site) -> None:
        self.site = site

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        if conn.url.path.startswith("/static/"):
            return AuthCredentials(), NOBODY

        def find() -> Viewer:
            return look_up(self.site, self.site.store(), conn)
        try:
            viewer = await run_in_threadpool(find)
        except OSError as exc:  # no file free for a store connection: the same 503 as a page's (connections.py)
            if out_of_files(exc):
                raise AuthenticationError("busy") from exc
            raise
        return AuthCredentials(scopes(viewer)), viewer


def busy(conn: HTTPConnection, exc: AuthenticationError) -> Response:
    """The answer when the viewer could not be looked up for want of open files."""
    return PlainTextResponse("the server is busy; try again later\n", 503, headers={"retry-after": "5"})


def viewer_of(request: Request) -> Viewer:
    """The request's viewer (set by :class:`ViewerBackend`)."""
    user = request.scope.get("user")
    return user if isinstance(user, Viewer) else NOBODY


def address(request: Request) -> str:
    """The client for the login limits (:func:`arena.server.auth.client_key`)."""
    return auth.client_key(request.client.host if request.client else "")
