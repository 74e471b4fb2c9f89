"""Issue 32: a course's final on `arena serve`. An organiser starts it on /admin; the ladder's loop plays it (every
student's current bot, seeded by the ladder's ratings, on a game the ladder never played); /bracket shows it;
nobody else can start one, and a second or a bad one is refused in one line."""
from __future__ import annotations

import json
import re
import time

import pytest

from leaderboards.store import Store
from tests.server.support import PLAIN, Client, Server, accounts, make_league, wait_idle

pytestmark = pytest.mark.xdist_group("server")


@pytest.mark.slow
def test_an_organiser_starts_the_final_and_everyone_watches_it(tmp_path) -> None:
    make_league(tmp_path)
    students = accounts(tmp_path, "ann", "ben", "cat")
    staff = accounts(tmp_path, "prof", organiser=True)
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        for name, token in students.items():
            code, doc = c.submit_api(token, f"{name}.py", (PLAIN + f"# {name}\n").encode())
            assert code == 202, doc
            c.wait(token, doc["id"], {"accepted"})
        wait_idle(tmp_path)
        assert c.get("/bracket")[0] == 404  # a round robin with no final has no bracket

        student = Client(server.base)
        student.login("ann", students["ann"])
        code, _, _ = student.form("/admin/final", {"csrf": student.csrf(), "format": "knockout", "games": "nim(n=7)"})
        assert code == 404  # not an organiser's

        organiser = Client(server.base)
        assert organiser.login("prof", staff["prof"]) == 303
        csrf = organiser.csrf()
        code, _, text = organiser.form("/admin/final", {"csrf": csrf, "format": "pyramid", "games": "nim(n=7)"})
        assert code == 400 and "is not a final&#39;s format" in text
        code, _, text = organiser.form("/admin/final", {"csrf": csrf, "format": "knockout", "games": "nope"})
        assert code == 400 and "nope" in text
        code, headers, _ = organiser.form("/admin/final", {"csrf": csrf, "format": "knockout",
                                                            "games": "nim(n=7)", "games_per_pairing": "2"})
        assert code == 303, headers
        code, _, text = organiser.form("/admin/final", {"csrf": csrf, "format": "swiss", "games": "nim(n=7)"})
        assert code == 400 and "a final already" in text

        deadline, doc = time.monotonic() + 180, {}
        while time.monotonic() < deadline:
            code, _, body = c.get("/api/bracket")
            if code == 200:
                doc = json.loads(body)
                if doc["finished"]:
                    break
            time.sleep(0.5)
        assert doc.get("finished"), doc
        assert doc["format"] == "knockout"
        assert sorted(b for group in doc["placings"] for b in group) == ["ann", "ben", "cat"]  # built-ins stay out
        code, _, page = c.get("/bracket")
        assert code == 200 and "ann" in page
        links = re.findall(r'href="/bots/(\d+)"', page)
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
            ladder = store.league("srv")
            final = store.league("srv final")
            assert ladder is not None and final is not None
            assert {g.base_game for g in store.games(final.id)} == {"nim(n=7)"}
            ladder_bots = {b.id for b in store.bots(ladder.id)}
        assert links and all(int(x) in ladder_bots for x in links)  # a final's names link to the ladder's pages
        assert 'id="final"' in organiser.get("/admin")[2]
    finally:
        server.stop()
