"""What `arena serve`'s organiser page and a bot's page read, counted (never timed): /admin reads no snapshot
and no bot's files however many versions a student uploads, and compares only the pairs it has not seen; a bot's
page reads what it shows, the same work in a league of 100 games as in one of 1,500. The application runs in this
process (uvicorn in a thread, a real store file, urllib), so its store reads can be counted here."""
from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from arena.bench.scale_dashboard import make_record, playouts
from arena.bench.server_pages import Served, organiser_client
from arena.league.config import load_config
from arena.submissions.snapshot import files_digest, single
from leaderboards import accounts as acc
from leaderboards import bot_rows, ledger
from leaderboards.schema import TEAMS_SCHEMA
from leaderboards.store import Store

pytestmark = pytest.mark.xdist_group("server")


class Work:
    """Counts, while active, the store's snapshot reads, the bot source text loaded with bot rows, and SQLite's
    virtual machine steps on every connection the application opens (SQL work, whatever the wall clock)."""

    STEP = 100

    def __init__(self) -> None:
        self.snapshots = self.source = self.steps = 0

    @contextmanager
    def counting(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[Work]:
        from arena.server.app import Site
        snapshot, bot, store_of = Store.snapshot, bot_rows._bot, Site.store

        def counted_snapshot(store: Store, bot_id: int) -> Any:
            self.snapshots += 1
            return snapshot(store, bot_id)

        def counted_bot(row: sqlite3.Row) -> Any:
            made = bot(row)
            self.source += len(made.source or "")
            return made

        def counted_store(site: Site) -> Store:  # (each request's connection, however old)
            store = store_of(site)
            store.conn.set_progress_handler(self._step, self.STEP)
            return store
        with monkeypatch.context() as m:
            m.setattr(Store, "snapshot", counted_snapshot)
            m.setattr(bot_rows, "_bot", counted_bot)  # (every bot row the store decodes)
            m.setattr(Site, "store", counted_store)
            yield self

    def _step(self) -> int:
        self.steps += self.STEP
        return 0


def league_file(work: Path, db: Path) -> Any:
    (work / "l.toml").write_text(f'name = "pages"\ngames = ["nim"]\nbots = ["random", "greedy"]\n'
                                 f'database = "{db.name}"\n')
    return load_config(work / "l.toml")


def enter(store: Store, league_id: int, name: str, text: str) -> int:
    """An upload of ``name``'s account, accepted as the validator accepts one; returns its submission id."""
    account = acc.account_named(store, league_id, name) or acc.add_account(store, league_id, name)[0]
    snap = single("bot.py", text)
    sid = acc.add_submission(store, league_id, account.id, name, "bot.py", snap)
    bot, _ = store.upsert_bot(league_id, name, origin="submit", snapshot=snap, reactivate=True)
    acc.finish(store, sid, "accepted", bot_id=bot.id)
    return sid


def big_bot(rng: random.Random, lines: int = 3000) -> str:
    return "\n".join(f"T{i} = {rng.randrange(10 ** 12)}" for i in range(lines)) + "\nclass Bot:\n    pass\n"


@pytest.fixture
def admin_site(tmp_path, monkeypatch):
    """A league with five students of one version and a busy one; yields a function that gives the busy student
    ``n`` versions in all and returns the organiser's client."""
    db = tmp_path / "pages.sqlite"
    rng = random.Random(3)
    with Store.open(db, create=True) as store:
        league_id = store.ensure_league("pages", {"games": ["nim"]}).id
        acc.add_account(store, league_id, "prof", organiser=True)
        for i in range(5):
            enter(store, league_id, f"s{i}", big_bot(rng))
    config = league_file(tmp_path, db)
    clients: list[Served] = []

    def versions(n: int) -> Served:
        with Store.open(db) as store:
            league_id = store.find_league("pages").id
            have = len([b for b in store.bots(league_id, source=False) if b.name == "busy"])
            for _ in range(n - have):
                enter(store, league_id, "busy", big_bot(rng))
        if not clients:
            clients.append(organiser_client(config))
        return clients[0]
    yield versions
    for c in clients:
        c.close()


def test_admin_reads_no_snapshot_and_no_files_however_many_versions(admin_site, monkeypatch):
    seen: dict[int, Work] = {}
    for n in (2, 20):
        client = admin_site(n)
        assert client.request("/admin")[0] == 200  # (the first view after new versions compares their pairs)
        with Work().counting(monkeypatch) as work:
            code, _, text = client.request("/admin")
        assert code == 200 and "busy" in text
        seen[n] = work
    for n, work in seen.items():
        assert work.snapshots == 0, (n, work.snapshots)  # (before: every version's snapshot, for every bot)
        assert work.source == 0, (n, work.source)  # (before: every version's entry file, ~60 kB each)
    print("admin", {n: (w.snapshots, w.source, w.steps) for n, w in seen.items()})
    assert seen[20].steps < 1.5 * seen[2].steps + 20_000, (seen[2].steps, seen[20].steps)


def test_admin_compares_a_pair_of_files_once(admin_site):
    from arena.server import similarity
    client = admin_site(2)
    client.request("/admin")
    before = similarity_count = _compared(client)
    assert client.request("/admin")[0] == 200
    assert _compared(client) == before  # a repeat view compares nothing
    admin_site(3)  # one new version: compared with the five other students' current bots, once
    client.request("/admin")
    client.request("/admin")
    assert _compared(client) - similarity_count == 5
    assert similarity.NEAR > 0


def _compared(client: Served) -> int:
    return client.site.near.compared


def test_identical_bots_are_found_by_their_stored_fingerprint(tmp_path):
    """Twins across accounts (the same file under another name too), by one indexed lookup."""
    db = tmp_path / "twins.sqlite"
    with Store.open(db, create=True) as store:
        league_id = store.ensure_league("pages", {"games": ["nim"]}).id
        enter(store, league_id, "alice", "class Bot: pass\n")
        enter(store, league_id, "alice", "class Bot: pass  # v2\n")
        account = acc.add_account(store, league_id, "bob")[0]
        snap = single("renamed.py", "class Bot: pass\n")  # alice's first version's text, under another name
        store.upsert_bot(league_id, "bob", origin="submit", snapshot=snap)
        bots = {b.id: b for b in store.bots(league_id)}
        pairs = {(bots[a].label, bots[b].label) for a, b in store.same_files(league_id)}
        assert pairs == {("bob", "alice")}, pairs
        assert acc.add_submission(store, league_id, account.id, "bob", "renamed.py", snap)
        stored = store.conn.execute("SELECT files_hash FROM submissions").fetchall()
        assert stored[-1][0] == files_digest(snap)
        plan = " ".join(str(r[3]) for r in store.conn.execute(
            "EXPLAIN QUERY PLAN SELECT a.id, b.id FROM bots a JOIN bots b ON b.league_id = a.league_id AND "
            "b.files_hash = a.files_hash AND b.name != a.name WHERE a.league_id=1"))
        assert "bots_files" in plan, plan


def test_a_schema_5_store_gets_every_fingerprint(tmp_path):
    path = tmp_path / "old.sqlite"
    with Store.open(path, create=True) as store:
        league_id = store.ensure_league("pages", {"games": ["nim"]}).id
        enter(store, league_id, "alice", "class Bot: pass\n")
        store.upsert_bot(league_id, "random", origin="config", spec="random")
    conn = sqlite3.connect(path)
    for kind, name in re.findall(r"CREATE (TABLE|INDEX) IF NOT EXISTS (\w+)", TEAMS_SCHEMA)[::-1]:  # (schema 7's)
        conn.execute(f"DROP {kind} {name}")
    conn.execute("DROP INDEX bots_files")
    conn.execute("ALTER TABLE bots DROP COLUMN files_hash")
    conn.execute("ALTER TABLE submissions DROP COLUMN files_hash")
    conn.execute("UPDATE meta SET value='5' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version == 7
        want = files_digest(single("bot.py", "class Bot: pass\n"))
        assert [tuple(r) for r in store.conn.execute("SELECT name, files_hash FROM bots ORDER BY id")] == \
            [("alice", want), ("random", None)]
        assert [tuple(r) for r in store.conn.execute("SELECT files_hash FROM submissions")] == [(want,)]


# -- a bot's page -----------------------------------------------------------------------------------------
def league_of(work: Path, others: int) -> tuple[Any, int]:
    """A rated league where bot ``me`` has 20 games (against ``b``) and bots b..f play ``others`` more among
    themselves; returns (the league file's config, me's id)."""
    db = work / "bots.sqlite"
    rng = random.Random(5)
    with ledger.open_store(db, create=True) as store:
        league = store.ensure_league("pages", {"games": ["nim"], "games_per_pairing": 2, "seed": 1})
        ids = {n: store.upsert_bot(league.id, n, origin="config", spec="random")[0].id for n in "me b c d e f".split()}
        samples = playouts("nim", 1, 16, rng)
        pairs = [("me", "b")] * 20 + [tuple(rng.sample("bcdef", 2)) for _ in range(others)]
        store.record_games(league.id, [(f"{i:06d}|nim|{a}.{b}|0", "nim", i, [ids[a], ids[b]],
                                        make_record(rng.choice(samples), [a, b], rng))
                                       for i, (a, b) in enumerate(pairs)])
        ledger.rate_pending(store, league.id)
        acc.add_account(store, league.id, "prof", organiser=True)
    (work / "l.toml").write_text(f'name = "pages"\ngames = ["nim"]\nbots = ["random", "greedy"]\n'
                                 f'database = "{db.name}"\n')
    return load_config(work / "l.toml"), ids["me"]


def test_a_bots_page_reads_what_it_shows_not_the_leagues_history(tmp_path, monkeypatch):
    steps = {}
    for others in (100, 1500):
        work = tmp_path / str(others)
        work.mkdir()
        config, me = league_of(work, others)
        client = organiser_client(config)
        try:
            code, _, text = client.request(f"/bots/{me}")
            assert code == 200 and "20 games" in text, text[-3000:]
            with Work().counting(monkeypatch) as counted:
                assert client.request(f"/bots/{me}")[0] == 200
            steps[others] = counted.steps
        finally:
            client.close()
    print("bot page SQL steps", steps)
    assert steps[1500] < 1.3 * steps[100], steps  # (before: the whole league's outcomes, history and pairings)


def test_admin_reads_a_page_of_submissions_and_counts_the_rest(tmp_path, monkeypatch):
    """/admin lists the newest submissions and each account's count: it loads no more rows than it lists, however
    many uploads the league has had (each with its traceback)."""
    db = tmp_path / "subs.sqlite"
    with Store.open(db, create=True) as store:
        league_id = store.ensure_league("pages", {"games": ["nim"]}).id
        acc.add_account(store, league_id, "prof", organiser=True)
        people = [acc.add_account(store, league_id, f"s{i}")[0] for i in range(5)]
        with store.transaction():
            for n in range(1500):
                who = people[n % 5]
                sid = acc.add_submission(store, league_id, who.id, who.name, "bot.py", single("bot.py", f"x = {n}\n"))
                acc.finish(store, sid, "refused", reason="crash", detail="Traceback ...\n" * 80)
    client = organiser_client(league_file(tmp_path, db))
    loaded = [0]
    made = acc._submission

    def counted(row: tuple) -> acc.Submission:
        loaded[0] += 1
        return made(row)
    try:
        with monkeypatch.context() as m:
            m.setattr(acc, "_submission", counted)
            code, _, text = client.request("/admin")
        assert code == 200 and text.count("/admin/submissions/") <= 500
        assert loaded[0] <= 500, loaded[0]  # (before: all 1,500, tracebacks and all)
        assert "<td>300</td>" in text  # each account's count, all of its uploads
    finally:
        client.close()


def test_a_bots_games_are_paged_newest_first(tmp_path):
    """A bot's page lists its newest 50 games and links the next 50 older ones, page after page, each read with
    SQL LIMIT: every game of the bot can be reached, none twice."""
    import re
    config, me = league_of(tmp_path, 10)  # me: 20 games
    with Store.open(config.database) as store:
        league_id = store.find_league("pages").id
        b = store.current_bot(league_id, "b")
        rng = random.Random(9)
        samples = playouts("nim", 1, 4, rng)
        store.record_games(league_id, [(f"9{i:05d}|nim|me.b|0", "nim", 900 + i, [me, b.id],
                                        make_record(rng.choice(samples), ["me", "b"], rng)) for i in range(100)])
        mine = {g.id for g in store.games(league_id, bot_id=me)}
    assert len(mine) == 120
    client = organiser_client(config)
    try:
        seen: list[int] = []
        path, pages = f"/bots/{me}", 0
        while path:
            code, _, text = client.request(path)
            assert code == 200, path
            listed = [int(x) for x in re.findall(r'<a href="/games/(\d+)"', text.split('id="games"', 1)[-1])]
            seen += listed
            pages += 1
            link = re.search(r'<a href="(/bots/\d+\?before=\d+)" id="older-games">', text)
            path = link.group(1).replace("&amp;", "&") if link else ""
        assert pages == 3 and seen == sorted(mine, reverse=True), (pages, seen[:5])
        assert client.request(f"/bots/{me}?before=abc")[0] == 200  # (not an id: the first page)
    finally:
        client.close()


def test_admin_audits_the_league_again_only_once_games_were_added(tmp_path, monkeypatch):
    """/admin's "Pairs to look at" is `arena audit` (a fit per pair of bots): a repeat view fits nothing, and new
    games are audited at most once every AUDIT_EVERY seconds."""
    from arena.server import caches
    config, _ = league_of(tmp_path, 100)
    calls: list[int] = []
    real = caches.league_audit
    monkeypatch.setattr(caches, "league_audit", lambda *a, **k: calls.append(1) or real(*a, **k))
    client = organiser_client(config)
    try:
        for _ in range(3):
            code, _, text = client.request("/admin")
            assert code == 200 and "as of 120 games" in text and 'id="audit-flags"' in text, text[-3000:]
        assert len(calls) == 1
        with ledger.open_store(tmp_path / "bots.sqlite") as store:
            league = store.find_league("pages")
            ids = {b.name: b.id for b in store.bots(league.id)}
            rng = random.Random(6)
            store.record_games(league.id, [("900000|nim|me.c|0", "nim", 900, [ids["me"], ids["c"]],
                                            make_record(rng.choice(playouts("nim", 1, 4, rng)), ["me", "c"], rng))])
        assert "as of 120 games" in client.request("/admin")[2] and len(calls) == 1  # (within AUDIT_EVERY)
        monkeypatch.setattr(caches, "AUDIT_EVERY", 0.0)
        assert "as of 121 games" in client.request("/admin")[2] and len(calls) == 2
    finally:
        client.close()


def test_the_leaderboard_is_made_once_until_the_standings_change(tmp_path, monkeypatch):
    """/ and /api/leaderboard fit a batch Elo over every game: made once for every viewer, made again when a game
    is rated or a bot's state changes (before: a fit for every view, ~0.45 s at 20,000 games)."""
    import json

    from arena.output import views
    config, me = league_of(tmp_path, 300)
    with Store.open(config.database, readonly=True) as store:
        expected = json.loads(json.dumps(views.document(store, store.find_league("pages"))))
    fits: list[int] = []
    fit = views.batch_elo
    monkeypatch.setattr(views, "batch_elo", lambda *a, **k: fits.append(1) or fit(*a, **k))
    client = organiser_client(config)
    try:
        for path in ("/", "/", "/api/leaderboard"):
            assert client.request(path)[0] == 200
        assert json.loads(client.request("/api/leaderboard")[2]) == expected  # the document as before
        assert len(fits) == 1
        with Store.open(config.database) as store:
            league_id = store.find_league("pages").id
            b = store.current_bot(league_id, "b")
            rng = random.Random(11)
            store.record_games(league_id, [("999999|nim|me.b|0", "nim", 999, [me, b.id],
                                            make_record(playouts("nim", 1, 1, rng)[0], ["me", "b"], rng))])
            assert client.request("/")[0] == 200
            made = len(fits)  # the game stored, not yet rated: 1 or 2 fits so far, both right
            ledger.rate_pending(store, league_id)
            assert client.request("/")[0] == 200 and client.request("/")[0] == 200
            assert len(fits) == made + 1
            with store.transaction():
                store.conn.execute("UPDATE bots SET status='probation' WHERE id=?", (b.id,))
            assert client.request("/")[0] == 200 and len(fits) == made + 2
    finally:
        client.close()
