"""Issue 32: a course's final on `arena serve`. An organiser starts it on /admin; the ladder's loop plays it (every
student's current bot, seeded by the ladder's ratings, on a game the ladder never played); /bracket shows it;
nobody else can start one, and a second or a bad one is refused in one line."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from leaderboards import accounts as acc
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


STUCK_FINAL = """
import sys, threading, time
from pathlib import Path
from arena.league.config import load_config
from arena.server import finals, ladder
from arena.server.uploads import read_upload
from arena.tournament.finals import final_name
from leaderboards import accounts as acc
from leaderboards.store import Store

config, db = load_config("l.toml"), Path("srv.sqlite")
real_pass = ladder.run_pass

def stuck_final(store, league_config, summary, **kw):
    if league_config.name != final_name(config.name):
        return real_pass(store, league_config, summary, **kw)
    print("final pass", flush=True)  # a game the referee can never play, as an arena bug would leave it
    summary.errors.append("nim(n=7): RuntimeError: injected")

ladder.run_pass = stuck_final

def submit(store, league_id, validator, name):
    account = acc.account_named(store, league_id, name)
    acc.add_submission(store, league_id, account.id, name, f"{name}.py", read_upload(f"{name}.py",
                       open(f"{name}.py", "rb").read(), 1 << 20))
    validator.wake.set()

def accepted(store, league_id, name):
    return any(s.status == "accepted" for s in acc.submissions(store, league_id) if s.bot_name == name)

def course(league_id, entered, validator):
    with Store.open(db) as store:
        for name in ("ann", "ben"):
            submit(store, league_id, validator, name)
        while not (accepted(store, league_id, "ann") and accepted(store, league_id, "ben")):
            time.sleep(0.2)
        finals.start(store, config, db, "knockout", ["nim(n=7)"], "1")
        entered.set()
        print("final started", flush=True)
        submit(store, league_id, validator, "cat")

def started(league_id, entered, validator, store):
    threading.Thread(target=course, args=(league_id, entered, validator), daemon=True).start()

summary = ladder.run_ladder(config, db, started=started)
print("stopped by", summary.interrupted, flush=True)
"""


@pytest.mark.slow
def test_a_final_with_a_game_that_cannot_be_played_does_not_stop_the_ladder(tmp_path) -> None:
    """The final plays first, but a game of it that the referee cannot play (an arena bug) is retried after a pause
    (doubling each time) while the ladder goes on: a student who uploads meanwhile is validated and plays the
    ladder's games."""
    make_league(tmp_path)
    accounts(tmp_path, "ann", "ben", "cat")
    for name in ("ann", "ben", "cat"):
        (tmp_path / f"{name}.py").write_text(PLAIN + f"# {name}\n")
    (tmp_path / "ladder.py").write_text(STUCK_FINAL)
    log = tmp_path / "ladder.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "ladder.py"], cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline, games = time.monotonic() + 120, 0
        while time.monotonic() < deadline and proc.poll() is None:
            if "final started" in log.read_text():
                with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
                    league = store.league("srv")
                    assert league is not None
                    cat = {b.id for b in store.bots(league.id) if b.name == "cat"}
                    games = sum(1 for g in store.games(league.id) if set(g.seats) & cat)
                    subs = [s.status for s in acc.submissions(store, league.id) if s.bot_name == "cat"]
                if games and log.read_text().count("final pass") >= 2:
                    break
            time.sleep(0.3)
        text = log.read_text()
        assert proc.poll() is None, text[-3000:]
        assert games, (subs, text[-3000:])  # cat played the ladder's games while the final was stuck
        assert text.count("final pass") >= 2, text[-3000:]  # and the final was tried again
        # tried again after 5 s, then 10 s: a game that can never be played is not retried every few seconds
        assert re.findall(r"could not be played .*; retried in (\d+) s", text)[:2] == ["5", "10"], text[-3000:]
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def test_the_pause_before_unplayed_games_doubles_up_to_its_most_and_starts_again():
    """A game that can never be played costs one try a minute however long the server runs (2,000 passes in a row:
    the pause once grew until it overflowed a float), and a pass that plays games or leaves none starts it again."""
    from arena.server.ladder import RETRY, RETRY_MOST, Backoff
    b = Backoff()
    pauses = [b.after(True, 0) for _ in range(2000)]
    doubling = [min(RETRY * 2 ** i, RETRY_MOST) for i in range(8)]
    assert pauses[:8] == doubling and doubling[0] < doubling[1] < RETRY_MOST == doubling[-1]
    assert set(pauses[8:]) == {RETRY_MOST}
    assert b.after(True, 3) == RETRY  # games played meanwhile: the machine was busy, not broken
    assert b.after(True, 0) == 2 * RETRY
    assert b.after(False, 0) == RETRY and b.after(True, 0) == RETRY
