"""What a student and an organiser read on `arena serve`'s pages, through a real server and a real HTTP client: the
submit page's rules (games, limits, size, the authors' guide, a COMP424 league's upload command), refusals as
pages of the site with the figure and the limit, results in words, the organiser's source view and revoke step.
(Browser-only behaviour, polling, clipping and phone widths, is in test_browser.py.)"""
from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.server.support import ARENA, PLAIN, Client, Server, accounts, make_league, multipart, wait_idle

pytestmark = pytest.mark.xdist_group("server")
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "comp424"
COURSE = '''name = "srv"
games = ["colosseum(size=5)"]
games_per_pairing = 2
seed = 3
database = "srv.sqlite"
bots = ["random", "mc(n=2)"]
upload_format = "comp424"
[limits]
first_move_time = 30.0
move_time = 2.0
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    work = tmp_path_factory.mktemp("pages")
    make_league(work, LEAGUE_WITH_LIMITS)
    tokens = accounts(work, "alice", "bob", "<b>carol</b>")
    tokens.update(accounts(work, "prof", organiser=True))
    server = Server(work).start()
    yield {"server": server, "tokens": tokens, "work": work}
    assert server.stop() == 143


LEAGUE_WITH_LIMITS = '''name = "srv"
games = ["nim(n=9)", "doublestep"]
games_per_pairing = 2
seed = 1
database = "srv.sqlite"
bots = ["random", "mc(n=2)"]
max_submissions_per_hour = 4
[limits]
move_time = 1.5
first_move_time = 12.0
max_bot_mb = 0.5
'''


def logged_in(site, name: str) -> Client:
    c = Client(site["server"].base)
    assert c.login(name, site["tokens"][name]) == 303
    return c


def upload(c: Client, name: str, data: bytes) -> tuple[int, dict[str, str], str]:
    body, ctype = multipart({"file": (name, data)}, {"csrf": c.csrf()})
    return c.request("POST", "/submit", body, ctype)


def text_of(html: str) -> str:
    """The page's words (tags dropped, whitespace folded), as a reader sees them."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'").replace("&amp;", "&")


def test_the_submit_page_names_the_games_the_limits_the_size_and_links_the_guide(site):
    c = logged_in(site, "alice")
    code, _, html = c.get("/submit")
    words = text_of(html)
    assert code == 200
    assert "nim(n=9)" in words and "doublestep" in words
    assert "first move 12 s" in words and "every later move 1.5 s" in words
    assert "at most 0.5 MB" in words
    guide = re.search(r'<a href="(/[^"]+)"[^>]*>[^<]*guide', html)
    assert guide, html
    code, headers, page = c.get(guide.group(1))
    assert code == 200 and "text/html" in headers["content-type"]
    assert "Writing a bot for arena" in page and "def step(self, state, limit)" in page


@pytest.mark.slow
def test_a_comp424_league_says_what_to_upload_with_the_command_the_docs_give(tmp_path):
    """The command the submit page shows is the one docs/comp424.md and docs/server.md give; run on the course
    checkout it makes a zip the server accepts, and a lone student_agent.py is accepted as the hand-in it is."""
    make_league(tmp_path, COURSE)
    tokens = accounts(tmp_path, "alice", "bob")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        assert c.login("alice", tokens["alice"]) == 303
        _, _, html = c.get("/submit")
        command = re.search(r'<code id="zip-command">([^<]+)</code>', html)
        assert command, html
        command = command.group(1).replace("&#39;", "'").replace("&amp;", "&")
        for doc in ("docs/comp424.md", "docs/server.md"):
            assert command in (ROOT / doc).read_text(), doc
        assert "student_agent.py" in text_of(html)
        checkout = tmp_path / "COMP424-2026" / "checkout"
        shutil.copytree(FIXTURES / "checkout", checkout)
        (checkout / ".git").mkdir()
        (checkout / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        assert shutil.which("zip"), "zip is not installed (Debian: apt install zip)"
        subprocess.run(command, shell=True, cwd=checkout, check=True, capture_output=True, timeout=60)
        made = sorted(checkout.parent.glob("*.zip"))
        assert len(made) == 1
        code, _, _ = upload(c, made[0].name, made[0].read_bytes())
        assert code == 303
        lone = Client(server.base)
        assert lone.login("bob", tokens["bob"]) == 303
        code, _, _ = upload(lone, "student_agent.py", (FIXTURES / "handin" / "student_agent.py").read_bytes())
        assert code == 303
        for who, client in (("alice", c), ("bob", lone)):
            sid = int(re.search(r'<tr class="sub-\w+"[^>]*><td>(\d+)</td>', client.get("/me")[2]).group(1))
            doc = client.wait(tokens[who], sid, {"accepted", "refused"}, limit=180)
            assert doc["status"] == "accepted", (who, doc)
        # a hand-in that is not Python: named a syntax error in the student's file, as any bot's
        broken = (FIXTURES / "handin" / "student_agent.py").read_text().replace("def step(self, chess_board, my_pos, "
                                                                             "adv_pos, max_step):", "def step(self")
        code, doc = lone.submit_api(tokens["bob"], "student_agent.py", broken.encode())
        assert code == 202, doc
        doc = lone.wait(tokens["bob"], doc["id"], {"accepted", "refused"}, limit=180)
        assert doc["status"] == "refused" and doc["reason"].startswith("syntax error in student_agent.py, line 13"), doc
    finally:
        assert server.stop() == 143


def test_after_the_deadline_the_form_is_replaced_by_submissions_closed(tmp_path):
    make_league(tmp_path, LEAGUE_WITH_LIMITS.replace("[limits]", 'deadline = "2020-01-01T00:00:00Z"\n[limits]'))
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        assert c.login("alice", tokens["alice"]) == 303
        _, _, html = c.get("/submit")
        assert 'type="file"' not in html and "Submissions closed" in html and "2020-01-01 00:00:00 UTC" in html
        assert re.search(r'name="csrf" value="([^"]+)"', html)  # (the logout form's: the page is still the site's)
    finally:
        assert server.stop() == 143


def submission_ids(c: Client) -> list[int]:
    return [int(x) for x in re.findall(r'<tr class="sub-\w+"[^>]*><td>(\d+)</td>', c.get("/me")[2])]


def test_a_too_big_upload_is_a_page_of_the_site_with_its_size_and_the_limit(site):
    c = logged_in(site, "alice")
    for size, shown in ((800_000, "0.8 MB"), (540_000, "0.515 MB")):  # (past the body's limit; within the
        code, headers, html = upload(c, "big.py", b"#" * size)                     # form's slack, read and refused)
        words = text_of(html)
        assert code == 413 and "text/html" in headers.get("content-type", ""), (code, html)
        assert "<nav>" in html and 'class="error"' in html
        assert shown in words and "max_bot_mb (0.5 MB)" in words, words
    code, doc = c.submit_api(site["tokens"]["alice"], "big.py", b"#" * 800_000)  # the API: its line says as much
    assert code == 413 and "0.8 MB" in doc["error"] and "max_bot_mb (0.5 MB)" in doc["error"], doc


@pytest.mark.slow
def test_a_syntax_error_is_named_with_the_students_file_and_line(site):
    c = logged_in(site, "<b>carol</b>")
    source = "import random\nclass Bot:\n    def __init__(self, game, seat, seed):\n        pass\n" \
             "    def step(self, state, limit)\n        return state.legal_actions()[0]\n"
    assert upload(c, "carols_bot.py", source.encode())[0] == 303
    doc = c.wait(site["tokens"]["<b>carol</b>"], submission_ids(c)[0], {"accepted", "refused"})
    assert doc["status"] == "refused"
    assert doc["reason"].startswith("syntax error in carols_bot.py, line 5: "), doc["reason"]
    assert "crash" not in doc["reason"]


@pytest.mark.slow
def test_a_new_upload_says_received_and_an_identical_one_says_so(site):
    c = logged_in(site, "alice")
    data = PLAIN.replace("import random", "import random  # alice's own").encode()
    code, headers, _ = upload(c, "alice.py", data)
    first = submission_ids(c)[0]
    assert code == 303 and headers["location"] == f"/me?sent={first}"
    words = text_of(c.get(headers["location"])[2])
    assert re.search(rf"Submission #{first} \(alice.py\): (received, validating|received, waiting to be validated|"
                     r"accepted)", words), words
    c.wait(site["tokens"]["alice"], first, {"accepted"})
    code, headers, _ = upload(c, "alice.py", data)
    again = submission_ids(c)[0]
    assert code == 303 and again != first
    words = text_of(c.get(headers["location"])[2])
    assert f"identical to your submission #{first} (accepted as version " in words, words
    code, doc = c.submit_api(site["tokens"]["alice"], "alice.py", data)
    assert code == 202 and doc["identical_to"] == again and f"#{again}" in doc["note"]


def test_over_the_hourly_limit_the_page_says_when_to_try_again(site):
    c = logged_in(site, "bob")
    sent = []
    for i in range(4):
        assert upload(c, "bob.py", (PLAIN + f"# version {i}\n").encode())[0] == 303
        sent.append(time.time())
    code, headers, html = upload(c, "bob.py", (PLAIN + "# one more\n").encode())
    words = text_of(html)
    assert code == 429 and "<nav>" in html
    when = re.search(r"try again after (\d\d:\d\d:\d\d) UTC", words)
    assert when, words
    expected = time.strftime("%H:%M:%S", time.gmtime(sent[0] + 3600))
    hms = [int(x) for x in when.group(1).split(":")]
    exp = [int(x) for x in expected.split(":")]
    assert abs((hms[0] * 3600 + hms[1] * 60 + hms[2]) - (exp[0] * 3600 + exp[1] * 60 + exp[2])) % 86400 <= 3
    body, ctype = multipart({"file": ("bob.py", (PLAIN + "# api\n").encode())})
    code, headers, text = c.request("POST", "/api/submissions", body, ctype, token=site["tokens"]["bob"])
    assert code == 429 and "try again after" in text
    assert 3000 <= int(headers["retry-after"]) <= 3600  # (the same time, for scripts)


def test_a_revoked_student_is_told_why(site):
    work = site["work"]
    tokens = accounts(work, "erin")
    c = Client(site["server"].base)
    assert c.login("erin", tokens["erin"]) == 303
    p = subprocess.run([ARENA, "accounts", "revoke", "--league", "l.toml", "erin"], cwd=work,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    code, headers, _ = c.get("/me")  # the open session stops at once; the login page it is sent to says why
    assert code == 303 and headers["location"] == "/login"
    assert "revoked" in text_of(c.get("/login")[2])
    fresh = Client(site["server"].base)
    _, _, html = fresh.get("/login")
    csrf = re.search(r'name="login_csrf" value="([^"]+)"', html).group(1)
    code, _, html = fresh.form("/login", {"login_csrf": csrf, "name": "erin", "token": tokens["erin"]})
    assert code in (401, 403) and "revoked" in text_of(html), text_of(html)
    code, doc = fresh.submit_api(tokens["erin"], "erin.py", PLAIN.encode())
    assert code == 401 and "revoked" in doc["error"], doc
    csrf = re.search(r'name="login_csrf" value="([^"]+)"', html).group(1)  # (each login page its own token)
    code, _, html = fresh.form("/login", {"login_csrf": csrf, "name": "erin", "token": "x" * 40})
    assert code == 401 and "revoked" not in text_of(html)  # (only the token's holder learns it)


@pytest.mark.slow
def test_my_games_read_won_lost_or_draw(site):
    c = logged_in(site, "alice")
    if not re.search(r'class="sub-accepted"', c.get("/me")[2]):
        assert upload(c, "alice.py", PLAIN.encode())[0] == 303
        c.wait(site["tokens"]["alice"], submission_ids(c)[0], {"accepted"})
    wait_idle(site["work"])
    html = c.get("/me")[2]
    table = html[html.index("Games of the current version"):html.index("Failures")]
    cells = re.findall(r'<td class="(won|lost|draw)">(\w+)', table)
    assert len(cells) >= 4 and all(a == b for a, b in cells), table
    assert not re.search(r"-?\d\.\d+ : -?\d\.\d+", table) and "normal" not in table, table


def zipped(files: dict[str, bytes]) -> bytes:
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return buf.getvalue()


def test_the_organisers_source_view_lists_the_files_first_the_main_one_first_and_prints_no_binary(site):
    tokens = accounts(site["work"], "zed")
    binary = bytes(range(256)) * 4
    data = zipped({"zed/aaa_helper.py": b"HELPER = 1\n", "zed/bot.py": ("from aaa_helper import HELPER\n" +
                                                                       PLAIN).encode(),
                   "zed/model.bin": binary, "zed/notes.txt": b"my notes\n"})
    code, doc = Client(site["server"].base).submit_api(tokens["zed"], "zed.zip", data)
    assert code == 202, doc
    prof = logged_in(site, "prof")
    code, _, html = prof.get(f"/admin/submissions/{doc['id']}")
    assert code == 200
    listing = html.index('id="files"')
    assert listing < html.index("<pre>")  # the list of files before any file's text
    rows = re.findall(r"<tr><td>(?:<a [^>]*>)?([^<]+)(?:</a>)?</td><td>(\d+)</td><td>([^<]*)</td></tr>",
                      html[listing:])
    assert [r[0] for r in rows] == ["bot.py", "aaa_helper.py", "notes.txt", "model.bin"], rows
    assert rows[0][2] == "the bot's main file" and rows[3] == ("model.bin", "1024", "binary: not shown")
    texts = re.findall(r'<h3 id="file-\d+">([^<]+)</h3><pre>', html)
    assert texts == ["bot.py (the main file)", "aaa_helper.py", "notes.txt"], texts
    assert "\ufffd" not in html and "&#65533;" not in html


def test_revoke_asks_first_and_is_not_offered_on_ones_own_account(site):
    tokens = accounts(site["work"], "yan")
    prof = logged_in(site, "prof")
    admin = prof.get("/admin")[2]
    assert 'name="target" value="yan"><button' in admin
    assert 'name="target" value="prof"><button' not in admin  # no Revoke on one's own row
    csrf = prof.csrf()
    code, _, html = prof.form("/admin/revoke", {"csrf": csrf, "target": "yan"})
    assert code == 200 and "Revoke the account yan?" in text_of(html) and 'name="confirm" value="yes"' in html
    assert Client(site["server"].base).submit_api(tokens["yan"], "yan.py", b"x = 1\n")[0] != 401  # not yet
    assert prof.form("/admin/revoke", {"csrf": csrf, "target": "yan", "confirm": "yes"})[0] == 303
    assert Client(site["server"].base).submit_api(tokens["yan"], "yan.py", b"x = 2\n")[0] == 401
    code, _, html = prof.form("/admin/revoke", {"csrf": csrf, "target": "prof", "confirm": "yes"})
    assert code == 400 and "own account" in html
    assert prof.get("/admin")[0] == 200  # still logged in


@pytest.mark.slow
def test_the_web_and_the_dashboard_leave_out_the_same_withdrawn_and_revoked_bots(site):
    """One rule on both: a bot an organiser took out (its version withdrawn, or its account revoked) is ranked
    nowhere: not on the web leaderboard, not on the dashboard (arena/tui); its games stay."""
    from arena.tui.data import StoreReader
    tokens = accounts(site["work"], "wendy", "rex")
    c = Client(site["server"].base)
    sent = {}
    for who in ("wendy", "rex"):
        code, doc = c.submit_api(tokens[who], f"{who}.py", (PLAIN + f"# {who}\n").encode())
        sent[who] = doc["id"]
        assert c.wait(tokens[who], doc["id"], {"accepted", "refused"})["status"] == "accepted"
    wait_idle(site["work"])
    reader = StoreReader(site["work"] / "srv.sqlite")
    try:
        ranked = [r.label for r in reader.poll(None, "*").leaderboard]
        assert "wendy" in ranked and "rex" in ranked, ranked
        prof = logged_in(site, "prof")
        csrf = prof.csrf()
        assert prof.form("/admin/withdraw", {"csrf": csrf, "target": str(sent["wendy"])})[0] == 303
        assert prof.form("/admin/revoke", {"csrf": csrf, "target": "rex", "confirm": "yes"})[0] == 303
        board = prof.get("/")[2]
        web = re.findall(r'<a href="/bots/\d+">([^<]+)</a>', board)
        dashboard = [r.label for r in reader.poll(None, "*", force=True).leaderboard]
        for gone in ("wendy", "rex"):
            assert not [n for n in web if n.startswith(gone)], web
            assert not [n for n in dashboard if n.startswith(gone)], dashboard
        assert "alice" in " ".join(dashboard) or "random" in dashboard
    finally:
        reader.close()


NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def test_the_servers_docs_example_league_works_and_its_key_count_is_right(tmp_path):
    """docs/server.md's league file loads (every reference bot plays every game), makes accounts and starts; the
    number of server keys it announces is the number its table lists."""
    import textwrap

    from arena.league.config import load_config
    doc = (ROOT / "docs" / "server.md").read_text()
    block = re.search(r"\n( *)```toml\n(.*?)\n *```", doc, re.S)
    assert block, "docs/server.md shows a league file"
    league = textwrap.dedent(block.group(2))
    (tmp_path / "l.toml").write_text(league)
    config = load_config(str(tmp_path / "l.toml"))
    assert config.upload_format in ("arena", "comp424") and config.deadline is not None
    said = re.search(r"(\w+) keys are for the server:\n\n((?: *\|.*\n)+)", doc)
    assert said, "docs/server.md names the server's keys"
    rows = [r for r in said.group(2).splitlines() if r.strip().startswith("| `")]
    assert NUMBERS[said.group(1).lower()] == len(rows), (said.group(1), rows)
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        assert c.login("alice", tokens["alice"]) == 303
        assert "colosseum(size=8)" in text_of(c.get("/submit")[2])
    finally:
        assert server.stop() == 143


def test_an_unknown_address_and_a_too_big_form_are_pages_of_the_site(site):
    c = logged_in(site, "alice")
    for path in ("/no/such/page", "/logout", "/admin/revoke"):  # (the last two: forms' addresses opened as pages)
        code, headers, html = c.get(path)
        assert code in (404, 405) and "text/html" in headers.get("content-type", "") and "<nav>" in html, (path, html)
        assert "Log out alice" in html  # the site's page, for who is logged in
    code, headers, text = c.get("/api/nothing")
    assert code == 404 and headers["content-type"].startswith("application/json") and "error" in text
    _, _, html = c.get("/login")
    csrf = re.search(r'name="login_csrf" value="([^"]+)"', html).group(1)
    code, headers, html = c.form("/login", {"login_csrf": csrf, "name": "alice", "token": "x" * 40_000})
    assert code == 413 and "<nav>" in html and "over the 16 kB" in text_of(html), html


def test_a_bots_page_reads_its_games_as_won_lost_or_draw(site):
    c = logged_in(site, "alice")
    if not re.search(r'class="sub-accepted"', c.get("/me")[2]):
        assert upload(c, "alice.py", PLAIN.encode())[0] == 303
        c.wait(site["tokens"]["alice"], submission_ids(c)[0], {"accepted"})
    wait_idle(site["work"])
    link = re.search(r'<a href="(/bots/\d+)">alice</a>', c.get("/")[2])
    assert link
    html = c.get(link.group(1))[2]
    table = html[html.index('<table id="games">'):]
    table = table[:table.index("</table>")]
    assert "<th>result</th>" in table
    results = re.findall(r'<td class="(won|lost|draw)">(\w+)</td>', table)
    assert len(results) >= 4 and all(a == b for a, b in results), table


def test_the_source_view_of_a_comp424_checkout_starts_at_the_agent_file():
    from arena.adapters.comp424 import take_agent
    from arena.adapters.comp424_names import ENTRY
    from arena.server.organiser_pages import source_files
    from arena.submissions.snapshot import MB
    files = source_files(take_agent(FIXTURES / "checkout", max_bytes=MB))
    assert files[0].path == "agents/student_agent.py" and files[0].main
    assert not any(f.main for f in files[1:]) and ENTRY in [f.path for f in files]
    hand_in = source_files(take_agent(FIXTURES / "handin", max_bytes=MB))
    assert hand_in[0].path == "student_agent.py" and hand_in[0].main


def test_a_replay_says_who_won(site):
    c = logged_in(site, "alice")
    if not re.search(r'class="sub-accepted"', c.get("/me")[2]):
        assert upload(c, "alice.py", PLAIN.encode())[0] == 303
        c.wait(site["tokens"]["alice"], submission_ids(c)[0], {"accepted"})
    wait_idle(site["work"])
    game = re.search(r'<a href="/games/(\d+)">', c.get("/me")[2])
    assert game
    data = c.get(f"/games/{game.group(1)}/replay-data.js")[2]
    result = re.search(r'"result": ?"([^"]*)"', data)
    assert result and re.match(r"(draw|.+ won|.+ drew): ", result.group(1)), data[:300]
