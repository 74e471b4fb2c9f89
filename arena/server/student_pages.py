"""An account's pages: logging in and out, the submit page and its form, and /me (the account's side: its bot's
versions, its uploads with their verdicts and tracebacks, its games and their failures, its scrimmages). Each is
the viewer's own: :func:`arena.server.guards.logged_in`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from arena.output.views import seat_word
from arena.server import auth, guards, scrimmage_pages
from arena.server.forms import form, login_form
from arena.server.rendering import page, revoked_line, row_id
from arena.server.site import Site
from arena.server.submitting import identical_line, queue_upload, submit_values
from arena.server.viewers import Viewer, address
from arena.text import shown
from leaderboards import accounts as acc
from leaderboards import teams as tm
from leaderboards.store import Store


@dataclass(frozen=True)
class Result:
    """One game of a student's bot as its /me page words it."""

    game_id: int
    game: str
    seat: int
    against: list[str]
    outcome: str
    """won, lost or draw (:func:`arena.output.views.seat_word`)."""
    how: str
    """"" for a game played to its end, else who ended it how (``bob: timeout``)."""


def results(games: list[Any], ids: set[int]) -> list[Result]:
    """The games of the bots ``ids`` (one account's versions) as won / lost / draw, with how they ended."""
    out = []
    for g in games:
        seat = next((i for i, b in enumerate(g.seats) if b in ids), None)
        if seat is None or not g.returns:
            continue
        how = ", ".join(f"{'your bot' if i == seat else shown(g.players[i])}: {t}"
                        for i, t in enumerate(g.terminations) if t != "normal")
        out.append(Result(g.id, g.game, seat, [p for i, p in enumerate(g.players) if i != seat],
                          seat_word(g.returns, seat), how))
    return out




def login_page(site: Site, v: Viewer, message: str = "", status: int = 200) -> Response:
    """The login form, with a fresh double-submit token (its cookie and its hidden field: arena.server.forms)."""
    token = auth.new_login_token()
    response = page("login.html", v, site, status, login_csrf=token, message=message)
    response.headers.append("set-cookie", auth.cookie(auth.LOGIN_COOKIE, token, secure=site.secure, max_age=3600))
    return response


@guards.threaded
def login_get(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    return login_page(site, v, revoked_line(v.revoked) if v.revoked is not None and not v.via_token else "")


@login_form
def login_post(request: Request, site: Site, store: Store, v: Viewer, fields: dict[str, Any]) -> Response:
    name, token, where = fields.get("name", "").strip(), fields.get("token", "").strip(), address(request)
    pair = auth.name_at(name, where)
    if site.per_account_address.blocked(pair) or site.per_account.blocked(name) or site.per_address.blocked(where):
        return login_page(site, v, "Too many failed logins; wait 15 minutes.", 429)
    account = acc.by_token(store, site.league_id(store), token) if token else None
    gone = acc.revoked_by_token(store, site.league_id(store), token) if token and account is None else None
    if gone is not None and auth.same(gone.name, name):  # the token's holder: told, not left guessing
        return login_page(site, v, revoked_line(gone), 403)
    if account is None or not auth.same(account.name, name):
        site.per_account_address.fail(pair)  # every name counted alike, existing or not: a 429 (or
        site.per_account.fail(name)  # the time taken) must not tell a stranger which names have accounts
        site.per_address.fail(where)
        return login_page(site, v, "Unknown name or token.", 401)
    key, _ = acc.new_session(store, account.id, auth.SESSION_TTL)
    response = RedirectResponse("/me", 303)
    response.headers.append("set-cookie", auth.cookie(auth.SESSION_COOKIE, key, secure=site.secure,
                                                      max_age=int(auth.SESSION_TTL)))
    response.headers.append("set-cookie", auth.cookie(auth.LOGIN_COOKIE, "", secure=site.secure, max_age=0))
    return response


@form
def logout(request: Request, site: Site, store: Store, v: Viewer, fields: dict[str, Any]) -> Response:
    key = request.cookies.get(auth.SESSION_COOKIE)
    if key:
        acc.end_session(store, key)
    response = RedirectResponse("/", 303)
    response.headers.append("set-cookie", auth.cookie(auth.SESSION_COOKIE, "", secure=site.secure, max_age=0))
    return response


@guards.threaded
@guards.logged_in()
def submit_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    assert v.account is not None
    return page("submit.html", v, site, **submit_values(site, store=store, league_id=v.account.league_id))


@form
def submit_post(request: Request, site: Site, store: Store, v: Viewer, fields: dict[str, Any]) -> Response:
    assert v.account is not None
    if "_data" not in fields:
        return page("submit.html", v, site, 400, **submit_values(site, "Choose a file to upload.", store,
                                                                   v.account.league_id))
    status, doc = queue_upload(site, store, v.account, fields["_filename"], fields["_data"])
    if status != 202:
        return page("submit.html", v, site, status, **submit_values(site, doc["error"], store, v.account.league_id))
    return RedirectResponse(f"/me?sent={int(doc['id'])}", 303)


@guards.threaded
@guards.logged_in()
def me_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    assert v.account is not None
    lg = store.find_league(site.config.name)
    side = tm.side_of(store, v.account)  # (a team's members see its bot, uploads and tracebacks alike)
    subs = tm.side_submissions(store, lg.id, side) if side.is_team else acc.submissions(store, lg.id, v.account.id)
    mine = [b for b in store.bots(lg.id) if b.name == side.name and b.origin == "submit"]
    ids = {b.id for b in mine}
    games = store.games(lg.id, order="recent", limit=100, bot_id=mine[-1].id) if mine else []
    failures = [(g, f) for g in store.games(lg.id, order="recent", limit=500, bot_id=mine[-1].id)
                for f in g.failures if g.seats[f.seat] in ids] if mine else []
    sent = next((s for s in subs if s.id == row_id(request.query_params.get("sent", ""))), None)
    same = tm.side_same_upload(store, lg.id, side, sent.digest, before=sent.id) if sent else None
    names = {a.id: a.name for a in side.members}
    return page("me.html", v, site, subs=subs, bots=mine, games=results(games, ids), failures=failures[:50],
                sent=sent, note=identical_line(store, same) if same else "", side=side, names=names,
                **scrimmage_pages.me_values(store, lg.id, side))
