"""`arena serve`'s web side through a real server and a real HTTP client: sessions and cookies, CSRF, login limits,
revocation, escaping and CSP, privacy between accounts, the organiser's pages, the API's documents."""
from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from arena.server import auth
from tests.server.support import ARENA, PLAIN, RAISER, Client, Server, accounts, make_league, multipart, wait_idle

pytestmark = pytest.mark.xdist_group("server")
EVIL = "<i>evil</i>"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    work = tmp_path_factory.mktemp("web")
    make_league(work)
    tokens = accounts(work, "alice", "bob", "carol", EVIL)
    tokens.update(accounts(work, "prof", organiser=True))
    server = Server(work).start()
    client = Client(server.base)
    code, doc = client.submit_api(tokens["alice"], "alice.py", PLAIN.encode())
    assert code == 202
    alice_sub = doc["id"]
    code, doc = client.submit_api(tokens["bob"], "bob.py", RAISER.encode())
    bob_sub = doc["id"]
    client.wait(tokens["alice"], alice_sub, {"accepted"})
    client.wait(tokens["bob"], bob_sub, {"refused"})
    yield {"server": server, "tokens": tokens, "work": work, "alice_sub": alice_sub, "bob_sub": bob_sub}
    assert server.stop() == 143


def test_the_site_says_where_it_answers_once_its_lifespan_started(site):
    """uvicorn runs the application's lifespan (lifespan="on"): arena serve's says the address there."""
    assert f"arena serve: league srv on http://127.0.0.1:{site['server'].port}/" in site["server"].output()


@pytest.mark.slow
def test_session_cookie_is_httponly_samesite_strict_and_not_secure_without_https(site):
    c = Client(site["server"].base)
    _, headers, _ = c.get("/login")
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
    _, _, text = c.get("/login")
    csrf = re.search(r'name="login_csrf" value="([^"]+)"', text).group(1)
    code, headers, _ = c.form("/login", {"login_csrf": csrf, "name": "carol", "token": site["tokens"]["carol"]})
    assert code == 303
    session = [v for v in headers["set-cookie"].splitlines() if v.startswith("arena_session=")]
    assert session and "HttpOnly" in session[0] and "SameSite=Strict" in session[0] and "Secure" not in session[0]


@pytest.mark.slow
def test_a_login_without_its_form_token_is_refused(site):
    c = Client(site["server"].base)
    code, _, _ = c.form("/login", {"name": "carol", "token": site["tokens"]["carol"]})
    assert code == 403 and not [k for k in c.jar if k.name == "arena_session"]


def test_a_form_post_without_the_csrf_token_is_403_and_stores_nothing(site):
    c = Client(site["server"].base)
    assert c.login("carol", site["tokens"]["carol"]) == 303
    body, ctype = multipart({"file": ("carol.py", PLAIN.encode())})
    code, _, _ = c.request("POST", "/submit", body, ctype)
    assert code == 403
    body, ctype = multipart({"file": ("carol.py", PLAIN.encode())}, {"csrf": "not-the-token"})
    assert c.request("POST", "/submit", body, ctype)[0] == 403
    _, _, me = c.get("/me")
    assert "Nothing submitted yet" in me
    code, _, _ = c.form("/logout", {})  # a logout too
    assert code == 403 and c.get("/me")[0] == 200
    body, ctype = multipart({"file": ("carol.py", PLAIN.encode())}, {"csrf": c.csrf()})
    assert c.request("POST", "/submit", body, ctype)[0] == 303  # with it: queued
    assert "carol.py" in c.get("/me")[2]


def test_a_revoked_token_and_its_sessions_fail_at_once(site):
    work, tokens = site["work"], accounts(site["work"], "dave")
    c = Client(site["server"].base)
    assert c.login("dave", tokens["dave"]) == 303 and c.get("/me")[0] == 200
    assert c.status(tokens["dave"], 10**6)[0] == 404  # the token works (no such submission)
    p = subprocess.run([ARENA, "accounts", "revoke", "--league", "l.toml", "dave"], cwd=work, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert c.status(tokens["dave"], 10**6)[0] == 401
    assert c.submit_api(tokens["dave"], "d.py", PLAIN.encode())[0] == 401
    code, headers, _ = c.get("/me")
    assert code == 303 and headers["location"] == "/login"


def test_every_page_has_a_csp_without_inline_script_and_escapes_names(site):
    c = Client(site["server"].base)
    tokens = site["tokens"]
    code, doc = c.submit_api(tokens[EVIL], "<b>x</b>.py", PLAIN.encode())
    assert code == 202
    c.wait(tokens[EVIL], doc["id"], {"accepted"})
    assert c.login(EVIL, tokens[EVIL]) == 303
    for path in ("/", "/login", "/submit", "/me", "/bots/1"):
        code, headers, text = c.get(path)
        assert code == 200, path
        csp = headers["content-security-policy"]
        assert "script-src" not in csp or "'unsafe-inline'" not in csp
        assert "default-src 'none'" in csp
        for attributes, body in re.findall(r"<script([^>]*)>(.*?)</script>", text, re.S | re.I):  # files only
            assert re.fullmatch(r' src="/[^"]+"', attributes) and not body.strip(), (path, attributes, body)
        assert EVIL not in text and "<b>x</b>" not in text
    assert "&lt;i&gt;evil&lt;/i&gt;" in c.get("/me")[2] and "&lt;b&gt;x&lt;/b&gt;.py" in c.get("/me")[2]


def test_one_account_never_sees_anothers_submissions_source_or_tracebacks(site):
    base, tokens = site["server"].base, site["tokens"]
    alice, bob = Client(base), Client(base)
    assert alice.login("alice", tokens["alice"]) == 303 and bob.login("bob", tokens["bob"]) == 303
    assert bob.status(tokens["bob"], site["alice_sub"])[0] == 404
    assert alice.status(tokens["alice"], site["bob_sub"])[0] == 404
    assert alice.status(tokens["alice"], 10**6)[0] == 404  # the same answer as no such id
    assert bob.status(tokens["bob"], site["bob_sub"])[1]["status"] == "refused"
    assert "IndexError" in bob.get("/me")[2]
    for path in ("/me", "/", "/bots/1", "/bots/2", "/bots/3"):
        text = alice.get(path)[2]
        assert "IndexError" not in text and "bob.py" not in text
    anon = Client(base)
    for path in ("/", "/bots/3"):
        text = anon.get(path)[2]
        assert "rng.choice" not in text  # no source on public pages
    for who in (alice, bob, anon):
        assert who.get("/admin")[0] == 404
        assert who.get(f"/admin/submissions/{site['alice_sub']}")[0] == 404
        assert who.form("/admin/revoke", {"target": "bob"})[0] in (403, 404)
    assert Client(base).status(tokens["bob"], site["bob_sub"])[1]["status"] == "refused"  # bob not revoked


def test_the_organiser_sees_everything_and_its_actions_are_stored(site):
    base, tokens = site["server"].base, site["tokens"]
    prof = Client(base)
    assert prof.login("prof", tokens["prof"]) == 303
    code, _, text = prof.get(f"/admin/submissions/{site['bob_sub']}")
    assert code == 200 and "IndexError" in text and "return [][1]" in text
    code, _, text = prof.get("/admin")
    assert code == 200 and "bob.py" in text and "refused" in text
    extra = accounts(site["work"], "erin")
    csrf = prof.csrf()
    assert prof.form("/admin/revoke", {"target": "erin"})[0] == 403  # without the CSRF token: nothing done
    assert Client(base).status(extra["erin"], 10**6)[0] == 404
    assert prof.form("/admin/revoke", {"target": "erin", "csrf": csrf, "confirm": "yes"})[0] == 303
    assert Client(base).status(extra["erin"], 10**6)[0] == 401
    text = prof.get("/admin")[2]
    assert re.search(r"<td>prof</td><td>revoke</td><td>erin</td>", text)
    frank = accounts(site["work"], "frank")["frank"]
    c = Client(base)
    code, doc = c.submit_api(frank, "frank.py", PLAIN.encode())
    assert code == 202, doc
    sid = doc["id"]
    assert c.wait(frank, sid, {"accepted"})["version"] == 1
    text = prof.get("/admin")[2]  # frank's file is alice's: flagged, byte for byte and as a near-duplicate
    assert re.search(r"<li>(alice is byte-identical to [^<]*frank|frank is byte-identical to [^<]*alice)", text)
    assert prof.form("/admin/withdraw", {"target": str(sid), "csrf": csrf})[0] == 303
    assert c.status(frank, sid)[1]["status"] == "withdrawn"
    board = json.loads(c.get("/api/leaderboard")[2])
    assert "frank" not in [b["name"] for b in board["bots"]]  # retired: out of the league
    assert re.search(rf"<td>prof</td><td>withdraw</td><td>{sid}</td>", prof.get("/admin")[2])


def test_api_leaderboard_is_the_leaderboard_commands_json_without_file_names(site):
    c = Client(site["server"].base)
    wait_idle(site["work"])
    deadline = time.time() + 120
    while True:  # (a withdrawn version's games of the pass in flight may still be stored: compare a quiet moment)
        before = c.get("/api/leaderboard")[2]
        p = subprocess.run([ARENA, "leaderboard", "--league", "l.toml", "--json"], cwd=site["work"],
                           capture_output=True, text=True, timeout=60)
        code, headers, text = c.get("/api/leaderboard")
        if text == before or time.time() > deadline:
            break
        time.sleep(1)
    assert code == 200 and headers["content-type"].startswith("application/json")
    expected = json.loads(p.stdout)  # the command's document, less the uploaded file names (the pages hide them)
    for row in expected["bots"]:
        row["spec"] = None if row["kind"] == "file" else row["spec"]
    assert json.loads(text) == expected and "alice.py" in p.stdout and "alice.py" not in text
    assert "alice" in [b["name"] for b in json.loads(text)["bots"]]
    assert "bob" not in [b["name"] for b in json.loads(text)["bots"]]  # refused: never entered, never played


def test_uploads_over_the_limit_or_bad_are_4xx_with_a_line(site):
    c, token = Client(site["server"].base), site["tokens"]["carol"]
    code, doc = c.submit_api(token, "big.py", b"#" * (3 << 20))
    assert code == 413 and "error" in doc
    code, doc = c.submit_api(token, "bad.zip", b"PK\x03\x04nonsense")
    assert code == 400 and "zip" in doc["error"]


def login(server: Server, name: str, token: str, addr: str) -> tuple[int, dict[str, str]]:
    """A login through the form from ``addr`` (X-Forwarded-For: the server runs --behind-https)."""
    c = Client(server.base)
    _, headers, text = c.get("/login", headers={"X-Forwarded-For": addr})
    csrf = re.search(r'name="login_csrf" value="([^"]+)"', text).group(1)
    body = f"login_csrf={csrf}&name={name}&token={token}".encode()
    # (a Secure cookie is not sent back over plain HTTP by the jar: the proxy would carry it over HTTPS)
    login_cookie = re.search(r"arena_login=([^;]+)", headers["set-cookie"]).group(1)
    code, headers, _ = c.request("POST", "/login", body, "application/x-www-form-urlencoded",
                                 headers={"X-Forwarded-For": addr, "Cookie": f"arena_login={login_cookie}"})
    return code, headers


def test_login_is_rate_limited_per_account_and_per_address(tmp_path):
    make_league(tmp_path)
    tokens = accounts(tmp_path, "alice", "bob")
    server = Server(tmp_path, "--behind-https").start()
    try:
        def attempt(name: str, token: str, addr: str) -> tuple[int, dict[str, str]]:
            return login(server, name, token, addr)
        code, headers = attempt("alice", tokens["alice"], "10.0.0.1")
        session = [v for v in headers["set-cookie"].splitlines() if v.startswith("arena_session=")]
        assert code == 303 and "Secure" in session[0] and "HttpOnly" in session[0] and "SameSite=Strict" in session[0]
        for _ in range(auth.MAX_FAILS_PER_ACCOUNT_ADDRESS):  # a classmate guesses alice's token from one address
            assert attempt("alice", "wrong", "10.0.1.1")[0] == 401
        assert attempt("alice", tokens["alice"], "10.0.1.1")[0] == 429  # that name is closed there, even to her token
        assert attempt("alice", tokens["alice"], "10.0.1.2")[0] == 303  # but the classmate cannot lock her out
        assert attempt("bob", tokens["bob"], "10.0.1.1")[0] == 303  # nor anyone else from that address
        # Guesses spread over many addresses (each below its own limit) close the name everywhere.
        per_address = auth.MAX_FAILS_PER_ACCOUNT_ADDRESS - 1
        for i in range(auth.MAX_FAILS_PER_ACCOUNT - auth.MAX_FAILS_PER_ACCOUNT_ADDRESS):
            assert attempt("alice", "wrong", f"10.1.{i // per_address}.1")[0] == 401
        assert attempt("alice", tokens["alice"], "10.0.2.1")[0] == 429  # even with her token, from a new address
        assert attempt("bob", tokens["bob"], "10.0.2.1")[0] == 303  # bob is not limited
        for i in range(20):  # one address, many names
            assert attempt(f"user{i}", "wrong", "10.0.3.1")[0] == 401
        assert attempt("bob", tokens["bob"], "10.0.3.1")[0] == 429
        assert attempt("bob", tokens["bob"], "10.0.3.2")[0] == 303
    finally:
        server.stop()


def test_unknown_bearer_tokens_close_neither_the_api_nor_the_login_form(tmp_path):
    """A script polling with a revoked token (or a guesser: tokens are 256-bit) behind an address a class shares
    must not shut that address out: a right token is answered, and the login form's limit counts logins only."""
    make_league(tmp_path)
    tokens = accounts(tmp_path, "alice", "bob")
    server = Server(tmp_path, "--behind-https").start()
    try:
        def api(token: str, addr: str) -> int:  # (no submission 999: 404 for a known token, 401 for another)
            return Client(server.base).get("/api/submissions/999", headers={"Authorization": f"Bearer {token}",
                                                                            "X-Forwarded-For": addr})[0]
        for i in range(auth.MAX_FAILS_PER_ADDRESS + 5):
            assert api(f"guess{i}", "10.0.4.1") == 401
        assert api(tokens["alice"], "10.0.4.1") == 404
        assert login(server, "bob", tokens["bob"], "10.0.4.1")[0] == 303
    finally:
        server.stop()


def test_an_ipv6_client_is_its_slash_64_and_a_mapped_ipv4_its_ipv4(tmp_path):
    """One host holds a whole /64 (it picks any address in it): failures are counted per /64, so rotating
    addresses inside it changes nothing; an IPv4-mapped IPv6 address is the IPv4 address."""
    make_league(tmp_path)
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path, "--behind-https").start()
    try:
        for i in range(auth.MAX_FAILS_PER_ACCOUNT_ADDRESS):
            assert login(server, "alice", "wrong", f"2001:db8:0:7::{i + 1:x}")[0] == 401
        assert login(server, "alice", tokens["alice"], "2001:db8:0:7:ffff::9")[0] == 429
        assert login(server, "alice", tokens["alice"], "2001:db8:0:8::1")[0] == 303  # another /64
        for _ in range(auth.MAX_FAILS_PER_ACCOUNT_ADDRESS):
            assert login(server, "alice", "wrong", "::ffff:10.0.5.1")[0] == 401
        assert login(server, "alice", tokens["alice"], "10.0.5.1")[0] == 429
    finally:
        server.stop()


def test_the_site_and_the_report_render_results_through_the_same_macros():
    """One markup for a leaderboard, a bot's results, its games and a replay: arena/output/templates/results.html's
    macros, which `arena report`'s pages and `arena serve`'s import; no other template writes those tables."""
    from pathlib import Path

    import arena.output
    import arena.server
    shared = {"leaderboard": '<table id="leaderboard"', "head-to-head": '<table id="h2h"',
              "games": '<table id="games"', "replay viewer": '<div id="viewer"'}
    templates = {p: p.read_text() for folder in (arena.output, arena.server)
                 for p in sorted((Path(folder.__file__).parent / "templates").glob("*.html"))}
    own = [f"{p.name} writes its own {what}" for p, text in templates.items() if p.name != "results.html"
           for what, markup in shared.items() if markup in text]
    assert not own, own
    for name, macros in (("leaderboard.html", ("leaderboard_table",)), ("bot.html", ("bot_summary", "games_table")),
                         ("game.html", ("replay_viewer",)), ("report_index.html", ("leaderboard_table",)),
                         ("report_bot.html", ("bot_summary", "h2h_table", "games_table")),
                         ("report_replay.html", ("replay_viewer",))):
        text = next(t for p, t in templates.items() if p.name == name)
        assert all(f"{m}(" in text for m in macros) and 'from "results.html" import' in text, name
