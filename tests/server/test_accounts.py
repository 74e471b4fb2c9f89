"""`arena accounts`: tokens printed once and stored only as an HMAC, names checked, revocation at once, and the
schema 4 -> 5 migration that brings the server's tables."""
from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys

import pytest

from leaderboards import accounts as acc
from leaderboards.schema import SERVER_SCHEMA, TEAMS_SCHEMA
from leaderboards.store import SCHEMA_VERSION, Store

pytestmark = pytest.mark.xdist_group("server")
ARENA = os.path.join(os.path.dirname(sys.executable), "arena")

LEAGUE = 'name = "srv"\ngames = ["nim(n=15)"]\ngames_per_pairing = 2\nseed = 1\ndatabase = "srv.sqlite"\n' \
         'bots = ["random", "greedy"]\n'


@pytest.fixture
def league(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "l.toml").write_text(LEAGUE)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    """`arena ARGS` as a user runs it (exit statuses and one-line errors included)."""
    p = subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def test_add_prints_a_token_per_name_and_stores_only_its_hmac(league):
    code, out, _ = run("accounts", "add", "--league", "l.toml", "alice", "bob")
    assert code == 0
    tokens = dict(re.findall(r"^(\w+) (\S+)$", out, re.M))
    assert set(tokens) == {"alice", "bob"} and all(len(t) >= 43 for t in tokens.values())  # >= 256 bits
    raw = b"".join(p.read_bytes() for p in league.glob("srv.sqlite*"))
    assert not any(t.encode() in raw for t in tokens.values())
    with Store.open(league / "srv.sqlite") as store:
        lg = store.find_league("srv")
        assert acc.by_token(store, lg.id, tokens["alice"]).name == "alice"
        assert acc.by_token(store, lg.id, tokens["alice"][:-1] + "x") is None


def test_names_are_checked_like_bot_names_and_may_not_take_a_league_bot(league):
    assert run("accounts", "add", "--league", "l.toml", "random")[0] == 2
    code, _, err = run("accounts", "add", "--league", "l.toml", "bad\x1bname")
    assert code == 2 and "\x1b" not in err
    assert run("accounts", "add", "--league", "l.toml", "alice")[0] == 0
    code, _, err = run("accounts", "add", "--league", "l.toml", "alice")
    assert code == 2 and "exists" in err


def test_import_a_roster_and_revoke(league):
    (league / "roster.csv").write_text("name,email\ncarol,carol@example.org\ndave,\n")
    code, out, _ = run("accounts", "import", "--league", "l.toml", "roster.csv")
    assert code == 0 and re.findall(r"^(\w+) \S+$", out, re.M) == ["carol", "dave"]
    token = out.split()[1]
    assert run("accounts", "revoke", "--league", "l.toml", "carol")[0] == 0
    code, out, _ = run("accounts", "list", "--league", "l.toml")
    assert "carol\tstudent\trevoked\tcarol@example.org" in out and "dave\tstudent\tactive" in out
    with Store.open(league / "srv.sqlite") as store:
        assert acc.by_token(store, store.find_league("srv").id, token) is None
        assert [a.action for a in acc.actions(store, 1)] == ["revoke"]


def test_a_schema_4_store_gets_the_server_tables(tmp_path):
    path = tmp_path / "old.sqlite"
    Store.open(path, create=True).close()
    conn = sqlite3.connect(path)
    for kind, name in re.findall(r"CREATE (TABLE|INDEX) IF NOT EXISTS (\w+)", TEAMS_SCHEMA)[::-1]:  # (schema 7's)
        conn.execute(f"DROP {kind} {name}")
    for table in re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", SERVER_SCHEMA):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("DROP INDEX bots_files")  # (schema 6's)
    conn.execute("ALTER TABLE bots DROP COLUMN files_hash")
    conn.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"accounts", "submissions", "sessions", "actions"} <= tables
        assert store.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == \
            str(SCHEMA_VERSION) == "7"


def test_validation_takes_accounts_in_turn(league):
    """Accounts take turns in the one validation queue: next is the first waiting submission of the account served
    least recently (never served: first), the oldest among equals. Oldest first alone made one student's ten
    uploads (up to ~10 s each to validate) hold up a classmate's first for a minute or more."""
    from arena.submissions.snapshot import single
    run("accounts", "add", "--league", "l.toml", "alice", "bob", "carol")
    with Store.open("srv.sqlite") as store:
        league_id = store.find_league("srv").id
        ids = {a.name: a.id for a in acc.accounts(store, league_id)}

        def upload(name: str, n: int) -> int:
            return acc.add_submission(store, league_id, ids[name], name, "bot.py",
                                      single("bot.py", f"# {name} {n}\n"))
        order = [upload("alice", n) for n in range(4)] + [upload("bob", 0), upload("carol", 0), upload("bob", 1)]
        taken: list[int] = []
        turns: dict[int, int] = {}  # the validator's (a restart starts the turns afresh)
        while (sub := acc.claim_next(store, league_id, turns)) is not None:
            taken.append(sub.id)
            if len(taken) == 2:  # one arrives while the queue is served: it waits for its own round
                order.append(upload("carol", 1))
        a0, a1, a2, a3, b0, c0, b1, c1 = order
        assert taken == [a0, b0, c0, a1, b1, c1, a2, a3], (order, taken)
        # Served least recently, not fewest times: bob (last served 5th) before alice (8th), then in turn, though
        # alice has had twice bob's turns.
        b2, a4, a5, b3 = upload("bob", 2), upload("alice", 4), upload("alice", 5), upload("bob", 3)
        again = [sub.id for sub in iter(lambda: acc.claim_next(store, league_id, turns), None)]
        assert again == [b2, a4, b3, a5], again
        # A revoked account's waiting uploads are never validated (nor entered).
        c2, a6 = upload("carol", 2), upload("alice", 6)
        acc.revoke(store, ids["carol"])
        assert [sub.id for sub in iter(lambda: acc.claim_next(store, league_id, turns), None)] == [a6]
        assert acc.submission(store, c2).status == "withdrawn"  # (a revoke withdraws what waits)
