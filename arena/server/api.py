"""The API for scripts (docs/server.md): uploads and their verdicts (a bearer token's account:
:data:`arena.server.guards.token`), the leaderboard and a tournament's bracket as JSON (as public as the pages).
Refusals are ``{"error": LINE}`` with the status (429 with ``Retry-After``)."""
from __future__ import annotations

import dataclasses

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from arena.output import brackets
from arena.server import finals, guards
from arena.server.forms import sent_size, upload_form
from arena.server.guards import site_of
from arena.server.rendering import error, row_id
from arena.server.site import Site
from arena.server.submitting import queue_upload, submission_document
from arena.server.viewers import Viewer, viewer_of
from arena.text import dumps
from leaderboards import accounts as acc
from leaderboards import teams as tm
from leaderboards.store import Store


@guards.token
async def submit(request: Request) -> Response:
    """``POST /api/submissions``: a bot (the multipart field ``file``) into the validator's queue; 202 and its id."""
    site = site_of(request)
    parsed = await upload_form(request, site.max_bytes)
    if parsed is None:
        return error(413, f"the upload is {sent_size(request)}, over the league's max_bot_mb "
                          f"({site.config.limits.max_bot_mb:g} MB)")
    fields, upload = parsed
    if upload is None:
        return error(400, "send the bot as the multipart field `file` (a .py or a .zip)")
    account = viewer_of(request).account
    assert account is not None
    status, doc = await run_in_threadpool(lambda: queue_upload(site, site.store(), account, *upload))
    wait = {"retry-after": str(doc["retry_after"])} if "retry_after" in doc else None
    return JSONResponse(doc, status_code=status, headers=wait)


@guards.threaded
@guards.logged_in(guards.api_refusal("send Authorization: Bearer TOKEN"))
def submission(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    """``GET /api/submissions/ID``: one of the viewer's side's submissions (another's: 404, as none at all)."""
    assert v.account is not None
    sid = row_id(request.path_params["sid"])
    sub = acc.submission(store, sid) if sid is not None else None
    if sub is None or sub.account_id not in tm.side_of(store, v.account).member_ids:  # another's (not a
        return error(404, "no such submission of yours")  # teammate's): the same answer as none at all
    return JSONResponse(submission_document(store, sub))


@guards.threaded
@guards.public(guards.api_refusal("this league's leaderboard is for its accounts: send Authorization: Bearer TOKEN"))
def leaderboard(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    """`arena leaderboard --json`'s document, less what the pages hide: file names."""
    board = site.boards.get(store, store.find_league(site.config.name))
    doc = dataclasses.replace(board, cells=None).as_json()  # (`arena leaderboard --json`'s: no head-to-head)
    for row in doc["bots"]:
        if row["kind"] == "file":
            row["spec"] = None
    return Response(dumps(doc, indent=2) + "\n", media_type="application/json")


@guards.threaded
@guards.public(guards.api_refusal("this league's bracket is for its accounts: send Authorization: Bearer TOKEN"))
def bracket(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    """`arena bracket --json`'s document (bracket.js polls it)."""
    lg = finals.bracket_league(store, site.config.name)
    key = (lg.id, store.count_games(lg.id), len(store.decisions(lg.id)))
    text = site.brackets.get(key)
    if text is None:
        t = brackets.tournament(store, lg, draw=False)
        if t is None:
            return error(404, "this league is not a tournament (format = \"swiss\", \"knockout\" or "
                              "\"double_elimination\"): it has no bracket")
        text = dumps(t.doc, indent=2) + "\n"
        site.brackets.put(key, text)
    return Response(text, media_type="application/json", headers={"cache-control": "no-store"})
