"""What a student and an organiser read on `arena serve`'s pages, through a real server and a real HTTP client: the
submit page's rules (games, limits, size, the authors' guide, a COMP424 league's upload command), refusals as
pages of the site with the figure and the limit, results in words, the organiser's source view and revoke step.
(Browser-only behaviour, polling, clipping and phone widths, is in test_browser.py.)"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.server.support import Client, Server, accounts, make_league, multipart

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
            sid = int(re.search(r'<tr class="sub-\w+"><td>(\d+)</td>', client.get("/me")[2]).group(1))
            doc = client.wait(tokens[who], sid, {"accepted", "refused"}, limit=180)
            assert doc["status"] == "accepted", (who, doc)
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
