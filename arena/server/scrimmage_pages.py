"""The web side of scrimmages (:mod:`arena.server.scrimmages`): the form on /me, a scrimmage's page and its games'
replays, and the API (docs/server.md).

A scrimmage is private to its two sides and the organisers: anyone else (another account, or nobody logged in) is
answered 403, whatever the league's ``leaderboard_public`` (its games are the two sides' practice, not the
ladder's). Names a student chose (accounts, teams) reach the pages only through Jinja2's autoescape and the JSON
encoder.
"""
from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from arena.server import guards
from arena.server import scrimmages as sc
from arena.server.forms import FORM_BYTES, form, limited_body
from arena.server.guards import site_of
from arena.server.public_pages import replay_script
from arena.server.rendering import error, page, row_id
from arena.server.site import Site
from arena.server.viewers import Viewer, viewer_of
from leaderboards import accounts as acc
from leaderboards import teams as tm
from leaderboards.store import Store

NOTICES = 20
"""Scrimmages listed on /me (the newest a side asked for or was asked to)."""
ORGANISER_ROWS = 200
"""Scrimmages listed on /scrimmages (the newest)."""


def me_values(store: Store, league_id: int, side: tm.Side) -> dict[str, Any]:
    """What /me shows of scrimmages: the form's choices (every other side with a bot in the ladder) and the
    side's scrimmages, newest first (those asked against it are its notices)."""
    others = sorted({b.name for b in store.bots(league_id, include_retired=False, source=False)
                     if b.origin == "submit" and b.status == "active" and b.name != side.name})
    found = tm.scrimmages_of(store, league_id, side.name, limit=NOTICES)
    return {"opponents": others, "scrimmages": found, "askers": _askers(store, found), "max_games": sc.MAX_GAMES,
            "per_hour": sc.PER_HOUR}


def _askers(store: Store, found: list[tm.Scrimmage]) -> dict[int, str]:
    out = {}
    for s in found:
        a = acc.account(store, s.asked_by)
        out[s.id] = a.name if a else "?"
    return out


def visible(request: Request, site: Site, store: Store, v: Viewer) -> tm.Scrimmage | None | bool:
    """The scrimmage of the path; None: there is none; False: the viewer may not see it."""
    sid = row_id(request.path_params["sid"])
    s = tm.scrimmage(store, sid) if sid is not None else None
    if s is None or s.league_id != site.league_id(store):
        return None
    return s if sc.may_see(store, v.account, s) else False


def forbidden(site: Site, v: Viewer) -> Response:
    return page("message.html", v, site, 403, title="Forbidden",
                message="A scrimmage is seen only by its two teams and the organisers"
                        + ("." if v.account else ": log in."))


@guards.threaded
@guards.logged_in()
def list_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    """The scrimmages the viewer may see: an organiser every one of the league (the newest
    :data:`ORGANISER_ROWS`), a student their side's (the form to ask is on /me)."""
    assert v.account is not None
    lg = site.league_id(store)
    side = tm.side_of(store, v.account)
    found = tm.all_scrimmages(store, lg, limit=ORGANISER_ROWS) if v.organiser else \
        tm.scrimmages_of(store, lg, side.name, limit=ORGANISER_ROWS)
    return page("scrimmages.html", v, site, scrimmages=found, askers=_askers(store, found), side=side)


@guards.threaded
def scrimmage_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    s = visible(request, site, store, v)
    if s is None:
        return page("message.html", v, site, 404, title="Not found", message="There is no such scrimmage.")
    if s is False:
        return forbidden(site, v)
    assert isinstance(s, tm.Scrimmage)
    assert v.account is not None
    doc = sc.document(store, s)
    mine = tm.side_of(store, v.account).name
    own_bot = s.bot_id if mine == s.side else s.opponent_bot_id if mine == s.opponent else None
    failures = [(g, f) for g in tm.scrimmage_games(store, s) for f in g.failures
                if own_bot is not None and g.seats[f.seat] == own_bot]  # (only one's own tracebacks)
    return page("scrimmage.html", v, site, s=s, doc=doc, failures=failures[:50])


def game_of(request: Request, site: Site, store: Store, v: Viewer) -> tuple[Any, Any] | Response:
    s = visible(request, site, store, v)
    if s is False:
        return forbidden(site, v)
    number = row_id(request.path_params["number"])
    g = next((g for g in tm.scrimmage_games(store, s) if g.id == number), None) \
        if isinstance(s, tm.Scrimmage) else None
    if g is None:
        return page("message.html", v, site, 404, title="Not found", message="There is no such game.")
    return s, g


@guards.threaded
def game_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    found = game_of(request, site, store, v)
    if isinstance(found, Response):
        return found
    s, g = found
    return page("scrimmage_game.html", v, site, s=s, g=g)


@guards.threaded
def game_data(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    found = game_of(request, site, store, v)
    if isinstance(found, Response):
        return Response("", found.status_code)
    answer = replay_script(found[1])
    return answer if answer is not None else Response("", 404)


@form
def ask_form(request: Request, site: Site, store: Store, v: Viewer, fields: dict[str, Any]) -> Response:
    """The form on /me: a scrimmage against another side."""
    assert v.account is not None
    lg = site.league_id(store)
    found = sc.ask(store, site.config, lg, v.account, fields.get("opponent", ""), fields.get("games", ""))
    if isinstance(found, sc.Refusal):
        return page("message.html", v, site, found.status, title="Scrimmage not asked", message=found.error + ".")
    site.scrimmage_wake()
    return RedirectResponse(f"/scrimmages/{int(found)}", 303)


async def api_ask(request: Request) -> Response:
    """``POST /api/scrimmages``: ``{"opponent": ..., "games": N}`` with a bearer token; 202 and its id."""
    body = await limited_body(request, FORM_BYTES)
    if body is None:
        return error(413, f"a scrimmage request is at most {FORM_BYTES // 1024} kB of JSON")
    site = site_of(request)
    return await run_in_threadpool(lambda: _ask(request, site, site.store(), viewer_of(request), body))


@guards.token
def _ask(request: Request, site: Site, store: Store, v: Viewer, body: bytes) -> Response:
    assert v.account is not None
    try:
        doc = json.loads(body or b"{}")
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return error(400, 'send a JSON object: {"opponent": "TEAM OR NAME", "games": N}')
    found = sc.ask(store, site.config, site.league_id(store), v.account, str(doc.get("opponent", "")),
                   doc.get("games", ""))
    if isinstance(found, sc.Refusal):
        wait = {"retry-after": str(found.retry_after)} if found.retry_after else None
        return JSONResponse({"error": found.error, **({"retry_after": found.retry_after}
                                                      if found.retry_after else {})},
                            status_code=found.status, headers=wait)
    site.scrimmage_wake()
    return JSONResponse({"id": found, "status": "queued"}, status_code=202)


@guards.threaded
def api_scrimmage(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    revoked = guards.revoked_token(v)
    if revoked is not None:
        return revoked
    s = visible(request, site, store, v)
    if s is None:
        return error(404, "no such scrimmage")
    if s is False:
        return error(403, "a scrimmage is seen only by its two teams and the organisers")
    assert isinstance(s, tm.Scrimmage)
    return JSONResponse(sc.document(store, s))


ROUTES = [
    Route("/scrimmages", ask_form, methods=["POST"]),
    Route("/scrimmages", list_page, methods=["GET"]),
    Route("/scrimmages/{sid}", scrimmage_page, methods=["GET"]),
    Route("/scrimmages/{sid}/games/{number}", game_page, methods=["GET"]),
    Route("/scrimmages/{sid}/games/{number}/replay-data.js", game_data, methods=["GET"]),
    Route("/api/scrimmages", api_ask, methods=["POST"]),
    Route("/api/scrimmages/{sid}", api_scrimmage, methods=["GET"]),
]
"""The scrimmages' addresses (arena.server.app adds them to the site's)."""
