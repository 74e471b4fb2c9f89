"""The site's forms, and the one place their CSRF tokens are checked (docs/server.md):

- :func:`form`: a logged-in form POST (logout, submit, an organiser's action, a scrimmage): its ``csrf`` field must
  match the session's, compared in constant time, else 403 and nothing changes; a bearer token is not a session
  (the API takes no form);
- :func:`login_form`: the login form (no session yet): a double-submit token, the ``login_csrf`` field repeating
  the ``arena_login`` cookie of the login page.

Bodies are read within limits, never buffered past them: a form within :data:`FORM_BYTES`, an upload within the
league's ``max_bot_mb`` (plus :data:`FORM_SLACK`); beyond, the site's 413 page.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message

from arena.server import auth
from arena.server.guards import Endpoint, site_of
from arena.server.rendering import page
from arena.server.site import Site
from arena.server.submitting import submit_values
from arena.server.viewers import NOBODY, Viewer, viewer_of
from arena.snapshot import MB
from leaderboards.store import Store

FORM_BYTES = 16 * 1024
"""Bytes of a form that is not an upload (login, logout, an organiser's action)."""
FORM_SLACK = 64 * 1024
"""Bytes of a multipart body beyond the bot itself (boundaries, headers, the CSRF field)."""
DRAIN = 32 << 20
"""Bytes of a too-big body read and thrown away so the client reads its 413 (beyond: the connection is dropped)."""

FormAction = Callable[[Request, Site, Store, Viewer, dict[str, Any]], Response]
"""A form's handler: its fields (an upload's file as ``_filename`` and ``_data``), run in the thread pool."""


async def limited_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None when it is longer than ``limit`` (never buffered past it; the rest is read and
    dropped, up to :data:`DRAIN` bytes, so that a client still sending gets the answer instead of a reset)."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > DRAIN):
        return None
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > DRAIN:
            return None
        if total <= limit:
            chunks.append(chunk)
    return b"".join(chunks) if total <= limit else None


async def upload_form(request: Request, limit: int) -> tuple[dict[str, str], tuple[str, bytes] | None] | None:
    """A multipart form's text fields and its ``file`` (name, bytes), read within ``limit`` bytes; None: over."""
    body = await limited_body(request, limit + FORM_SLACK)
    if body is None:
        return None
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}
    form = await Request(request.scope, replay).form(max_files=1, max_fields=8, max_part_size=limit + FORM_SLACK)
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        return fields, None
    return fields, (upload.filename or "", await upload.read())


def url_fields(body: bytes) -> dict[str, str]:
    """An urlencoded form's fields (the first of each name)."""
    return {k: v[0] for k, v in parse_qs(body.decode(errors="replace")).items()}


def sent_size(request: Request) -> str:
    """An upload's size as its request says (the body is not read past the limit)."""
    length = request.headers.get("content-length", "")
    return f"about {int(length) / MB:.1f} MB" if length.isdigit() else "more than that"


def too_big(request: Request, site: Site) -> Response:
    """The submit page again, saying how big the upload was (the body's length) and the league's limit."""
    viewer = viewer_of(request)
    message = (f"The upload is {sent_size(request)}, over this league's max_bot_mb "
               f"({site.config.limits.max_bot_mb:g} MB); nothing was stored.")
    if viewer.account is None:
        return page("message.html", viewer, site, 413, title="Upload too big", message=message)
    return page("submit.html", viewer, site, 413, **submit_values(site, message))


def form_too_big(request: Request, site: Site) -> Response:
    """A form (not an upload) over :data:`FORM_BYTES`: a page of the site with its size and the limit."""
    length = request.headers.get("content-length", "")
    size = f"{int(length) / 1024:.0f} kB" if length.isdigit() else "more than that"
    return page("message.html", NOBODY, site, 413, title="Form too big",
                message=f"The form sent is {size}, over the {FORM_BYTES // 1024} kB a form of this site may be; "
                        "nothing was done.")


def form(action: FormAction) -> Endpoint:
    """A logged-in form POST's endpoint: the body read within its limit, the CSRF field checked against the
    session's, then ``action`` (in the thread pool)."""
    async def endpoint(request: Request) -> Response:
        site = site_of(request)
        multipart = request.headers.get("content-type", "").startswith("multipart/")
        parsed = await upload_form(request, site.max_bytes) if multipart else None
        if parsed is None and multipart:
            return await run_in_threadpool(too_big, request, site)
        if parsed is None:
            body = await limited_body(request, FORM_BYTES)
            if body is None:
                return form_too_big(request, site)
            parsed = (url_fields(body), None)
        fields: dict[str, Any] = dict(parsed[0])
        upload = parsed[1]

        def call() -> Response:
            store, viewer = site.store(), viewer_of(request)
            if viewer.account is None or viewer.via_token or not auth.same(fields.get("csrf"), viewer.csrf):
                return page("message.html", viewer, site, 403, title="Forbidden",
                            message="This form needs a login and its own page's token; open the page again.")
            if upload is not None:
                fields["_filename"], fields["_data"] = upload
            return action(request, site, store, viewer, fields)
        return await run_in_threadpool(call)
    endpoint.__name__, endpoint.__doc__ = action.__name__, action.__doc__
    return endpoint


def login_form(action: FormAction) -> Endpoint:
    """The login form's endpoint: its ``login_csrf`` field must repeat the login page's cookie (nobody is logged
    in yet: the viewer is nobody, whatever the request carries)."""
    async def endpoint(request: Request) -> Response:
        site = site_of(request)
        body = await limited_body(request, FORM_BYTES)
        if body is None:
            return form_too_big(request, site)
        fields = url_fields(body)

        def call() -> Response:
            store = site.store()
            if not auth.same(fields.get("login_csrf"), request.cookies.get(auth.LOGIN_COOKIE)):
                return page("message.html", NOBODY, site, 403, title="Forbidden",
                            message="The form was not sent from this site's login page; open the login page again.")
            return action(request, site, store, NOBODY, dict(fields))
        return await run_in_threadpool(call)
    endpoint.__name__, endpoint.__doc__ = action.__name__, action.__doc__
    return endpoint

