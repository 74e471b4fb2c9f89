"""The league inside `arena serve`: submissions while games are in flight, two at once, SIGKILL and restart,
the signals' exit statuses, the runner lock, and the league keys deadline / max_submissions_per_hour /
leaderboard_public."""
from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from arena.league.config import load_config
from arena.league.planning import plan
from leaderboards import accounts as acc
from leaderboards.store import Store
from tests.server.support import ARENA, LEAGUE, PLAIN, Client, Server, accounts, make_league, wait_idle

pytestmark = pytest.mark.xdist_group("server")
LONG = LEAGUE.replace("games_per_pairing = 2", "games_per_pairing = 16")


def stored_exactly_the_schedule(work) -> int:
    """Every fixture of the league's schedule stored once; any other stored game is one of a retired version
    (played before it was replaced, kept)."""
    cfg = load_config(str(work / "l.toml"))
    with Store.open(work / "srv.sqlite", readonly=True) as store:
        lg = store.find_league(cfg.name)
        keys = list(store.sorted_schedule_keys(lg.id))
        assert len(keys) == len(set(keys)) == store.count_games(lg.id)
        scheduled = {f.key for f in plan(store, lg.id, cfg)}
        assert scheduled <= set(keys)
        retired = {b.id for b in store.bots(lg.id) if b.status == "retired"}
        for g in store.games(lg.id):
            assert g.schedule_key in scheduled or retired & set(g.seats), g.schedule_key
        return len(keys)


@pytest.mark.slow
def test_submissions_while_games_are_in_flight_lose_and_double_nothing(tmp_path):
    make_league(tmp_path, LONG)
    tokens = accounts(tmp_path, "alice", "bob")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        sid = c.submit_api(tokens["alice"], "alice.py", PLAIN.encode())[1]["id"]
        c.wait(tokens["alice"], sid, {"accepted"})
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:  # alice's games are being played
            deadline = time.time() + 60
            while store.count_games(1) <= 16 and time.time() < deadline:
                time.sleep(0.1)
        sid = c.submit_api(tokens["bob"], "bob.py", PLAIN.encode())[1]["id"]  # mid-league
        sid2 = c.submit_api(tokens["alice"], "alice2.py", (PLAIN + "# v2\n").encode())[1]["id"]
        assert c.wait(tokens["bob"], sid, {"accepted", "refused"})["status"] == "accepted"
        assert c.wait(tokens["alice"], sid2, {"accepted", "refused"})["version"] == 2
        wait_idle(tmp_path, 240)
        n = stored_exactly_the_schedule(tmp_path)
        assert n >= 16 * 3 + 16 * 2  # random-greedy, alice v1's games (stored, then retired) and bob's at least
    finally:
        assert server.stop() == 143


@pytest.mark.slow
def test_two_submissions_at_once_become_two_versions_in_order(tmp_path):
    make_league(tmp_path)
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path).start()
    try:
        ids: list[int] = []
        barrier = threading.Barrier(2)

        def send(i: int) -> None:
            barrier.wait()
            ids.append(Client(server.base).submit_api(tokens["alice"], "alice.py",
                                                      (PLAIN + f"# {i}\n").encode())[1]["id"])
        threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        c = Client(server.base)
        docs = [c.wait(tokens["alice"], sid, {"accepted", "refused"}) for sid in sorted(ids)]
        assert [d["status"] for d in docs] == ["accepted", "accepted"]
        assert [d["version"] for d in docs] == [1, 2]  # in the order they were received
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
            assert [(b.version, b.status) for b in store.bots(1) if b.name == "alice"] == [(1, "retired"),
                                                                                         (2, "active")]
    finally:
        assert server.stop(signal.SIGINT) == 130


@pytest.mark.slow
def test_sigkill_mid_league_and_a_restart_play_every_game_once(tmp_path):
    make_league(tmp_path, LONG)
    tokens = accounts(tmp_path, "alice", "bob")
    server = Server(tmp_path).start()
    c = Client(server.base)
    sid = c.submit_api(tokens["alice"], "alice.py", PLAIN.encode())[1]["id"]
    c.wait(tokens["alice"], sid, {"accepted"})
    queued = c.submit_api(tokens["bob"], "bob.py", PLAIN.encode())[1]["id"]  # maybe validating at the kill
    time.sleep(1.0)
    server.kill()
    with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
        before = store.count_games(1)
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        assert c.status(tokens["alice"], sid)[1]["status"] == "accepted"  # kept
        assert c.wait(tokens["bob"], queued, {"accepted", "refused"})["status"] == "accepted"
        wait_idle(tmp_path, 240)
        assert stored_exactly_the_schedule(tmp_path) >= before
    finally:
        assert server.stop() == 143


def test_league_run_is_refused_while_serve_holds_the_store(tmp_path):
    make_league(tmp_path)
    accounts(tmp_path, "alice")
    server = Server(tmp_path).start()
    try:
        p = subprocess.run([ARENA, "league", "run", "l.toml"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=60)
        assert p.returncode != 0 and "runner" in p.stderr
        assert "(arena serve: pid " in p.stderr, p.stderr  # the holder named: what to stop
        second = Server(tmp_path)
        p = subprocess.run([ARENA, "serve", "--league", "l.toml", "--port", str(second.port)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode != 0 and "runner" in p.stderr
    finally:
        server.stop()


def test_deadline_rate_and_private_leaderboard(tmp_path):
    make_league(tmp_path, LEAGUE + 'deadline = "2000-01-01T00:00:00Z"\nleaderboard_public = false\n')
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        code, doc = c.submit_api(tokens["alice"], "alice.py", PLAIN.encode())
        assert code == 403 and "deadline" in doc["error"] and "2000-01-01" in doc["error"]
        assert c.get("/api/leaderboard")[0] == 401
        assert c.get("/")[0] == 303 and c.get("/bots/1")[0] == 303
        assert c.get("/api/leaderboard", token=tokens["alice"])[0] == 200
    finally:
        server.stop()
    make_league(tmp_path, LEAGUE + "max_submissions_per_hour = 2\n")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        codes = [c.submit_api(tokens["alice"], "alice.py", (PLAIN + f"# {i}\n").encode())[0] for i in range(3)]
        assert codes == [202, 202, 429]
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
            assert len(acc.submissions(store, 1)) == 2
    finally:
        server.stop()


@pytest.mark.slow
def test_a_pass_yields_to_a_newly_accepted_bot(tmp_path):
    """A long pass (thousands of random-vs-greedy games) is under way when alice's bot is accepted: her games start
    before that pass would have ended (the pass stops taking new games, finishes those in flight, and the next one
    plays her round-0 games first: keys sort round first)."""
    scheduled = 3000
    make_league(tmp_path, LEAGUE.replace("games_per_pairing = 2", f"games_per_pairing = {scheduled}"))
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:  # the long pass is playing
            deadline = time.time() + 60
            while store.count_games(1) < 20 and time.time() < deadline:
                time.sleep(0.05)
        sid = c.submit_api(tokens["alice"], "alice.py", PLAIN.encode())[1]["id"]
        doc = c.wait(tokens["alice"], sid, {"accepted", "refused"})
        assert doc["status"] == "accepted", doc
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
            alice = store.current_bot(1, "alice")
            assert alice is not None
            deadline = time.time() + 120
            while not store.games(1, bot_id=alice.id, limit=1) and time.time() < deadline:
                time.sleep(0.05)
            assert store.games(1, bot_id=alice.id, limit=1), "alice never played"
            first = min(g.id for g in store.games(1, bot_id=alice.id))  # (ids grow in the order games are stored)
            before_her_first = sum(1 for g in store.games(1) if g.id < first)
        assert before_her_first < scheduled, "the pass played every old game before alice's first"
    finally:
        assert server.stop() == 143


@pytest.mark.slow
def test_a_zipped_comp424_checkout_submitted_on_the_web_is_validated_and_plays(tmp_path):
    """A course league (`upload_format = "comp424"`): a student's zipped checkout through the API is validated
    from every seat as its student_agent, accepted, and plays the league's Colosseum games."""
    from tests.server.test_uploads import _zip_folder
    checkout = Path(__file__).resolve().parents[1] / "fixtures" / "comp424" / "checkout"
    make_league(tmp_path, LEAGUE.replace('games = ["nim(n=9)"]', 'games = ["colosseum(size=5)"]')
                .replace('bots = ["random", "greedy"]', 'bots = ["random", "mc(n=5)"]') + 'upload_format = "comp424"\n')
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        code, doc = c.submit_api(tokens["alice"], "checkout.zip", _zip_folder(checkout, "checkout"))
        assert code == 202, doc
        done = c.wait(tokens["alice"], doc["id"], {"accepted", "refused"}, limit=180)
        assert done["status"] == "accepted", done
        wait_idle(tmp_path, 240)
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
            alice = store.current_bot(1, "alice")
            assert alice is not None and alice.kind == "file"
            played = store.games(1, bot_id=alice.id)
            assert len(played) == 2 * 2  # against random and mc, both seats
            assert all(g.game.startswith("colosseum") for g in played)
            assert not any(f.seat == g.seats.index(alice.id) for g in played for f in g.failures), played
    finally:
        assert server.stop() == 143


def test_the_validator_keeps_no_result_of_its_games():
    """A validation game is never stored: the store's columns its worker encodes must not pile up in the server's
    one validation backend for its whole life (they did: one entry per validation game)."""
    from arena.league.task import Task
    from arena.limits import Limits
    from arena.server.ladder import Validator
    validator = Validator.__new__(Validator)  # (only its backend is used: no store, no thread)
    validator.backend = None
    try:
        for i in range(3):
            task = Task(f"v{i}", "nim", 0, (1, 2), ("random", "greedy"), ("a", "b"), i, Limits(), "lose")
            assert validator.play(task).returns
        assert validator.backend is not None and validator.backend.columns == {}
    finally:
        if validator.backend is not None:
            validator.backend.close()
