"""The web side of ``arena serve``: a Starlette application over the league's store (docs/server.md).

Pages (Jinja2 templates in ``templates/``, autoescape on: every name, traceback and file is escaped by the
engine), the API for scripts, and the organiser's pages. Private data (a submission's status, source and
traceback, an account's pages) answers only its owner: anyone else gets 404 (the same answer as for an id that
does not exist, so ids and names cannot be probed); organiser pages answer 404 to other accounts.

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

import math
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.errors import ConfigError
from arena.league.config import LeagueConfig
from arena.output import brackets, pictures
from arena.output.pages import Block, escaping_environment
from arena.output.replays import replay, script_json
from arena.output.views import BotFacts, bot_facts, bot_standing, document, leaderboard
from arena.server import auth, connections, finals, scrimmage_pages, similarity
from arena.server.decisions import withdrawn_line
from arena.server.uploads import TooBig, UploadError, read_upload
from arena.submissions.snapshot import MB, files_digest
from arena.text import dumps, shown
from arena.tournament.progress import is_tournament
from leaderboards import accounts as acc
from leaderboards import teams as tm
from leaderboards.audit import league_audit
from leaderboards.store import Store

AUDIT_EVERY = 60.0
"""Seconds between two audits of the league for /admin while games come in (leaderboards/audit.py)."""
CSP = ("default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self' data:; "
       "form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY")]
NO_STORE = [(b"cache-control", b"no-store")]
HISTORY_POINTS = 1000
"""Rated games of a bot drawn on its page's rating picture (its newest)."""
ADMIN_ROWS = 500
"""Submissions and organiser actions listed on /admin (the newest)."""
GAMES_PAGE = 50
"""Games on a page of a bot's games (newest first; older ones on the next page)."""
FORM_BYTES = 16 * 1024
"""Bytes of a form that is not an upload (login, logout, an organiser's action)."""
FORM_SLACK = 64 * 1024
"""Bytes of a multipart body beyond the bot itself (boundaries, headers, the CSRF field)."""


@dataclass
class Site:
    """What every request needs: the store, the league file and the running ladder's hooks."""

    db: Path
    config: LeagueConfig
    secure: bool = False
    """``--behind-https``: cookies get ``Secure``."""
    entered: threading.Event = field(default_factory=threading.Event)
    """Set when the field changes (a withdrawal, a release): the ladder plans again."""
    wake: Callable[[], None] = lambda: None
    """Wakes the validator (a submission was queued)."""
    scrimmage_wake: Callable[[], None] = lambda: None
    """Wakes the scrimmage player (a scrimmage was asked for: arena.server.scrimmages)."""
    problems: Callable[[], list[str]] = lambda: []
    """The server's own faults an organiser must fix (bot packages that cannot load in the sandbox), shown on
    /admin; submissions wait in the queue meanwhile."""
    local: threading.local = field(default_factory=threading.local)
    opening: threading.Lock = field(default_factory=threading.Lock)
    queueing: threading.Lock = field(default_factory=threading.Lock)
    """Held from the hourly count to the new submission's row: parallel uploads of one account each saw the same
    count and all got in (7 of 20 past a limit of 3)."""
    per_account: auth.RateLimit = field(default_factory=lambda: auth.RateLimit(auth.MAX_FAILS_PER_ACCOUNT))
    per_account_address: auth.RateLimit = field(
        default_factory=lambda: auth.RateLimit(auth.MAX_FAILS_PER_ACCOUNT_ADDRESS))
    per_address: auth.RateLimit = field(default_factory=lambda: auth.RateLimit(auth.MAX_FAILS_PER_ADDRESS))

    near: similarity.NearCache = field(default_factory=similarity.NearCache)
    """Near-duplicate similarities by pair of bot digests (/admin compares only pairs it has not seen)."""

    base: Store | None = None
    """The process's one opened and checked store (the ladder's); each web thread gets :meth:`Store.another`."""

    def store(self) -> Store:
        """This thread's connection (SQLite connections stay in their thread), made by :meth:`Store.another`: a
        second :meth:`Store.open` in this process would drop the process's locks on the file."""
        store = getattr(self.local, "store", None)
        if store is not None:
            try:  # a statement left unfinished (a cursor a generator or a traceback keeps) pins an old snapshot:
                store.conn.execute("BEGIN")  # an empty transaction shows it (COMMIT fails while one is pending)
                store.conn.execute("COMMIT")
            except sqlite3.Error:
                store.close()
                store = None
        if store is None:
            with self.opening:
                if self.base is None:
                    self.base = Store.open(self.db)
            store = self.local.store = self.base.another()
        return store

    @property
    def max_bytes(self) -> int:
        return int(self.config.limits.max_bot_mb * MB)

    def league_id(self, store: Store) -> int:
        return store.find_league(self.config.name).id


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


# The server's pages and arena report's templates (results.html: the macros both render results with), escaping
# every value as the report does (arena.output.pages).
_templates = escaping_environment(jinja2.ChoiceLoader([jinja2.PackageLoader("arena.server", "templates"),
                                                       jinja2.PackageLoader("arena.output", "templates")]))
_templates.filters["shown"] = lambda v, lines=False: Block(shown(v, lines=True)) if lines else shown(v)
_templates.filters["when"] = lambda t: datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC") \
    if t else ""


class Viewer:
    """Who is asking (None: nobody logged in) and the session's CSRF token."""

    def __init__(self, account: acc.Account | None, csrf: str = "", via_token: bool = False) -> None:
        self.account, self.csrf, self.via_token = account, csrf, via_token

    @property
    def organiser(self) -> bool:
        return self.account is not None and self.account.organiser


def viewer(site: Site, store: Store, request: Request) -> Viewer:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):  # not limited per address: see arena.server.auth
        return Viewer(acc.by_token(store, site.league_id(store), header[7:].strip()), via_token=True)
    key = request.cookies.get(auth.SESSION_COOKIE)
    found = acc.session(store, key) if key else None
    return Viewer(*found) if found and found[0].league_id == site.league_id(store) else Viewer(None)


def address(request: Request) -> str:
    """The client for the login limits (:func:`arena.server.auth.client_key`)."""
    return auth.client_key(request.client.host if request.client else "")


MAX_ROW_ID = (1 << 63) - 1
"""SQLite's largest integer: a bigger id raised OverflowError in the store (a 500 and a traceback in the log)."""


def row_id(text: str) -> int | None:
    """An id from a URL or a form, or None (answered as a missing one) unless it is ASCII digits within SQLite's
    range (length first: ``int`` refuses strings of over 4,300 digits with a ValueError)."""
    if not (text.isascii() and text.isdigit() and len(text) <= 19):
        return None
    number = int(text)
    return number if number <= MAX_ROW_ID else None


def page(name: str, viewer_: Viewer, site: Site, status: int = 200, **values: Any) -> HTMLResponse:
    html = _templates.get_template(name).render(viewer=viewer_, league=site.config.name, **values)
    return HTMLResponse(html, status_code=status, headers={"cache-control": "no-store"})


def not_found(viewer_: Viewer, site: Site) -> HTMLResponse:
    return page("message.html", viewer_, site, 404, title="Not found", message="There is no such page.")


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


DRAIN = 32 << 20
"""Bytes of a too-big body read and thrown away so the client reads its 413 (beyond: the connection is dropped)."""


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


def queue_upload(site: Site, store: Store, account: acc.Account, filename: str, data: bytes
                 ) -> tuple[int, dict[str, Any]]:
    """The checks every upload passes (deadline, rate, size and zip rules), then the queue: (status, JSON). The
    upload is for the account's side (its team's bot, or its own): the hourly limit, withdrawn files and identical
    uploads are the side's (leaderboards.teams)."""
    now = time.time()
    if site.config.deadline is not None and now > site.config.deadline:
        return 403, {"error": f"submissions closed at the deadline "
                              f"{_templates.filters['when'](site.config.deadline)}"}
    side = tm.side_of(store, account)
    if len(tm.side_submitted_since(store, account.league_id, side, now - 3600)) >= \
            site.config.max_submissions_per_hour:
        return 429, over_the_rate(site, store, side, now)
    try:
        snapshot = read_upload(filename, data, site.max_bytes, site.config.upload_format)
    except UploadError as exc:
        return (413 if isinstance(exc, TooBig) else 400), {"error": str(exc)}
    withdrawn = tm.side_withdrawn_twin(store, account.league_id, side, files_digest(snapshot))
    if withdrawn is not None:  # an organiser's withdrawal holds: never queued (arena.server.decisions)
        return 409, {"error": withdrawn_line(withdrawn)}
    with site.queueing:  # counted again with the row added under the same lock (the check above is the cheap one)
        if len(tm.side_submitted_since(store, account.league_id, side, now - 3600)) >= \
                site.config.max_submissions_per_hour:
            return 429, over_the_rate(site, store, side, now)
        same = tm.side_same_upload(store, account.league_id, side, snapshot.digest)
        sid = acc.add_submission(store, account.league_id, account.id, side.name, shown(filename)[:200],
                                 snapshot)
    if not sid:  # revoked while the upload was on its way
        gone = acc.account(store, account.id)
        return 403, {"error": revoked_line(gone) if gone is not None else "the account no longer exists"}
    site.wake()
    if same is None:
        return 202, {"id": sid, "status": "queued"}
    return 202, {"id": sid, "status": "queued", "identical_to": same.id, "note": identical_line(store, same)}


def identical_line(store: Store, same: acc.Submission) -> str:
    """Says that an upload has the very files of an earlier one of the account's side, and what became of it."""
    bot = store.bot(same.bot_id) if same.bot_id else None
    became = f"accepted as version {bot.version}" if same.status == "accepted" and bot else same.status
    return f"identical to your submission #{same.id} ({became}): the same files, validated again"


def over_the_rate(site: Site, store: Store, side: tm.Side, now: float) -> dict[str, Any]:
    """The 429's document: its line (the limit, and when the oldest upload of the last hour leaves the window)
    and ``retry_after``, the seconds until then (also the answer's ``Retry-After``). A team shares one limit."""
    limit = site.config.max_submissions_per_hour
    times = tm.side_submitted_since(store, side.members[0].league_id, side, now - 3600)
    after = times[len(times) - limit] + 3600 if len(times) >= limit else now
    clock = datetime.fromtimestamp(after, UTC).strftime("%H:%M:%S")
    wait = max(1, round((after - now) / 60))
    who = f" for your team {shown(side.name)}" if side.is_team else ""
    return {"error": f"at most {limit} submissions an hour{who}; try again after {clock} UTC (in {wait} min)",
            "retry_after": max(1, math.ceil(after - now))}


@dataclass(frozen=True)
class Result:
    """One game of a student's bot as its /me page words it."""

    game_id: int
    game: str
    seat: int
    against: list[str]
    outcome: str
    """won, lost or draw (the bot's return against the best of the others')."""
    how: str
    """"" for a game played to its end, else who ended it how (``bob: timeout``)."""


def results(games: list[Any], ids: set[int]) -> list[Result]:
    """The games of the bots ``ids`` (one account's versions) as won / lost / draw, with how they ended."""
    out = []
    for g in games:
        seat = next((i for i, b in enumerate(g.seats) if b in ids), None)
        if seat is None or not g.returns:
            continue
        best_other = max((r for i, r in enumerate(g.returns) if i != seat), default=g.returns[seat])
        mine = g.returns[seat]
        outcome = "won" if mine > best_other else "lost" if mine < best_other else "draw"
        how = ", ".join(f"{'your bot' if i == seat else shown(g.players[i])}: {t}"
                        for i, t in enumerate(g.terminations) if t != "normal")
        out.append(Result(g.id, g.game, seat, [p for i, p in enumerate(g.players) if i != seat], outcome, how))
    return out


@dataclass(frozen=True)
class SourceFile:
    """One file of a submission as the organiser's source view lists it."""

    path: str
    size: int
    text: str | None
    """Its text; None for a binary file (NUL bytes, or not UTF-8), which is listed but never printed."""
    main: bool
    """The file the author wrote the bot in: the entry file, or a COMP424 checkout's agent file."""


def source_files(snap: Any) -> list[SourceFile]:
    """A submission's files, the main one first, then the other text files, then the binary ones (by path)."""
    from arena.adapters.comp424_names import ENTRY as COMP424_ENTRY  # start-up: only on a comp424 league's page
    main = snap.entry
    if main == COMP424_ENTRY:  # arena's own entry: the student's agent is the file to read
        py = sorted(p for p in snap.files if p.endswith(".py") and p != COMP424_ENTRY)
        main = next((p for p in ("agents/student_agent.py", "student_agent.py") if p in snap.files),
                    next((p for p in py if b"register_agent(" in snap.files[p]), main))
    out = []
    for path, data in snap.files.items():
        try:
            text: str | None = data.decode("utf-8") if b"\0" not in data else None
        except UnicodeDecodeError:
            text = None
        out.append(SourceFile(path, len(data), text, path == main))
    return sorted(out, key=lambda f: (not f.main, f.text is None, f.path))


def revoked_line(account: acc.Account) -> str:
    """What the holder of a revoked account's token is told."""
    return (f"The account {shown(account.name)} was revoked by the league's organisers at "
            f"{_templates.filters['when'](account.revoked)}: its token and sessions no longer work. "
            "Ask the course staff why, or for a new account.")


def sent_size(request: Request) -> str:
    """An upload's size as its request says (the body is not read past the limit)."""
    length = request.headers.get("content-length", "")
    return f"about {int(length) / MB:.1f} MB" if length.isdigit() else "more than that"


def submit_values(site: Site, message: str = "") -> dict[str, Any]:
    """What the submit page says: the league's games, limits and upload format, and whether the deadline passed."""
    deadline = site.config.deadline
    return {"message": message, "games": site.config.games, "limits": site.config.limits, "deadline": deadline,
            "closed": deadline is not None and time.time() > deadline,
            "comp424": site.config.upload_format == "comp424"}


def submission_document(store: Store, sub: acc.Submission) -> dict[str, Any]:
    """``GET /api/submissions/ID``: ``version`` is the bot version it became (None until accepted)."""
    return {"id": sub.id, "bot": sub.bot_name, "version": store.bot(sub.bot_id).version if sub.bot_id else None,
            "status": sub.status, "reason": sub.reason, "detail": sub.detail}


# -- the application ----------------------------------------------------------------------------------------
def create_app(site: Site) -> ASGIApp:
    def sync(handler: Callable[..., Response]) -> Callable[[Request], Awaitable[Response]]:
        """A handler run in the thread pool with this thread's store and the viewer."""
        async def endpoint(request: Request) -> Response:
            def call() -> Response:
                store = site.store()
                return handler(request, store, viewer(site, store, request))
            return await run_in_threadpool(call)
        return endpoint

    def can_view_public(v: Viewer) -> bool:
        return site.config.leaderboard_public or v.account is not None

    # -- public pages ---------------------------------------------------------------------------------------
    def leaderboard_page(request: Request, store: Store, v: Viewer) -> Response:
        if not can_view_public(v):
            return RedirectResponse("/login", 303)
        lg = store.find_league(site.config.name)
        board = leaderboard(store, lg, h2h=True)
        return page("leaderboard.html", v, site, board=board, bot_href=lambda r: f"/bots/{int(r.bot_id)}",
                    teams=tm.teams(store, lg.id),
                    matrix=pictures.matrix_figure(board.rows, board.cells or []),
                    tournament=is_tournament(lg.config) or finals.final_of(store, lg.name) is not None)

    def bracket_page(request: Request, store: Store, v: Viewer) -> Response:
        """A tournament's bracket or Swiss table and places; bracket.js follows it as matches end."""
        if not can_view_public(v):
            return RedirectResponse("/login", 303)
        lg = finals.bracket_league(store, site.config.name)  # the league itself, or the ladder's final
        href = finals.ladder_pages(store, site.config.name, lg)
        t = brackets.tournament(store, lg, bot_href=href)
        if t is None:
            return page("message.html", v, site, 404, title="Not found",
                        message="This league is a round robin or a gauntlet with no final: it has no bracket.")
        return page("bracket.html", v, site, t=t, bot_href=href)

    def bot_page(request: Request, store: Store, v: Viewer) -> Response:
        if not can_view_public(v):
            return RedirectResponse("/login", 303)
        lg = store.find_league(site.config.name)
        found = bot_standing(store, lg.id, row_id(request.path_params["bot_id"]))  # (reads what the page shows)
        if found is None:
            return not_found(v, site)
        row, cells = found
        before = row_id(request.query_params.get("before", ""))  # (a page of older games: ids below it)
        shown_games = store.games(lg.id, order="recent", limit=GAMES_PAGE, bot_id=row.bot_id, before=before)
        older = f"/bots/{row.bot_id}?before={shown_games[-1].id}" if len(shown_games) == GAMES_PAGE else ""
        facts = bot_facts(reversed(shown_games))[0].get(row.bot_id, BotFacts())  # (its games only: no tracebacks)
        figures = pictures.bot_figures(store.bot_history(row.bot_id, HISTORY_POINTS),
                                       pictures.bot_move_times(store, row.bot_id), site.config.limits.move_time,
                                       site.config.limits.first_move_time)
        team = tm.team_named(store, lg.id, row.name)
        return page("bot.html", v, site, row=row, games=list(reversed(facts.games)), figures=figures, cells=cells,
                    team=team,
                    game_href=lambda game_id: f"/games/{int(game_id)}", older=older, paged=before is not None)

    def league_game(request: Request, store: Store) -> Any:
        """The game of the path, or None when it is not one of this league's."""
        number = row_id(request.path_params["game_id"])
        g = store.game(number) if number is not None else None
        return g if g is not None and g.league_id == store.find_league(site.config.name).id else None

    def game_page(request: Request, store: Store, v: Viewer) -> Response:
        if not can_view_public(v):
            return RedirectResponse("/login", 303)
        g = league_game(request, store)
        if g is None:
            return not_found(v, site)
        return page("game.html", v, site, g=g)

    def game_data(request: Request, store: Store, v: Viewer) -> Response:
        """The replay viewer's data of one game, as the report's data files carry it (a script: no inline code)."""
        if not can_view_public(v):
            return Response("", 404)
        g = league_game(request, store)
        drawn = replay(g, {}, details=False) if g is not None else None  # (public: no traceback of anyone's)
        if g is None or drawn is None:
            return Response("", 404)
        listed = [{"id": g.id, "game": g.game, "players": g.players, "result": drawn["result"], "chunk": 0}]
        body = (f"window.ARENA_GAMES = {script_json(listed)};\n"
                f"window.ARENA_REPLAYS = {{0: {script_json({str(g.id): drawn})}}};\n")
        return Response(body, media_type="text/javascript", headers={"cache-control": "no-store"})

    # -- login ----------------------------------------------------------------------------------------------
    def login_page(request: Request, store: Store, v: Viewer, message: str = "", status: int = 200) -> Response:
        token = auth.new_login_token()
        response = page("login.html", v, site, status, login_csrf=token, message=message)
        response.headers.append("set-cookie", auth.cookie(auth.LOGIN_COOKIE, token, secure=site.secure, max_age=3600))
        return response

    async def login_post(request: Request) -> Response:
        body = await limited_body(request, FORM_BYTES)
        if body is None:
            return form_too_big(request)
        fields = {k: v[0] for k, v in parse_qs(body.decode(errors="replace")).items()}

        def call() -> Response:
            store = site.store()
            v = Viewer(None)
            if not auth.same(fields.get("login_csrf"), request.cookies.get(auth.LOGIN_COOKIE)):
                return page("message.html", v, site, 403, title="Forbidden",
                            message="The form was not sent from this site's login page; open the login page again.")
            name, token, where = fields.get("name", "").strip(), fields.get("token", "").strip(), address(request)
            pair = auth.name_at(name, where)
            if site.per_account_address.blocked(pair) or site.per_account.blocked(name) or \
                    site.per_address.blocked(where):
                return login_page(request, store, v, "Too many failed logins; wait 15 minutes.", 429)
            account = acc.by_token(store, site.league_id(store), token) if token else None
            gone = acc.revoked_by_token(store, site.league_id(store), token) if token and account is None else None
            if gone is not None and auth.same(gone.name, name):  # the token's holder: told, not left guessing
                return login_page(request, store, v, revoked_line(gone), 403)
            if account is None or not auth.same(account.name, name):
                site.per_account_address.fail(pair)  # every name counted alike, existing or not: a 429 (or
                site.per_account.fail(name)  # the time taken) must not tell a stranger which names have accounts
                site.per_address.fail(where)
                return login_page(request, store, v, "Unknown name or token.", 401)
            key, _ = acc.new_session(store, account.id, auth.SESSION_TTL)
            response = RedirectResponse("/me", 303)
            response.headers.append("set-cookie", auth.cookie(auth.SESSION_COOKIE, key, secure=site.secure,
                                                              max_age=int(auth.SESSION_TTL)))
            response.headers.append("set-cookie", auth.cookie(auth.LOGIN_COOKIE, "", secure=site.secure, max_age=0))
            return response
        return await run_in_threadpool(call)

    def too_big(request: Request) -> Response:
        """The submit page again, saying how big the upload was (the body's length) and the league's limit."""
        store = site.store()
        v = viewer(site, store, request)
        message = (f"The upload is {sent_size(request)}, over this league's max_bot_mb "
                   f"({site.config.limits.max_bot_mb:g} MB); nothing was stored.")
        if v.account is None:
            return page("message.html", v, site, 413, title="Upload too big", message=message)
        return page("submit.html", v, site, 413, **submit_values(site, message))

    async def form_post(request: Request, action: Callable[[Store, Viewer, dict[str, str]], Response]) -> Response:
        """A logged-in form POST: its CSRF field must match the session's, else 403 and nothing changes."""
        parsed = await upload_form(request, site.max_bytes) if \
            request.headers.get("content-type", "").startswith("multipart/") else None
        if parsed is None and request.headers.get("content-type", "").startswith("multipart/"):
            return await run_in_threadpool(too_big, request)
        if parsed is None:
            body = await limited_body(request, FORM_BYTES)
            if body is None:
                return form_too_big(request)
            parsed = ({k: v[0] for k, v in parse_qs(body.decode(errors="replace")).items()}, None)
        fields, upload = parsed

        def call() -> Response:
            store = site.store()
            v = viewer(site, store, request)
            if v.account is None or v.via_token or not auth.same(fields.get("csrf"), v.csrf):
                return page("message.html", v, site, 403, title="Forbidden",
                            message="This form needs a login and its own page's token; open the page again.")
            if upload is not None:
                fields["_filename"] = upload[0]
                fields["_data"] = upload[1]  # type: ignore[assignment]
            return action(store, v, fields)
        return await run_in_threadpool(call)

    def form_too_big(request: Request) -> Response:
        """A form (not an upload) over :data:`FORM_BYTES`: a page of the site with its size and the limit."""
        length = request.headers.get("content-length", "")
        size = f"{int(length) / 1024:.0f} kB" if length.isdigit() else "more than that"
        return page("message.html", Viewer(None), site, 413, title="Form too big",
                    message=f"The form sent is {size}, over the {FORM_BYTES // 1024} kB a form of this site may be; "
                            "nothing was done.")

    def nowhere(request: Request, store: Store, v: Viewer) -> Response:
        """Any other address: 404, a page of the site (the API's addresses: a JSON line)."""
        if request.url.path.startswith("/api/"):
            return error(404, "no such address of the API (docs/server.md lists them)")
        return page("message.html", v, site, 404, title="Not found",
                    message="There is no such page (a form's address opened as a page, or a mistyped one).")

    async def logout(request: Request) -> Response:
        def action(store: Store, v: Viewer, fields: dict[str, str]) -> Response:
            key = request.cookies.get(auth.SESSION_COOKIE)
            if key:
                acc.end_session(store, key)
            response = RedirectResponse("/", 303)
            response.headers.append("set-cookie", auth.cookie(auth.SESSION_COOKIE, "", secure=site.secure,
                                                              max_age=0))
            return response
        return await form_post(request, action)

    # -- a student's pages ----------------------------------------------------------------------------------
    def submit_page(request: Request, store: Store, v: Viewer) -> Response:
        if v.account is None:
            return RedirectResponse("/login", 303)
        return page("submit.html", v, site, **submit_values(site))

    async def submit_post(request: Request) -> Response:
        def action(store: Store, v: Viewer, fields: dict[str, Any]) -> Response:
            assert v.account is not None
            if "_data" not in fields:
                return page("submit.html", v, site, 400, **submit_values(site, "Choose a file to upload."))
            status, doc = queue_upload(site, store, v.account, fields["_filename"], fields["_data"])
            if status != 202:
                return page("submit.html", v, site, status, **submit_values(site, doc["error"]))
            return RedirectResponse(f"/me?sent={int(doc['id'])}", 303)
        return await form_post(request, action)

    def me_page(request: Request, store: Store, v: Viewer) -> Response:
        if v.account is None:
            return RedirectResponse("/login", 303)
        lg = store.find_league(site.config.name)
        side = tm.side_of(store, v.account)  # (a team's members see its bot, uploads and tracebacks alike)
        subs = tm.side_submissions(store, lg.id, side) if side.is_team else acc.submissions(store, lg.id,
                                                                                             v.account.id)
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

    # -- the API --------------------------------------------------------------------------------------------
    async def api_submit(request: Request) -> Response:
        def who() -> Viewer:
            store = site.store()
            return viewer(site, store, request)
        v = await run_in_threadpool(who)
        if not v.via_token or v.account is None:  # a script's API: a bearer token, never a cookie (no CSRF)
            gone = await run_in_threadpool(revoked_bearer, request)
            return error(401, revoked_line(gone) if gone is not None else
                         "send Authorization: Bearer TOKEN (the token of `arena accounts add`)")
        parsed = await upload_form(request, site.max_bytes)
        if parsed is None:
            return error(413, f"the upload is {sent_size(request)}, over the league's max_bot_mb "
                              f"({site.config.limits.max_bot_mb:g} MB)")
        fields, upload = parsed
        if upload is None:
            return error(400, "send the bot as the multipart field `file` (a .py or a .zip)")
        account = v.account
        status, doc = await run_in_threadpool(lambda: queue_upload(site, site.store(), account, *upload))
        wait = {"retry-after": str(doc["retry_after"])} if "retry_after" in doc else None
        return JSONResponse(doc, status_code=status, headers=wait)

    def revoked_bearer(request: Request) -> acc.Account | None:
        header = request.headers.get("authorization", "")
        if not header.lower().startswith("bearer "):
            return None
        store = site.store()
        return acc.revoked_by_token(store, site.league_id(store), header[7:].strip())

    def api_submission(request: Request, store: Store, v: Viewer) -> Response:
        sid = row_id(request.path_params["sid"])
        sub = acc.submission(store, sid) if sid is not None else None
        if v.account is None:
            return error(401, "send Authorization: Bearer TOKEN")
        if sub is None or sub.account_id not in tm.side_of(store, v.account).member_ids:  # another's (not a
            return error(404, "no such submission of yours")  # teammate's): the same answer as none at all
        return JSONResponse(submission_document(store, sub))

    def api_leaderboard(request: Request, store: Store, v: Viewer) -> Response:
        if not can_view_public(v):
            return error(401, "this league's leaderboard is for its accounts: send Authorization: Bearer TOKEN")
        doc = document(store, store.find_league(site.config.name))
        for row in doc["bots"]:  # (`arena leaderboard --json`'s document, less what the pages hide: file names)
            if row["kind"] == "file":
                row["spec"] = None
        return Response(dumps(doc, indent=2) + "\n", media_type="application/json")

    def api_bracket(request: Request, store: Store, v: Viewer) -> Response:
        """`arena bracket --json`'s document (bracket.js polls it)."""
        if not can_view_public(v):
            return error(401, "this league's bracket is for its accounts: send Authorization: Bearer TOKEN")
        lg = finals.bracket_league(store, site.config.name)
        # every viewer's page polls this every 2 s: the document is made again only when a game or a round was stored
        key = (lg.id, store.count_games(lg.id), len(store.decisions(lg.id)))
        with bracket_lock:
            text = bracket_docs.get(key)
        if text is None:
            t = brackets.tournament(store, lg, draw=False)
            if t is None:
                return error(404, "this league is not a tournament (format = \"swiss\", \"knockout\" or "
                                  "\"double_elimination\"): it has no bracket")
            text = dumps(t.doc, indent=2) + "\n"
            with bracket_lock:
                bracket_docs.clear()  # (only the latest is asked for)
                bracket_docs[key] = text
        return Response(text, media_type="application/json", headers={"cache-control": "no-store"})

    bracket_docs: dict[tuple[int, int, int], str] = {}
    bracket_lock = threading.Lock()

    # -- organisers -----------------------------------------------------------------------------------------
    audited: dict[str, Any] = {}
    audit_lock = threading.Lock()

    def pairs_to_look_at(store: Store, league_id: int) -> dict[str, Any]:
        """`arena audit`'s findings, computed again when games were added and AUDIT_EVERY seconds have passed (a
        fit per pair of bots: seconds for a big league, not for every view while the ladder plays)."""
        games = store.count_games(league_id)
        with audit_lock:
            if "doc" not in audited or (audited["games"] != games and time.monotonic() - audited["at"] >= AUDIT_EVERY):
                audited.update(doc=league_audit(store, league_id).as_json(), games=games, at=time.monotonic())
            return {**audited["doc"], "games": audited["games"]}

    def admin_page(request: Request, store: Store, v: Viewer) -> Response:
        if not v.organiser:
            return not_found(v, site)
        lg = store.find_league(site.config.name)
        people = acc.accounts(store, lg.id)
        names = {a.id: a.name for a in people}
        subs = acc.submissions(store, lg.id, limit=ADMIN_ROWS)  # (what it lists; the counts are the store's)
        counts = acc.submission_counts(store, lg.id)
        bots = store.bots(lg.id, source=False)  # (a row per version, no files: arena.server.similarity)
        current = [b for b in bots if b.status != "retired" and b.origin == "submit"]
        identical = similarity.identical(store, lg.id, bots)
        near = similarity.near_duplicates(store, current, site.near)
        return page("admin.html", v, site, problems=site.problems(), accounts=people, counts=counts, subs=subs[:500],
                    names=names,
                    identical={k: x for k, x in identical.items() if x}, near=near,
                    probation=[b for b in bots if b.status == "probation"],
                    actions=acc.actions(store, lg.id, limit=ADMIN_ROWS),
                    audit=pairs_to_look_at(store, lg.id), final=finals.final_of(store, lg.name),
                    final_formats=finals.FORMATS, ladder_games=site.config.games)

    def admin_submission(request: Request, store: Store, v: Viewer) -> Response:
        if not v.organiser:
            return not_found(v, site)
        sid = row_id(request.path_params["sid"])
        sub = acc.submission(store, sid) if sid is not None else None
        if sub is None or sub.league_id != site.league_id(store):
            return not_found(v, site)
        files = source_files(acc.submission_snapshot(store, sub.id))
        owner = acc.account(store, sub.account_id)
        return page("admin_submission.html", v, site, sub=sub, files=files, owner=owner.name if owner else "?")

    async def admin_action(request: Request) -> Response:
        def action(store: Store, v: Viewer, fields: dict[str, str]) -> Response:
            if not v.organiser:
                return not_found(v, site)
            assert v.account is not None
            lg = store.find_league(site.config.name)
            what, target = request.path_params["action"], fields.get("target", "")
            if what == "revoke":
                a = acc.account_named(store, lg.id, target)
                if a is None:
                    return not_found(v, site)
                if a.id == v.account.id:  # (an organiser locking themself out: done with `arena accounts revoke`)
                    return page("message.html", v, site, 400, title="Not revoked",
                                message="You cannot revoke your own account here.")
                if fields.get("confirm") != "yes":  # a step of its own: one click on the list revokes nobody
                    return page("admin_confirm.html", v, site, target=a.name)
                acc.revoke(store, a.id)
            elif what == "release":
                bot = store.current_bot(lg.id, target)
                if bot is None or not store.release_bot(bot.id):
                    return not_found(v, site)
            elif what == "withdraw":
                sid = row_id(target)
                sub = acc.submission(store, sid) if sid is not None else None
                if sub is None or sub.league_id != lg.id:
                    return not_found(v, site)
                if sub.bot_id is not None:
                    store.retire_bot(sub.bot_id, f"withdrawn by {v.account.name}")
                acc.finish(store, sub.id, "withdrawn", reason=f"withdrawn by {v.account.name}")
            elif what == "final":  # the course's final (arena.server.finals): the ladder's loop plays it
                target = fields.get("format", "")
                try:
                    finals.start(store, site.config, site.db.resolve(), target,
                                 [g.strip() for g in fields.get("games", "").splitlines() if g.strip()],
                                 fields.get("games_per_pairing", "2"))
                except ConfigError as exc:
                    return page("message.html", v, site, 400, title="No final", message=str(exc))
            else:
                return not_found(v, site)
            acc.record_action(store, lg.id, v.account.name, what, target)
            site.entered.set()
            return RedirectResponse("/admin", 303)
        return await form_post(request, action)

    def guide_page(request: Request, store: Store, v: Viewer) -> Response:
        """docs/bot-authors.md (packaged as arena/server/bot-authors.md), as plain text in a page of the site."""
        text = resources.files("arena.server").joinpath("bot-authors.md").read_text(encoding="utf-8")
        return page("guide.html", v, site, text=text)

    def login_get(request: Request, store: Store, v: Viewer) -> Response:
        key = request.cookies.get(auth.SESSION_COOKIE)
        gone = acc.revoked_session(store, key) if key and v.account is None else None
        return login_page(request, store, v, revoked_line(gone) if gone else "")

    async def viewer_script(request: Request) -> Response:
        js = resources.files("arena.output.templates").joinpath("replay.js").read_text()
        return Response(js, media_type="text/javascript", headers={"cache-control": "max-age=300"})

    async def status_script(request: Request) -> Response:
        js = resources.files("arena.server").joinpath("templates/status.js").read_text()
        return Response(js, media_type="text/javascript", headers={"cache-control": "max-age=300"})

    async def bracket_script(request: Request) -> Response:
        js = resources.files("arena.server").joinpath("templates/bracket.js").read_text()
        return Response(js, media_type="text/javascript", headers={"cache-control": "max-age=300"})

    async def stylesheet(request: Request) -> Response:
        css = resources.files("arena.output.templates").joinpath("report.css").read_text() + \
            resources.files("arena.server").joinpath("templates/site.css").read_text()
        return Response(css, media_type="text/css", headers={"cache-control": "max-age=300"})

    routes = [
        Route("/", sync(leaderboard_page)),
        Route("/bots/{bot_id}", sync(bot_page)),
        Route("/games/{game_id}", sync(game_page)),
        Route("/games/{game_id}/replay-data.js", sync(game_data)),
        Route("/login", sync(login_get), methods=["GET"]),
        Route("/login", login_post, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/guide", sync(guide_page), methods=["GET"]),
        Route("/submit", sync(submit_page), methods=["GET"]),
        Route("/submit", submit_post, methods=["POST"]),
        Route("/me", sync(me_page)),
        Route("/admin", sync(admin_page)),
        Route("/admin/submissions/{sid}", sync(admin_submission)),
        Route("/admin/{action}", admin_action, methods=["POST"]),
        Route("/api/submissions", api_submit, methods=["POST"]),
        Route("/api/submissions/{sid}", sync(api_submission)),
        Route("/api/leaderboard", sync(api_leaderboard)),
        Route("/bracket", sync(bracket_page)),
        Route("/api/bracket", sync(api_bracket)),
        *scrimmage_pages.routes(site, scrimmage_pages.Kit(sync, form_post, page, error, row_id, viewer,
                                                          limited_body, FORM_BYTES)),
        Route("/static/site.css", stylesheet),
        Route("/static/replay.js", viewer_script),
        Route("/static/status.js", status_script),
        Route("/static/bracket.js", bracket_script),
        Route("/{path:path}", sync(nowhere), methods=["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]),
    ]
    return SecurityHeaders(Starlette(routes=routes, exception_handlers=connections.exception_handlers()))

