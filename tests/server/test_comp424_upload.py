"""A student's zipped COMP424 checkout through `arena serve`'s submit form, end to end (league key
`upload_format = "comp424"`): accepted after validation, then played in the league as its `student_agent`."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.server.support import Client, Server, accounts, make_league, multipart, wait_idle
from tests.server.test_uploads import _zip_folder

pytestmark = pytest.mark.xdist_group("server")
CHECKOUT = Path(__file__).resolve().parents[1] / "fixtures" / "comp424" / "checkout"
COURSE = '''name = "srv"
games = ["colosseum(size=5)"]
games_per_pairing = 2
seed = 3
database = "srv.sqlite"
bots = ["random", "mc(n=5)"]
upload_format = "comp424"
[limits]
first_move_time = 30.0
move_time = 2.0
'''


@pytest.mark.slow
def test_a_zipped_checkout_uploaded_on_the_web_is_validated_and_plays(tmp_path):
    from leaderboards.store import Store
    make_league(tmp_path, COURSE)
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        assert c.login("alice", tokens["alice"]) == 303
        body, ctype = multipart({"file": ("checkout.zip", _zip_folder(CHECKOUT, "checkout"))}, {"csrf": c.csrf()})
        assert c.request("POST", "/submit", body, ctype)[0] == 303
        sid = int(re.search(r'<tr class="sub-\w+"[^>]*><td>(\d+)</td><td>checkout\.zip</td>', c.get("/me")[2]).group(1))
        doc = c.wait(tokens["alice"], sid, {"accepted", "refused"}, limit=180)
        assert doc["status"] == "accepted", doc
        wait_idle(tmp_path, limit=180)
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
            lg = store.find_league("srv")
            bot = next(b for b in store.bots(lg.id) if b.name == "alice")
            played = store.games(lg.id, bot_id=bot.id)
        assert len(played) == 4  # against each of the two, from each seat
        moved_in = 0
        for g in played:
            assert not g.failures and g.terminations == ["normal", "normal"], g.failures
            seat = g.seats.index(bot.id)
            mine = [w for s, w in zip(g.move_seats, g.wall_times) if s == seat]
            # the checkout's own student_agent played: it "precomputes" for a second on its first move only.
            # From the second seat it may never move: a first move can wall the players apart (~2% of random
            # first moves on this board), and the league's keyed seeds differ from run to run.
            if mine:
                moved_in += 1
                assert mine[0] >= 0.9 and all(w < 0.9 for w in mine[1:]), mine
        assert moved_in >= 2  # it always moves first from the first seat
        _, _, board = c.get("/")
        assert re.search(r'<a href="/bots/\d+">alice</a>', board)
    finally:
        assert server.stop() == 143
