"""The organiser's decisions stick (a revoke, a withdrawal), and what a stranger can learn or keep is limited (the
login limiter, the public API, caches), through a real `arena serve` and a real HTTP client."""
from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from arena.server import auth
from leaderboards import accounts as acc
from leaderboards.store import Store
from tests.server.support import ARENA, LEAGUE, PLAIN, Client, Server, accounts, make_league, multipart, wait_idle

pytestmark = pytest.mark.xdist_group("server")
PONDERING = PLAIN.replace("    def step(self, state, limit):\n",
                          "    def step(self, state, limit):\n        import time; time.sleep(0.4)\n", 1)
SLOW = PLAIN.replace("    def step(self, state, limit):\n",
                     "    def step(self, state, limit):\n        import time; time.sleep(1.2)\n", 1)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    work = tmp_path_factory.mktemp("decisions")
    make_league(work, LEAGUE + "max_submissions_per_hour = 20\n")
    tokens = accounts(work, "alice", "bob", "carol", "dan", "erin", "fay")
    tokens.update(accounts(work, "prof", organiser=True))
    server = Server(work).start()
    yield {"server": server, "tokens": tokens, "work": work}
    assert server.stop() == 143


def organiser(site) -> Client:
    c = Client(site["server"].base)
    assert c.login("prof", site["tokens"]["prof"]) == 303
    return c


def stored(site):
    return Store.open(site["work"] / "srv.sqlite", readonly=True)


def games_of(store: Store, name: str) -> int:
    return int(store.conn.execute("SELECT count(*) FROM game_seats s JOIN bots b ON b.id = s.bot_id "
                                  "WHERE b.name=?", (name,)).fetchone()[0])


@pytest.mark.slow
def test_an_upload_being_validated_when_its_account_is_revoked_never_enters(site):
    c, tokens = Client(site["server"].base), site["tokens"]
    code, doc = c.submit_api(tokens["erin"], "erin.py", SLOW.encode())
    assert code == 202, doc
    c.wait(tokens["erin"], doc["id"], {"validating"})
    prof = organiser(site)
    assert prof.form("/admin/revoke", {"csrf": prof.csrf(), "target": "erin", "confirm": "yes"})[0] == 303
    code, after = c.submit_api(tokens["fay"], "fay.py", PLAIN.encode())  # validated after erin's
    assert code == 202
    c.wait(tokens["fay"], after["id"], {"accepted", "refused"})
    wait_idle(site["work"])
    with stored(site) as store:
        sub = acc.submission(store, doc["id"])
        assert sub is not None and sub.status == "withdrawn" and sub.bot_id is None, sub
        assert store.current_bot(store.find_league(None).id, "erin") is None
        assert games_of(store, "erin") == 0


@pytest.mark.slow
def test_a_revoke_withdraws_the_accounts_bot_from_the_ladder(site):
    c, tokens = Client(site["server"].base), site["tokens"]
    code, doc = c.submit_api(tokens["dan"], "dan.py", PLAIN.encode())
    assert c.wait(tokens["dan"], doc["id"], {"accepted", "refused"})["status"] == "accepted"
    prof = organiser(site)
    assert prof.form("/admin/revoke", {"csrf": prof.csrf(), "target": "dan", "confirm": "yes"})[0] == 303
    with stored(site) as store:
        bot = store.current_bot(store.find_league(None).id, "dan")
        assert bot is not None and bot.status == "retired" and "revoked" in bot.status_reason, bot
        at_revoke = games_of(store, "dan")
    board = json.loads(c.get("/api/leaderboard")[2])
    assert "dan" not in [b["name"] for b in board["bots"]]
    wait_idle(site["work"])
    with stored(site) as store:
        assert games_of(store, "dan") <= at_revoke + 1  # (at most the one game in flight at the revoke)


@pytest.mark.slow
def test_a_withdrawn_version_stays_withdrawn_whatever_the_student_uploads(site):
    c, tokens = Client(site["server"].base), site["tokens"]
    code, doc = c.submit_api(tokens["carol"], "carol.py", PLAIN.encode())
    assert c.wait(tokens["carol"], doc["id"], {"accepted", "refused"})["status"] == "accepted"
    wait_idle(site["work"])
    prof = organiser(site)
    assert prof.form("/admin/withdraw", {"csrf": prof.csrf(), "target": str(doc["id"])})[0] == 303
    with stored(site) as store:
        played = games_of(store, "carol")
    for name in ("carol.py", "renamed.py"):  # the same bytes, under its name or another
        code, again = c.submit_api(tokens["carol"], name, PLAIN.encode())
        assert code == 409 and "withdrawn" in again["error"], again
    board = json.loads(c.get("/api/leaderboard")[2])
    assert "carol" not in [b["name"] for b in board["bots"]]
    # A changed bot is a new version, from scratch (none of the withdrawn version's games or rating).
    code, changed = c.submit_api(tokens["carol"], "carol.py", (PLAIN + "# changed\n").encode())
    assert c.wait(tokens["carol"], changed["id"], {"accepted", "refused"})["status"] == "accepted"
    assert c.status(tokens["carol"], changed["id"])[1]["version"] == 2
    with stored(site) as store:
        first = store.bot(acc.submission(store, doc["id"]).bot_id)
        assert first.status == "retired" and games_of(store, "carol") >= played


@pytest.mark.slow
def test_an_upload_queued_before_its_twin_was_withdrawn_is_refused_at_validation(site):
    """The same bytes as the accepted version, queued (behind a slow upload) when the organiser withdraws that
    version: validation must not bring the withdrawn version back."""
    c, tokens = Client(site["server"].base), site["tokens"]
    code, doc = c.submit_api(tokens["bob"], "bob.py", PLAIN.encode())
    assert c.wait(tokens["bob"], doc["id"], {"accepted", "refused"})["status"] == "accepted"
    code, slow = c.submit_api(tokens["alice"], "alice.py", SLOW.encode())
    c.wait(tokens["alice"], slow["id"], {"validating"})
    code, twin = c.submit_api(tokens["bob"], "bob.py", PLAIN.encode())  # waits behind alice's
    assert code == 202, twin
    prof = organiser(site)
    assert prof.form("/admin/withdraw", {"csrf": prof.csrf(), "target": str(doc["id"])})[0] == 303
    seen = c.wait(tokens["bob"], twin["id"], {"accepted", "refused", "withdrawn"})
    assert seen["status"] == "refused" and "withdrawn" in seen["reason"], seen
    board = json.loads(c.get("/api/leaderboard")[2])
    assert "bob" not in [b["name"] for b in board["bots"]]


# -- what a stranger can learn ------------------------------------------------------------------------------
def test_the_login_limiter_answers_a_missing_name_as_an_existing_one(site):
    """Failures under a name that has no account are counted as under one that has: the 429 does not tell a
    stranger which names exist."""
    def attempts(name: str) -> list[int]:
        c = Client(site["server"].base)
        out = []
        for _ in range(auth.MAX_FAILS_PER_ACCOUNT_ADDRESS + 1):
            _, _, text = c.get("/login")
            csrf = re.search(r'name="login_csrf" value="([^"]+)"', text).group(1)
            out.append(c.form("/login", {"login_csrf": csrf, "name": name, "token": "wrong"})[0])
        return out
    existing, missing = attempts("alice"), attempts("nobody-at-all")
    assert existing == missing == [401] * auth.MAX_FAILS_PER_ACCOUNT_ADDRESS + [429], (existing, missing)


def test_the_public_leaderboard_api_shows_no_uploaded_file_names(site):
    c, tokens = Client(site["server"].base), site["tokens"]
    code, doc = c.submit_api(tokens["fay"], "fay_secret_plan.py", (PLAIN + "# v2\n").encode())
    assert c.wait(tokens["fay"], doc["id"], {"accepted", "refused"})["status"] == "accepted"
    text = c.get("/api/leaderboard")[2]
    assert "fay_secret_plan" not in text
    rows = {b["name"]: b for b in json.loads(text)["bots"]}
    assert rows["fay"]["spec"] is None and rows["greedy"]["spec"] == "greedy"


def test_private_answers_are_not_stored_by_caches(site):
    """Every answer to a request with a token or a session says `Cache-Control: no-store` (a shared cache or the
    browser's disk keeps no one's statuses, tracebacks or pages)."""
    c, tokens = Client(site["server"].base), site["tokens"]
    body, ctype = multipart({"file": ("fay.py", b"not python")})
    prof = organiser(site)
    answers = {"status": c.get("/api/submissions/1", token=tokens["fay"]),  # (another's: 404, still private)
               "board": c.get("/api/leaderboard", token=tokens["fay"]),
               "upload": c.request("POST", "/api/submissions", body, ctype, token=tokens["fay"]),
               "admin": prof.get("/admin"), "me": prof.get("/me"), "bot page": prof.get("/bots/1")}
    for what, (code, headers, _) in answers.items():
        assert "no-store" in headers.get("cache-control", ""), (what, code, headers)
    assert c.get("/static/site.css")[1].get("cache-control") == "max-age=300"  # (public, the same for all)


@pytest.mark.slow
def test_a_revoke_on_the_command_line_also_withdraws_at_once(site):
    """`arena accounts revoke` is another process: the ladder must still stop playing the bot, not finish its
    pass with it (its games here take seconds each)."""
    c, tokens = Client(site["server"].base), site["tokens"]
    code, doc = c.submit_api(tokens["fay"], "fay.py", PONDERING.encode())
    assert c.wait(tokens["fay"], doc["id"], {"accepted", "refused"})["status"] == "accepted"
    p = subprocess.run([ARENA, "accounts", "revoke", "--league", "l.toml", "fay"], cwd=site["work"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    with stored(site) as store:
        at_revoke = games_of(store, "fay")
    assert "fay" not in [b["name"] for b in json.loads(c.get("/api/leaderboard")[2])["bots"]]
    time.sleep(12)  # (a pass that went on with the bot would play several of its games meanwhile)
    with stored(site) as store:
        assert games_of(store, "fay") <= at_revoke + 1, (at_revoke, games_of(store, "fay"))
