"""Teams on `arena serve`: `arena accounts team` puts accounts in a team, any member submits the team's one bot
(named as the team), the team shares the hourly upload limit and its tracebacks, and the leaderboard and bot pages
name its members. Through the real CLI, a real server and a real HTTP client; and the schema 6 -> 7 migration."""
from __future__ import annotations

import re
import sqlite3
import subprocess

import pytest

from arena.errors import ConfigError
from leaderboards import teams as tm
from leaderboards.schema import TEAMS_SCHEMA
from leaderboards.store import SCHEMA_VERSION, Store
from tests.server import support
from tests.server.support import ARENA, PLAIN, RAISER, Client, Server, accounts, make_league, wait_idle

pytestmark = pytest.mark.xdist_group("server")
LEAGUE = support.LEAGUE + "max_submissions_per_hour = 3\n"  # (a top-level key after the bots)


def run(work, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], cwd=work, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_the_team_command_checks_names_moves_members_and_lists_teams(tmp_path):
    make_league(tmp_path, LEAGUE)
    accounts(tmp_path, "alice", "bob", "carol", "dave")
    p = run(tmp_path, "accounts", "team", "--league", "l.toml", "red", "alice", "bob")
    assert p.returncode == 0 and p.stdout == "red: alice, bob\n", p.stderr
    # bad names, one clear line and exit 2: unprintable, an account's name, a league bot's, an unknown member
    for args, word in ((["bad\x1bteam", "carol"], "unprintable"), (["carol", "dave"], "account's name"),
                       (["random", "carol"], "bot of the league file"), (["blue", "zed"], "no account 'zed'"),
                       (["blue", "carol", "carol"], "twice")):
        p = run(tmp_path, "accounts", "team", "--league", "l.toml", *args)
        assert p.returncode == 2 and word in p.stderr and "\x1b" not in p.stderr and p.stderr.count("\n") == 1, \
            (args, p.stderr)
    assert run(tmp_path, "accounts", "add", "--league", "l.toml", "red").returncode == 2  # a team's name is taken
    # re-run with other members: bob leaves; carol, then in blue, moves here (an account is in one team at most)
    assert run(tmp_path, "accounts", "team", "--league", "l.toml", "blue", "carol", "dave").returncode == 0
    p = run(tmp_path, "accounts", "team", "--league", "l.toml", "red", "alice", "carol")
    assert p.returncode == 0 and p.stdout == "red: alice, carol (bob left it)\n"
    p = run(tmp_path, "accounts", "teams", "--league", "l.toml")
    assert p.stdout == "blue\tdave\nred\talice, carol\n"
    listed = run(tmp_path, "accounts", "list", "--league", "l.toml").stdout
    assert re.search(r"^alice\tstudent\tactive\t-\t0 submissions\tred$", listed, re.M)
    assert re.search(r"^bob\tstudent\tactive\t-\t0 submissions\t-$", listed, re.M)


def test_a_schema_6_store_gets_the_team_tables_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.sqlite"
    with Store.open(path, create=True) as store:
        league_id = store.ensure_league("srv", {"games": ["nim"]}).id
        store.upsert_bot(league_id, "random", origin="config", spec="random")
    conn = sqlite3.connect(path)
    for kind, name in re.findall(r"CREATE (TABLE|INDEX) IF NOT EXISTS (\w+)", TEAMS_SCHEMA)[::-1]:
        conn.execute(f"DROP {kind} {name}")
    conn.execute("UPDATE meta SET value='6' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with Store.open(path, readonly=True) as store:  # an old store is still read as it is
        assert store.schema_version == 6 and [b.name for b in store.bots(1)] == ["random"]
    with Store.open(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 7
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"teams", "team_members", "scrimmages", "scrimmage_games"} <= tables
        assert [b.name for b in store.bots(1)] == ["random"] and tm.teams(store, 1) == []


def test_an_upload_sent_before_its_account_changed_teams_may_not_enter(tmp_path):
    """Validated after alice joined a team, her upload for her own bot would be a second entry of her side."""
    from arena.submissions.snapshot import single
    from leaderboards import accounts as acc
    with Store.open(tmp_path / "s.sqlite", create=True) as store:
        league_id = store.ensure_league("srv", {}).id
        alice, _ = acc.add_account(store, league_id, "alice")
        bob, _ = acc.add_account(store, league_id, "bob")
        before = acc.submission(store, acc.add_submission(store, league_id, alice.id, "alice", "a.py",
                                                          single("a.py", "# a\n")))
        assert tm.stale_upload(store, before) is None
        tm.set_team(store, league_id, "red", [alice, bob])
        assert "now in team red: upload it again" in tm.stale_upload(store, before)
        sent = acc.submission(store, acc.add_submission(store, league_id, bob.id, "red", "b.py",
                                                        single("b.py", "# b\n")))
        assert tm.stale_upload(store, sent) is None
        tm.set_team(store, league_id, "red", [alice])  # bob leaves: his upload for the team no longer enters
        assert "now in no team" in tm.stale_upload(store, sent)
        assert tm.side_of(store, bob) == tm.Side("bob", None, (bob,))


@pytest.mark.slow
def test_a_team_submits_one_bot_shares_its_limit_and_tracebacks_and_is_shown_with_its_members(tmp_path):
    make_league(tmp_path, LEAGUE)
    tokens = accounts(tmp_path, "alice", "bob", "carol")
    server = Server(tmp_path).start()
    try:
        c = Client(server.base)
        # alice on her own first: her bot plays under her name
        code, doc = c.submit_api(tokens["alice"], "alice.py", PLAIN.encode())
        assert code == 202 and c.wait(tokens["alice"], doc["id"], {"accepted"})["bot"] == "alice"
        wait_idle(tmp_path)
        # the team, made while the server runs: alice's own bot leaves the ladder, the team's takes its place
        p = run(tmp_path, "accounts", "team", "--league", "l.toml", "<i>red</i>", "alice", "bob")
        assert p.returncode == 0, p.stderr
        code, doc = c.submit_api(tokens["bob"], "team.py", PLAIN.encode() + b"# bob's\n")
        assert code == 202 and c.wait(tokens["bob"], doc["id"], {"accepted"})["bot"] == "<i>red</i>"
        # alice (a teammate) follows bob's upload by the API; carol (another) gets the 404 of a missing one
        assert c.status(tokens["alice"], doc["id"])[1]["status"] == "accepted"
        assert c.status(tokens["carol"], doc["id"])[0] == 404
        wait_idle(tmp_path)
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
            bots = {b.name: b for b in store.bots(1) if b.status != "retired"}
            assert "alice" not in bots and bots["<i>red</i>"].origin == "submit"
            alice = store.current_bot(1, "alice")
            assert alice.status == "retired" and alice.status_reason == "joined team <i>red</i>"
            red = bots["<i>red</i>"].id
        # the leaderboard: the team's bot, its members beside it (escaped); no entry of alice's own
        _, _, board = c.get("/")
        assert "&lt;i&gt;red&lt;/i&gt;" in board and "<i>red</i>" not in board
        teams = re.search(r'<table id="teams">.*?</table>', board, re.S).group(0)
        assert re.search(r"&lt;i&gt;red&lt;/i&gt;</td><td>alice, bob</td>", teams)
        assert '>alice<' not in board.split('<table id="teams">')[0]
        _, _, page = c.get(f"/bots/{red}")
        assert re.search(r'<p id="team">Team &lt;i&gt;red&lt;/i&gt;: alice, bob\.</p>', page)
        # alice's upload of a bot that fails: refused with its traceback, which bob sees on his page, carol not
        code, doc = c.submit_api(tokens["alice"], "raiser.py", RAISER.encode())
        assert code == 202 and c.wait(tokens["alice"], doc["id"], {"refused"})["status"] == "refused"
        bob = Client(server.base)
        assert bob.login("bob", tokens["bob"]) == 303
        _, _, mine = bob.get("/me")
        assert "IndexError" in mine and "raiser.py" in mine and "Team <b>&lt;i&gt;red&lt;/i&gt;</b>" in mine
        assert re.search(r"<td>raiser\.py</td><td>[^<]+</td><td>alice</td>", mine)  # who sent it
        carol = Client(server.base)
        assert carol.login("carol", tokens["carol"]) == 303
        _, _, hers = carol.get("/me")
        assert "IndexError" not in hers and "raiser.py" not in hers
        # the hourly limit is the team's: alice's 2 (her own from before the team count too: joining does not
        # double a rate) + bob's 1 = 3; bob's next is refused
        code, doc = c.submit_api(tokens["bob"], "again.py", PLAIN.encode() + b"# again\n")
        assert code == 429 and "for your team <i>red</i>" in doc["error"] and doc["retry_after"] > 0, doc
        code, doc = c.submit_api(tokens["carol"], "carol.py", PLAIN.encode())  # carol, alone, still may
        assert code == 202
    finally:
        assert server.stop() == 143


def test_a_team_bot_is_not_flagged_as_a_copy_of_its_members_own_bots(tmp_path):
    """/admin's byte-identical flags: the team's bot with the files of a member's bot from before the team is one
    side's work; the same files under an outsider's name are still flagged."""
    from arena.server.similarity import identical
    from arena.submissions.snapshot import single
    from leaderboards import accounts as acc
    snap = single("bot.py", PLAIN)
    with Store.open(tmp_path / "s.sqlite", create=True) as store:
        league_id = store.ensure_league("srv", {}).id
        alice, _ = acc.add_account(store, league_id, "alice")
        bob, _ = acc.add_account(store, league_id, "bob")
        acc.add_account(store, league_id, "carol")
        store.upsert_bot(league_id, "alice", origin="submit", snapshot=snap)
        tm.set_team(store, league_id, "red", [alice, bob])
        store.upsert_bot(league_id, "red", origin="submit", snapshot=snap)
        store.upsert_bot(league_id, "carol", origin="submit", snapshot=snap)
        flagged = identical(store, league_id, store.bots(league_id))
        assert flagged == {"red": ["carol"], "carol": ["alice", "red"]}, flagged


def test_a_team_emptied_into_another_leaves_no_second_entry_and_its_name_stays_taken(tmp_path):
    """Attack (issue 32 review): alice and bob, team red, all move to team blue. Red's bot stayed in the ladder
    (and would enter the final: two entries for one side), and `arena accounts add red` then made an account whose
    side was red: it saw red's scrimmages and tracebacks and could submit red's bot."""
    from leaderboards import accounts as acc
    make_league(tmp_path, LEAGUE)
    with Store.open(tmp_path / "srv.sqlite", create=True) as store:
        league_id = store.ensure_league("srv", {}).id
        alice, _ = acc.add_account(store, league_id, "alice")
        bob, _ = acc.add_account(store, league_id, "bob")
        tm.set_team(store, league_id, "red", [alice, bob])
        red, _ = store.upsert_bot(league_id, "red", origin="submit", spec="random")
        tm.set_team(store, league_id, "blue", [alice, bob])
        assert store.bot(red.id).status == "retired"  # no member is left to stand for it
        assert "no members" in (store.bot(red.id).status_reason or "")
        assert tm.team_name_taken(store, league_id, "red")
    p = run(tmp_path, "accounts", "add", "--league", "l.toml", "red")
    assert p.returncode == 2 and "team's name" in p.stderr, p.stderr


def test_a_new_team_may_not_take_the_name_of_a_bot_the_league_has(tmp_path):
    """A bot entered with `arena submit` (no account): a team of its name would take over its versions and games."""
    from leaderboards import accounts as acc
    with Store.open(tmp_path / "s.sqlite", create=True) as store:
        league_id = store.ensure_league("srv", {}).id
        alice, _ = acc.add_account(store, league_id, "alice")
        store.upsert_bot(league_id, "hero", origin="submit", spec="random")
        with pytest.raises(ConfigError, match="has a bot called 'hero' already"):
            tm.set_team(store, league_id, "hero", [alice])
        tm.set_team(store, league_id, "red", [alice])
        store.upsert_bot(league_id, "red", origin="submit", spec="random")
        assert tm.set_team(store, league_id, "red", [alice])[0].name == "red"  # its own bot: run again, fine
