"""Issue 32: a tournament's bracket on `arena serve` (a real server, a real HTTP client): /bracket and /api/bracket,
linked from the leaderboard, private like the leaderboard when ``leaderboard_public = false``, absent for a round
robin; every name escaped."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from arena.output.brackets import signature
from arena.tournament.progress import current, frozen_field, view
from leaderboards.store import Store
from tests.server.support import LEAGUE, PLAIN, Client, Server, accounts, make_league, multipart

pytestmark = pytest.mark.xdist_group("server")

SCRIPT = "<script>alert(1)</script>"
QUOTES = "&\"'"
CUP = '''name = "cup"
games = ["nim(n=9)"]
games_per_pairing = 2
seed = 4
format = "FORMAT"
database = "srv.sqlite"
[[bots]]
name = "<script>alert(1)</script>"
spec = "random"
[[bots]]
name = "&\\"'"
spec = "greedy"
[[bots]]
name = "mc"
spec = "mc(n=10)"
[[bots]]
name = "mc3"
spec = "mc(n=3)"
'''


def finished(client: Client, limit: float = 180, **kw: str) -> dict:
    deadline = time.monotonic() + limit
    doc: dict = {}
    while time.monotonic() < deadline:
        code, _, text = client.get("/api/bracket", **kw)
        assert code == 200, text
        doc = json.loads(text)
        if doc["finished"]:
            return doc
        time.sleep(0.5)
    raise AssertionError(f"the tournament never finished: {doc}")


def stored_view(work: Path) -> dict:
    with Store.open(work / "srv.sqlite", readonly=True) as store:
        lg = store.find_league("cup")
        state = current(store, lg.id, lg.config)
        assert state is not None
        return view(state, {b.id: b.label for b in store.bots(lg.id, source=False)})


@pytest.mark.parametrize("fmt", ["double_elimination", "swiss"])
@pytest.mark.slow
def test_the_bracket_pages_of_a_public_tournament(tmp_path, fmt):
    make_league(tmp_path, CUP.replace("FORMAT", fmt))
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        doc = finished(c)
        assert doc == stored_view(tmp_path)  # `arena bracket --json`'s document, names exact
        assert doc["format"] == fmt and sorted(n for g in doc["placings"] for n in g) == \
            sorted([SCRIPT, QUOTES, "mc", "mc3"])
        code, _, home = c.get("/")
        assert code == 200 and '<p id="bracket-link">' in home and 'href="/bracket"' in home
        code, headers, page = c.get("/bracket")
        assert code == 200 and "script-src 'self'" in headers["content-security-policy"]
        assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert '<script src="/static/bracket.js"></script>' in page
        assert f'data-progress="{signature(doc)}"' in page and 'data-finished="yes"' in page
        if fmt == "swiss":
            assert '<table id="swiss">' in page and "Buchholz" in page and "<svg" not in page
            assert len(doc["standings"]) == 4
        else:
            assert '<svg class="pic bracket"' in page and page.count('<g class="match') >= 6
        assert page.count('<li value="') == len(doc["placings"])  # the places (bots sharing one: one line)
        code, headers, js = c.get("/static/bracket.js")
        assert code == 200 and headers["content-type"].startswith("text/javascript") and "/api/bracket" in js
    finally:
        server.stop()


@pytest.mark.slow
def test_a_private_tournament_needs_a_login_and_a_round_robin_has_no_bracket(tmp_path):
    make_league(tmp_path, "leaderboard_public = false\n" + CUP.replace("FORMAT", "knockout"))
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        code, headers, _ = c.get("/bracket")
        assert code == 303 and headers["location"] == "/login"
        code, _, text = c.get("/api/bracket")
        assert code == 401 and "bracket is for its accounts" in json.loads(text)["error"]
        doc = finished(c, token=tokens["alice"])
        assert doc["format"] == "knockout" and doc["placings"]
        assert c.login("alice", tokens["alice"]) == 303
        code, _, page = c.get("/bracket")
        assert code == 200 and '<svg class="pic bracket"' in page
    finally:
        server.stop()
    make_league(tmp_path, LEAGUE.replace('"srv"', '"plain"'))
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        code, _, home = c.get("/")
        assert code == 200 and "bracket-link" not in home
        code, _, page = c.get("/bracket")
        assert code == 404 and "it has no bracket" in page
        code, _, text = c.get("/api/bracket")
        assert code == 404 and "not a tournament" in json.loads(text)["error"]
    finally:
        server.stop()


@pytest.mark.slow
def test_a_served_tournament_under_way_takes_no_upload(tmp_path):
    """Its field was fixed when it started: an upload would be validated and then play no game, so the API refuses
    it in one line and the submit page says why instead of showing the form."""
    make_league(tmp_path, CUP.replace("FORMAT", "knockout"))
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        finished(c)
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
            assert frozen_field(store, store.find_league("cup").id) is not None
        code, doc = c.submit_api(tokens["alice"], "alice.py", PLAIN.encode())
        assert code == 403 and "knockout tournament that has started" in doc["error"], (code, doc)
        assert c.login("alice", tokens["alice"]) == 303
        _, _, html = c.get("/submit")
        assert 'type="file"' not in html and "Submissions closed: this league is a knockout tournament" in html
        body, ctype = multipart({"file": ("alice.py", PLAIN.encode())}, {"csrf": c.csrf()})
        code, _, html = c.request("POST", "/submit", body, ctype)
        assert code == 403 and html.lower().count("submissions closed: this league") == 1  # said once
    finally:
        assert server.stop() == 143


@pytest.mark.slow
def test_an_upload_queued_before_a_served_tournament_started_is_refused_when_judged(tmp_path):
    """The web side answers while the first pass waits for the sandbox's check: an upload queued then and validated
    after the field was fixed would be an active bot that never plays. The validator refuses it, saying why."""
    import subprocess
    import threading

    from arena.league.config import load_config
    from arena.server.ladder import Validator
    from arena.submissions.snapshot import single
    from leaderboards import accounts as acc
    from tests.server.support import ARENA
    make_league(tmp_path, CUP.replace("FORMAT", "knockout"))
    accounts(tmp_path, "alice")
    with Store.open(tmp_path / "srv.sqlite") as store:  # queued before the tournament started
        league = store.find_league("cup")
        alice = acc.account_named(store, league.id, "alice")
        assert alice is not None
        sid = acc.add_submission(store, league.id, alice.id, "alice", "alice.py", single("alice.py", PLAIN))
    run = subprocess.run([ARENA, "league", "run", "l.toml", "-q"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    with Store.open(tmp_path / "srv.sqlite") as store:
        assert frozen_field(store, league.id) is not None
        sub = acc.claim_next(store, league.id, {})
        assert sub is not None and sub.id == sid
        validator = Validator(store, load_config(str(tmp_path / "l.toml")), league.id, threading.Event())
        try:
            validator.handle(store, sub)
        finally:
            if validator.backend is not None:
                validator.backend.close()
        judged = acc.submission(store, sid)
        assert judged is not None and judged.status == "refused", judged
        assert "knockout tournament that has started" in judged.reason
        assert store.current_bot(league.id, "alice") is None
