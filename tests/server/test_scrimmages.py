"""Scrimmages on `arena serve`: a student asks for N unrated games of their side's current bot against another
side's, the other side is told on its page, the games are played by the sandboxed worker beside the ladder, and
only the two sides and the organisers see them (403 for anyone else). Through a real server and HTTP client."""
from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from arena.server import scrimmages as sc
from leaderboards.store import Store
from tests.server.support import ARENA, LEAGUE, PLAIN, Client, Server, accounts, make_league, wait_idle

pytestmark = pytest.mark.xdist_group("server")
TEAM = "<i>red</i>"


def ask(c: Client, token: str | None, opponent: str, games: object) -> tuple[int, dict[str, str], dict]:
    body = json.dumps({"opponent": opponent, "games": games}).encode()
    code, headers, text = c.request("POST", "/api/scrimmages", body, "application/json", token=token)
    return code, headers, json.loads(text)


def scrimmage(c: Client, token: str | None, sid: int) -> tuple[int, dict]:
    code, _, text = c.get(f"/api/scrimmages/{sid}", token=token)
    return code, json.loads(text)


def finished(c: Client, token: str, sid: int, limit: float = 120) -> dict:
    deadline = time.time() + limit
    doc: dict = {}
    while time.time() < deadline:
        _, doc = scrimmage(c, token, sid)
        if doc.get("status") in ("done", "failed"):
            return doc
        time.sleep(0.3)
    raise AssertionError(f"scrimmage {sid} never finished: {doc}")


def ladder_state(work) -> tuple[int, list[tuple]]:
    """The ladder's games and ratings once settled: every game folded in schedule order (a game folded out of order
    is provisional until the league's one recomputation), the same on two reads a second apart."""
    def read() -> tuple[int, list[tuple], int]:
        with Store.open(work / "srv.sqlite", readonly=True) as store:
            lg = store.find_league("srv")
            rows = [tuple(r) for r in store.conn.execute(
                "SELECT scope, bot_id, mu, sigma, games, wins, draws, losses FROM ratings WHERE league_id=? "
                "ORDER BY scope, bot_id", (lg.id,))]
            unsettled = store.conn.execute("SELECT count(*) FROM games WHERE league_id=? AND rated != 1",
                                           (lg.id,)).fetchone()[0]
            return store.count_games(lg.id), rows, unsettled
    deadline = time.time() + 60
    last = read()
    while time.time() < deadline:
        time.sleep(1.0)
        now = read()
        if now == last and not now[2]:
            return now[0], now[1]
        last = now
    raise AssertionError(f"the ladder's ratings never settled: {last[2]} games not folded in order")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    work = tmp_path_factory.mktemp("scrimmages")
    make_league(work, LEAGUE)
    tokens = accounts(work, "alice", "bob", "carol", "dave", "erin")
    tokens.update(accounts(work, "prof", organiser=True))
    p = subprocess.run([ARENA, "accounts", "team", "--league", "l.toml", TEAM, "alice", "bob"], cwd=work,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    server = Server(work).start()
    c = Client(server.base)
    for who, tail in (("alice", b"# red\n"), ("carol", b"# carol\n"), ("dave", b"# dave\n")):
        code, doc = c.submit_api(tokens[who], f"{who}.py", PLAIN.encode() + tail)
        assert code == 202, doc
        assert c.wait(tokens[who], doc["id"], {"accepted", "refused"})["status"] == "accepted"
    wait_idle(work)
    yield {"server": server, "tokens": tokens, "work": work, "c": c}
    assert server.stop() == 143


def logged_in(site, name: str) -> Client:
    c = Client(site["server"].base)
    assert c.login(name, site["tokens"][name]) == 303
    return c


@pytest.mark.slow
def test_a_scrimmage_is_played_told_seen_by_both_sides_only_and_never_rated(site):
    c, tokens = site["c"], site["tokens"]
    before = ladder_state(site["work"])
    code, _, doc = ask(c, tokens["carol"], TEAM, 4)
    assert code == 202 and doc["status"] == "queued", doc
    sid = doc["id"]
    done = finished(c, tokens["carol"], sid)
    assert done["status"] == "done" and done["side"] == "carol" and done["opponent"] == TEAM
    assert [g["number"] for g in done["played"]] == [0, 1, 2, 3]
    assert [g["seats"] for g in done["played"]] == [["carol", TEAM], [TEAM, "carol"]] * 2  # seats alternated
    assert done["wins"] + done["draws"] + done["losses"] == 4
    # both sides see it: carol, and both members of the team (bob never asked for it)
    for who in ("carol", "alice", "bob", "prof"):
        assert scrimmage(c, tokens[who], sid)[0] == 200, who
    bob = logged_in(site, "bob")
    _, _, mine = bob.get("/me")
    assert re.search(rf'carol asked for a scrimmage against you: <a href="/scrimmages/{sid}">results</a>', mine)
    code, _, text = bob.get(f"/scrimmages/{sid}")
    assert code == 200 and "&lt;i&gt;red&lt;/i&gt;" in text and "<i>red</i>" not in text
    assert len(re.findall(rf'href="/scrimmages/{sid}/games/\d"', text)) == 4
    code, _, text = bob.get(f"/scrimmages/{sid}/games/1")
    assert code == 200 and f'src="/scrimmages/{sid}/games/1/replay-data.js"' in text
    code, _, data = bob.get(f"/scrimmages/{sid}/games/1/replay-data.js")
    assert code == 200 and "window.ARENA_REPLAYS" in data and "nim" in data
    # anyone else: 403, an account of the league (dave, erin) or nobody logged in, pages and API alike
    dave, nobody = logged_in(site, "dave"), Client(site["server"].base)
    for client in (dave, nobody):
        for path in (f"/scrimmages/{sid}", f"/scrimmages/{sid}/games/1", f"/scrimmages/{sid}/games/1/replay-data.js",
                     f"/api/scrimmages/{sid}"):
            code, _, text = client.get(path)
            assert code == 403 and "carol" not in text and "nim" not in text, (path, code)
    assert scrimmage(c, tokens["erin"], sid)[0] == 403 and scrimmage(c, None, sid)[0] == 403
    assert scrimmage(c, tokens["carol"], sid + 1000)[0] == 404
    _, _, page = dave.get("/me")
    assert f"/scrimmages/{sid}" not in page  # not told: not theirs
    # the ladder: not one game more, its ratings unchanged
    assert ladder_state(site["work"]) == before


@pytest.mark.slow
def test_requests_are_checked_and_limited_per_hour_per_team(site):
    c, tokens = site["c"], site["tokens"]
    for opponent, games, status, word in (("carol", 0, 400, "from 1 to 20"), ("carol", 21, 400, "from 1 to 20"),
                                          ("carol", "many", 400, "whole number"), (TEAM, 2, 400, "not your own"),
                                          ("nobody", 2, 404, "no team or student"),
                                          ("random", 2, 404, "no team or student")):
        code, _, doc = ask(c, tokens["alice"], opponent, games)
        assert code == status and word in doc["error"], (opponent, games, doc)
    assert ask(c, tokens["erin"], "carol", 2)[0] == 409  # erin has no bot in the ladder
    assert ask(c, None, "carol", 2)[0] == 401
    # the form on /me (with its CSRF token): bob asks for his team; without the token nothing is asked
    bob = logged_in(site, "bob")
    _, _, mine = bob.get("/me")
    assert '<option value="carol">carol</option>' in mine and f'value="{TEAM}"' not in mine
    csrf = re.search(r'name="csrf" value="([^"]+)"', mine).group(1)
    assert bob.form("/scrimmages", {"opponent": "dave", "games": "2"})[0] == 403
    code, headers, _ = bob.form("/scrimmages", {"csrf": csrf, "opponent": "dave", "games": "2"})
    assert code == 303 and re.fullmatch(r"/scrimmages/\d+", headers["location"])
    # the team's cap is shared: bob asked once (above), alice asks twice more, then the team is refused
    for _ in range(sc.PER_HOUR - 1):  # (bob's form request above was the first)
        assert ask(c, tokens["alice"], "dave", 1)[0] == 202
    code, headers, doc = ask(c, tokens["alice"], "carol", 1)
    assert code == 429 and f"at most {sc.PER_HOUR} scrimmages an hour for your team" in doc["error"], doc
    assert "try again after" in doc["error"] and int(headers["retry-after"]) == doc["retry_after"] > 3000
    code, _, text = bob.form("/scrimmages", {"csrf": csrf, "opponent": "carol", "games": "1"})
    assert code == 429 and f"at most {sc.PER_HOUR} scrimmages an hour" in text
    assert ask(c, tokens["dave"], "carol", 1)[0] == 202  # another side's cap is its own


@pytest.mark.slow  # it reads the scrimmages the (slow) tests above asked for on the module's server
def test_the_list_shows_an_organiser_every_scrimmage_and_a_student_their_sides(site):
    rows = {}
    for who in ("prof", "dave", "erin"):
        code, _, text = logged_in(site, who).get("/scrimmages")
        assert code == 200
        rows[who] = re.findall(r'<td><a href="/scrimmages/\d+">\d+</a></td><td>[^<]*</td><td>([^<]*)</td>'
                               r'<td>([^<]*)</td>', text)
    everything = {("carol", f"carol v {TEAM}".replace("<", "&lt;").replace(">", "&gt;")),
                  ("bob", "&lt;i&gt;red&lt;/i&gt; v dave"), ("alice", "&lt;i&gt;red&lt;/i&gt; v dave"),
                  ("dave", "dave v carol")}
    assert set(rows["prof"]) == everything and len(rows["prof"]) == 2 + sc.PER_HOUR  # (the team asked PER_HOUR)
    assert set(rows["dave"]) == everything - {("carol", "carol v &lt;i&gt;red&lt;/i&gt;")}
    assert rows["erin"] == []
    _, _, page = logged_in(site, "dave").get("/me")  # told who asked, and for which team (escaped)
    assert re.search(r'alice \(team &lt;i&gt;red&lt;/i&gt;\) asked for a scrimmage against you: '
                     r'<a href="/scrimmages/\d+">results</a>', page)
    code, headers, _ = Client(site["server"].base).get("/scrimmages")
    assert code == 303 and headers["location"] == "/login"


@pytest.mark.slow
def test_a_scrimmage_cut_by_sigkill_plays_its_missing_games_at_the_next_start(tmp_path):
    make_league(tmp_path, LEAGUE)
    tokens = accounts(tmp_path, "carol", "dave")
    server = Server(tmp_path).start()
    c = Client(server.base)
    for who in ("carol", "dave"):
        code, doc = c.submit_api(tokens[who], f"{who}.py", PLAIN.encode() + f"# {who}\n".encode())
        assert c.wait(tokens[who], doc["id"], {"accepted", "refused"})["status"] == "accepted"
    code, _, doc = ask(c, tokens["carol"], "dave", sc.MAX_GAMES)
    assert code == 202
    sid = doc["id"]
    deadline = time.time() + 120
    while time.time() < deadline and not 0 < len(scrimmage(c, tokens["carol"], sid)[1]["played"]) < sc.MAX_GAMES:
        time.sleep(0.1)
    server.kill()  # mid-scrimmage: some games stored, the rest not
    with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
        cut = store.conn.execute("SELECT count(*) FROM scrimmage_games WHERE scrimmage_id=?", (sid,)).fetchone()[0]
        assert store.conn.execute("SELECT status FROM scrimmages WHERE id=?", (sid,)).fetchone()[0] == "playing"
    assert 0 < cut < sc.MAX_GAMES
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        done = finished(c, tokens["carol"], sid)
        assert done["status"] == "done" and [g["number"] for g in done["played"]] == list(range(sc.MAX_GAMES))
    finally:
        assert server.stop() == 143


def test_a_bot_an_organiser_took_out_after_the_request_plays_no_scrimmage(tmp_path):
    from arena.league.config import LeagueConfig
    from arena.submissions.snapshot import single
    from leaderboards import accounts as acc
    from leaderboards import teams as tm
    with Store.open(tmp_path / "s.sqlite", create=True) as store:
        league_id = store.ensure_league("srv", {}).id
        carol, _ = acc.add_account(store, league_id, "carol")
        mine, _ = store.upsert_bot(league_id, "carol", origin="submit", snapshot=single("bot.py", PLAIN))
        theirs, _ = store.upsert_bot(league_id, "dave", origin="submit", snapshot=single("bot.py", PLAIN + "#\n"))
        sid = tm.add_scrimmage(store, league_id, carol.id, "carol", "dave", mine.id, theirs.id, 2, per_hour=3,
                               now=time.time())
        store.retire_bot(theirs.id, f"{acc.WITHDRAWN}prof")
        player = sc.Scrimmager(store, LeagueConfig(name="srv", games=["nim(n=9)"], bots=["random"]), league_id)
        player.play_all(store, tm.claim_scrimmage(store, league_id))
        done = tm.scrimmage(store, sid)
        assert done.status == "failed" and "dave was taken out of the league (withdrawn by prof)" == done.reason
        assert player.backend is None and tm.played_numbers(store, sid) == set()  # not one game started
