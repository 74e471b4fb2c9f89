"""`arena serve`'s endpoints in process (Starlette's TestClient: no server, no ladder, a real store file), by
audience: the public pages, an account's, the organisers', the API, the static files, and the pieces the site is
made of (the viewer's backend, the guards, the forms' CSRF check, the lifespan). The real-server tests beside this
one (test_web and the others) cover the same addresses over HTTP with the league running."""
from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.testclient import TestClient

from arena.league.config import load_config
from arena.server import api, auth, organiser_pages
from arena.server.app import CSP, create_app
from arena.server.site import Site
from arena.server.viewers import ViewerBackend
from leaderboards import accounts as acc
from leaderboards.store import Store
from tests.server.support import PLAIN, multipart

LEAGUE = '''name = "inproc"
games = ["nim(n=9)"]
seed = 1
database = "inproc.sqlite"
bots = ["random", "greedy"]
max_submissions_per_hour = 2
'''


@dataclasses.dataclass
class Made:
    site: Site
    tokens: dict[str, str]
    work: Path


def make_site(work: Path, extra: str = "") -> Made:
    (work / "l.toml").write_text(extra + LEAGUE)
    config = load_config(work / "l.toml")
    tokens = {}
    with Store.open(work / "inproc.sqlite", create=True) as store:
        league_id = store.ensure_league(config.name, {"games": config.games}).id
        for name, organiser in (("alice", False), ("bob", False), ("prof", True)):
            account, token = acc.add_account(store, league_id, name, organiser=organiser)
            tokens[name] = token
    return Made(Site(db=work / "inproc.sqlite", config=config), tokens, work)


@pytest.fixture
def made(tmp_path: Path) -> Made:
    return make_site(tmp_path)


@pytest.fixture
def client(made: Made) -> Iterator[TestClient]:
    with TestClient(create_app(made.site), follow_redirects=False) as c:
        yield c


def log_in(c: TestClient, name: str, token: str) -> str:
    """Logs ``c`` in through the login form; returns the session's CSRF token (from the submit page)."""
    csrf = re.search(r'name="login_csrf" value="([^"]+)"', c.get("/login").text)
    assert csrf is not None
    answer = c.post("/login", data={"login_csrf": csrf.group(1), "name": name, "token": token})
    assert answer.status_code == 303 and answer.headers["location"] == "/me", answer.text[-500:]
    found = re.search(r'name="csrf" value="([^"]+)"', c.get("/submit").text)
    assert found is not None
    return found.group(1)


# -- the public pages ---------------------------------------------------------------------------------------------
def test_the_leaderboard_is_public_and_every_answer_carries_the_security_headers(client: TestClient) -> None:
    answer = client.get("/")
    assert answer.status_code == 200 and 'id="leaderboard"' in answer.text
    assert answer.headers["content-security-policy"] == CSP and answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["x-content-type-options"] == "nosniff" and answer.headers["referrer-policy"] == "no-referrer"
    assert client.get("/api/leaderboard").json()["league"] == "inproc"
    missing = client.get("/bots/99")
    assert missing.status_code == 404 and "There is no such page" in missing.text
    assert client.get("/no/such/page").status_code == 404
    assert client.get("/api/nothing").json() == {"error": "no such address of the API (docs/server.md lists them)"}


def test_a_private_league_sends_strangers_to_the_login_page(tmp_path: Path) -> None:
    made = make_site(tmp_path, "leaderboard_public = false\n")
    with TestClient(create_app(made.site), follow_redirects=False) as c:
        for path in ("/", "/bots/1", "/games/1", "/bracket"):
            answer = c.get(path)
            assert (answer.status_code, answer.headers.get("location")) == (303, "/login"), path
        board = c.get("/api/leaderboard")
        assert board.status_code == 401 and "leaderboard is for its accounts" in board.json()["error"]
        assert c.get("/games/1/replay-data.js").status_code == 404
        assert c.get("/", headers={"authorization": f"Bearer {made.tokens['alice']}"}).status_code == 200
        with Store.open(made.site.db) as store:
            bob_account = acc.account_named(store, store.find_league("inproc").id, "bob")
            assert bob_account is not None
            acc.revoke(store, bob_account.id)
        bob = {"authorization": f"Bearer {made.tokens['bob']}"}
        for path in ("/api/leaderboard", "/api/bracket", "/api/submissions/1", "/api/scrimmages/1"):  # the API says why
            answer = c.get(path, headers=bob)
            assert answer.status_code == 401 and "was revoked" in answer.json()["error"], path
            guess = c.get(path, headers={"authorization": f"Bearer {made.tokens['bob'][:-2]}xx"})  # a stranger's
            assert "revoked" not in guess.text and "bob" not in guess.text, path  # learns no account or revocation


# -- an account's pages -------------------------------------------------------------------------------------------
def test_logging_in_gives_a_strict_httponly_session_and_its_pages(client: TestClient, made: Made) -> None:
    assert client.get("/me").headers["location"] == "/login"  # (nobody logged in yet)
    login = client.get("/login")
    assert "arena_login=" in login.headers["set-cookie"] and "SameSite=Strict" in login.headers["set-cookie"]
    csrf = re.search(r'name="login_csrf" value="([^"]+)"', login.text)
    assert csrf is not None
    answer = client.post("/login", data={"login_csrf": csrf.group(1), "name": "alice",
                                         "token": made.tokens["alice"]})
    assert answer.status_code == 303
    session = [c for c in answer.headers.get_list("set-cookie") if c.startswith(f"{auth.SESSION_COOKIE}=")]
    assert session and "HttpOnly" in session[0] and "SameSite=Strict" in session[0] and "Secure" not in session[0]
    me = client.get("/me")
    assert me.status_code == 200 and me.headers["cache-control"] == "no-store" and "alice" in me.text


def test_a_login_without_its_form_token_or_with_a_wrong_token_is_refused(client: TestClient, made: Made) -> None:
    assert client.post("/login", data={"name": "alice", "token": made.tokens["alice"]}).status_code == 403
    text, codes = client.get("/login").text, []
    for _ in range(auth.MAX_FAILS_PER_ACCOUNT_ADDRESS + 1):  # (each answer is the form again, with a new token)
        csrf = re.search(r'name="login_csrf" value="([^"]+)"', text)
        assert csrf is not None
        answer = client.post("/login", data={"login_csrf": csrf.group(1), "name": "alice", "token": "wrong"})
        codes.append(answer.status_code)
        text = answer.text
    assert codes == [401] * auth.MAX_FAILS_PER_ACCOUNT_ADDRESS + [429]
    assert client.post("/login", data={"name": "x" * 20000}).status_code == 413


def test_every_form_needs_the_sessions_csrf_token(client: TestClient, made: Made) -> None:
    csrf = log_in(client, "alice", made.tokens["alice"])
    assert client.post("/logout", data={}).status_code == 403
    assert client.post("/logout", data={"csrf": "not-it"}).status_code == 403
    body, ctype = multipart({"file": ("a.py", PLAIN.encode())})
    assert client.post("/submit", content=body, headers={"content-type": ctype}).status_code == 403
    bearer = TestClient(client.app, follow_redirects=False)  # a bearer token is not a session: no form with it
    refused = bearer.post("/logout", data={"csrf": csrf}, headers={"authorization": f"Bearer {made.tokens['alice']}"})
    assert refused.status_code == 403
    body, ctype = multipart({"file": ("a.py", PLAIN.encode())}, {"csrf": csrf})
    sent = client.post("/submit", content=body, headers={"content-type": ctype})
    assert sent.status_code == 303 and sent.headers["location"].startswith("/me?sent=")
    out = client.post("/logout", data={"csrf": csrf})
    assert out.status_code == 303 and f"{auth.SESSION_COOKIE}=;" in out.headers["set-cookie"]
    assert client.get("/me").status_code == 303


# -- the organisers' pages ----------------------------------------------------------------------------------------
def test_organiser_pages_are_404_to_anyone_else(client: TestClient, made: Made) -> None:
    assert client.get("/admin").status_code == 404
    csrf = log_in(client, "alice", made.tokens["alice"])
    assert client.get("/admin").status_code == 404
    assert client.post("/admin/release", data={"csrf": csrf, "target": "bob"}).status_code == 404
    assert client.post("/admin/release", data={"target": "bob"}).status_code == 403  # (no token: CSRF first)
    prof = TestClient(client.app, follow_redirects=False)
    prof_csrf = log_in(prof, "prof", made.tokens["prof"])
    admin = prof.get("/admin")
    assert admin.status_code == 200 and 'id="audit-flags"' in admin.text
    confirm = prof.post("/admin/revoke", data={"csrf": prof_csrf, "target": "bob"})
    assert confirm.status_code == 200 and "bob" in confirm.text  # (a step of its own)
    done = prof.post("/admin/revoke", data={"csrf": prof_csrf, "target": "bob", "confirm": "yes"})
    assert done.status_code == 303 and made.site.entered.is_set()


# -- the API ------------------------------------------------------------------------------------------------------
def test_the_api_takes_uploads_from_a_token_and_limits_them_per_hour(client: TestClient, made: Made) -> None:
    body, ctype = multipart({"file": ("a.py", PLAIN.encode())})
    nobody = client.post("/api/submissions", content=body, headers={"content-type": ctype})
    assert nobody.status_code == 401 and "Bearer" in nobody.json()["error"]
    alice = {"authorization": f"Bearer {made.tokens['alice']}", "content-type": ctype}
    first = client.post("/api/submissions", content=body, headers=alice)
    assert first.status_code == 202 and first.json()["status"] == "queued"
    assert client.post("/api/submissions", content=body, headers=alice).status_code == 202
    third = client.post("/api/submissions", content=body, headers=alice)
    assert third.status_code == 429 and int(third.headers["retry-after"]) == third.json()["retry_after"] > 0
    assert "at most 2 submissions an hour" in third.json()["error"]
    sid = first.json()["id"]
    mine = client.get(f"/api/submissions/{sid}", headers={"authorization": f"Bearer {made.tokens['alice']}"})
    assert mine.status_code == 200 and mine.json()["status"] == "queued" and mine.headers["cache-control"] == "no-store"
    theirs = client.get(f"/api/submissions/{sid}", headers={"authorization": f"Bearer {made.tokens['bob']}"})
    assert theirs.status_code == 404
    big = multipart({"file": ("big.py", b"#" * (3 << 20))})
    over = client.post("/api/submissions", content=big[0],
                       headers={"authorization": f"Bearer {made.tokens['bob']}", "content-type": big[1]})
    assert over.status_code == 413


def test_a_revoked_token_is_told_so(client: TestClient, made: Made) -> None:
    with Store.open(made.site.db) as store:
        bob = acc.account_named(store, store.find_league("inproc").id, "bob")
        assert bob is not None
        acc.revoke(store, bob.id)
    body, ctype = multipart({"file": ("a.py", PLAIN.encode())})
    answer = client.post("/api/submissions", content=body,
                         headers={"authorization": f"Bearer {made.tokens['bob']}", "content-type": ctype})
    assert answer.status_code == 401 and "was revoked" in answer.json()["error"]


def test_the_scrimmage_api_needs_a_token_and_a_small_json_body(client: TestClient, made: Made) -> None:
    assert client.post("/api/scrimmages", json={"opponent": "bob"}).status_code == 401
    assert client.post("/api/scrimmages", content=b"x" * 20000).status_code == 413  # (the body is read first)
    alice = {"authorization": f"Bearer {made.tokens['alice']}"}
    assert client.post("/api/scrimmages", content=b"[1]", headers=alice).status_code == 400
    refused = client.post("/api/scrimmages", json={"opponent": "bob", "games": 2}, headers=alice)
    assert refused.status_code == 404 and "has a bot of that name" in refused.json()["error"]  # (bob has no bot)
    assert client.get("/api/scrimmages/1", headers=alice).json() == {"error": "no such scrimmage"}
    assert client.get("/scrimmages/1").status_code == 404


def test_a_round_robin_has_no_bracket(client: TestClient) -> None:
    page = client.get("/bracket")
    assert page.status_code == 404 and "no final: it has no bracket" in page.text
    answer = client.get("/api/bracket")
    assert answer.status_code == 404 and "is not a tournament" in answer.json()["error"]


# -- static files -------------------------------------------------------------------------------------------------
def test_static_files_are_served_alike_to_everyone_and_only_those(client: TestClient, made: Made) -> None:
    for name, kind in (("site.css", "text/css"), ("report.css", "text/css"), ("replay.js", "text/javascript"),
                       ("status.js", "text/javascript"), ("bracket.js", "text/javascript")):
        answer = client.get(f"/static/{name}", headers={"authorization": f"Bearer {made.tokens['alice']}"})
        assert answer.status_code == 200 and answer.headers["content-type"].startswith(kind), name
        assert answer.headers["cache-control"] == "max-age=300" and answer.content, name
        again = client.get(f"/static/{name}", headers={"if-none-match": answer.headers["etag"]})
        assert again.status_code == 304, name
    assert "/api/submissions/" in client.get("/static/status.js").text
    for path in ("/static/results.html", "/static/__init__.py", "/static/../app.py", "/static/nothing.css"):
        answer = client.get(path)
        assert answer.status_code == 404 and "There is no such page" in answer.text, path
    assert client.post("/static/site.css").status_code == 404


# -- the pieces ---------------------------------------------------------------------------------------------------
def test_an_endpoint_is_served_alone_with_the_viewers_backend(made: Made) -> None:
    """A module-level endpoint in an application of its own: the backend finds the viewer, the guard decides."""
    app = Starlette(routes=[Route("/admin", organiser_pages.admin_page), Route("/mine/{sid}", api.submission)],
                    middleware=[Middleware(AuthenticationMiddleware, backend=ViewerBackend(made.site))])
    app.state.site = made.site
    with TestClient(app) as c:
        assert c.get("/admin").status_code == 404
        assert c.get("/admin", headers={"authorization": f"Bearer {made.tokens['prof']}"}).status_code == 200
        assert c.get("/mine/1").json() == {"error": "send Authorization: Bearer TOKEN"}


def test_the_site_is_built_whole_and_the_lifespan_runs_with_the_app(made: Made) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.site.wake = lambda: None  # type: ignore[misc]
    seen: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        seen.append("up")
        yield
        seen.append("down")
    with TestClient(create_app(made.site, lifespan=lifespan)) as c:
        assert seen == ["up"] and c.get("/").status_code == 200
    assert seen == ["up", "down"]


def test_a_viewer_that_cannot_be_looked_up_for_want_of_open_files_is_a_503(made: Made, monkeypatch) -> None:
    """The backend looks the viewer up before any endpoint runs (outside the endpoints' exception handlers): out of
    open files there, the answer is the same 503 as an endpoint's (arena.server.connections)."""
    import errno

    def no_files(site: Site) -> Store:
        raise OSError(errno.EMFILE, "Too many open files")
    with TestClient(create_app(made.site)) as c:
        monkeypatch.setattr(Site, "store", no_files)
        answer = c.get("/me")
        assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
        assert c.get("/static/site.css").status_code == 200  # (no store for the static files)


def test_a_threads_connection_left_mid_statement_or_transaction_is_replaced(made: Made) -> None:
    """A read statement left pending (a cursor a generator or a traceback keeps) or a transaction left open pins an
    old snapshot: the thread's next request gets a fresh connection instead of reading the past."""
    store = made.site.store()
    assert made.site.store() is store and store.settled()  # (kept for the thread's next request)
    with Store.open(made.site.db) as writer:
        cursor = store.conn.execute("SELECT id FROM accounts")
        assert cursor.fetchone() is not None  # (two rows left unread: the statement is still running)
        acc.add_account(writer, writer.find_league("inproc").id, "dora")
        assert store.conn.execute("SELECT count(*) FROM accounts").fetchone()[0] == 3  # (the pinned past)
        fresh = made.site.store()
        assert fresh is not store and fresh.settled()
        assert fresh.conn.execute("SELECT count(*) FROM accounts").fetchone()[0] == 4
        fresh.conn.execute("BEGIN")
        assert fresh.conn.execute("SELECT count(*) FROM accounts").fetchone()[0] == 4
        again = made.site.store()
        assert again is not fresh and again.settled()
        assert made.site.store() is again  # (a settled connection is kept)
