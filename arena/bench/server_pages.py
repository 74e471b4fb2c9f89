"""How long ``arena serve``'s organiser page (``/admin``), a bot's page (``/bots/ID``) and the leaderboard (``/``,
views after the first) take, and how much they read, as a league grows: more versions of one student's bot (each a
distinct ~1 MB file), more games.

In process (the real application served by uvicorn in a thread, a real store file, urllib), so the figures are the
pages' own work, without the network or a league playing meanwhile. A store per case: ``synthetic_store``'s
built-in bots and games (rated for real), plus students' submitted bots entered as the validator enters them.

    python -m arena.bench.server_pages [--repeats 5] [--case VERSIONS:GAMES ...]
"""
from __future__ import annotations

import argparse
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.submissions.snapshot import single

CASES = ("2:300", "20:300", "2:1500", "20:1500")
"""VERSIONS:GAMES: versions of one student's bot and games of the league."""
STUDENTS = 10
"""Students with one version each (beside the one with many)."""
FILE_KB = 1000
"""Size of each version of the busy student's bot."""


def _big_bot(rng: random.Random, kb: int) -> bytes:
    table = "\n".join(f"T{i} = {rng.randrange(10 ** 12)}" for i in range(kb * 1024 // 20))
    return (f"{table}\nimport random\nclass Bot:\n    def __init__(self, game, seat, seed):\n"
            "        self.rng = random.Random(seed)\n    def step(self, state, limit):\n"
            "        return self.rng.choice(state.legal_actions())\n").encode()


def make_site(work: Path, versions: int, games: int) -> tuple[Any, int]:
    """A store with ``games`` rated games of 12 built-in bots, one student with ``versions`` versions and
    :data:`STUDENTS` more with one; returns (the league file's config, a built-in bot's id)."""
    # start-up: the synthetic store's builder only when measuring
    from arena.bench.scale_dashboard import LEAGUE, synthetic_store
    from arena.league.config import load_config
    from leaderboards import accounts as acc
    from leaderboards.store import Store

    db = work / "pages.sqlite"
    synthetic_store(db, bots=12, games=games, game="nim")
    (work / "l.toml").write_text(f'name = "{LEAGUE}"\ngames = ["nim"]\nbots = ["random", "greedy"]\n'
                                 f'database = "{db.name}"\n')
    rng = random.Random(1)
    with Store.open(db) as store:
        league = store.find_league(LEAGUE)
        acc.add_account(store, league.id, "prof", organiser=True)
        for name, n in [("busy", versions)] + [(f"s{i:02d}", 1) for i in range(STUDENTS)]:
            account, _ = acc.add_account(store, league.id, name)
            for _ in range(n):
                snap = single("bot.py", _big_bot(rng, FILE_KB if name == "busy" else 20))
                sid = acc.add_submission(store, league.id, account.id, name, "bot.py", snap)
                bot, _ = store.upsert_bot(league.id, name, origin="submit", snapshot=snap, reactivate=True)
                acc.finish(store, sid, "accepted", bot_id=bot.id)
        builtin = store.current_bot(league.id, "bot000")
        assert builtin is not None
        return load_config(work / "l.toml"), builtin.id


class Served:
    """The application on a free port of 127.0.0.1, served by uvicorn in a thread of this process (so that
    what a page does can be counted here); a client with its cookies, no redirects followed."""

    site: Any = None
    """The application's :class:`arena.server.app.Site`, when the caller keeps it here."""

    def __init__(self, app: Any) -> None:
        import socket  # start-up: only for the HTTP measurement
        import threading
        import urllib.request

        import uvicorn
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.listener]}, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: Any, **kwargs: Any) -> None:
                return None
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(), NoRedirect())

    def request(self, path: str, data: dict[str, str] | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        """(status, headers (lower-case names), body) of a GET, or of a form POST when ``data`` is given."""
        import urllib.error  # start-up: only for the HTTP measurement
        import urllib.parse
        import urllib.request
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        req = urllib.request.Request(self.base + path, data=body, headers=headers or {})
        try:
            with self.opener.open(req, timeout=120) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode(errors="replace")

    def login(self, name: str, token: str) -> int:
        csrf = re.search(r'name="login_csrf" value="([^"]+)"', self.request("/login")[2])
        assert csrf is not None
        return self.request("/login", {"login_csrf": csrf.group(1), "name": name, "token": token})[0]

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.listener.close()


def organiser_client(config: Any) -> Served:
    """The application served in this process, logged in as ``prof`` (through the login form)."""
    from arena.server.app import Site, create_app  # start-up: the web stack only when measuring
    from leaderboards import accounts as acc
    from leaderboards.store import Store

    assert config.database is not None
    with Store.open(config.database) as store:  # a fresh token for prof (the one made above was not kept)
        league = store.find_league(config.name)
        prof = acc.account_named(store, league.id, "prof")
        assert prof is not None
        token = "bench-" + str(time.time())
        store.conn.execute("UPDATE accounts SET token_hash=? WHERE id=?", (acc.secret_hash(store, token), prof.id))
        store.conn.commit()
    site = Site(db=config.database, config=config)
    client = Served(create_app(site))
    client.site = site
    assert client.login("prof", token) == 303
    return client


def measure(get: Callable[[], Any], repeats: int) -> dict[str, float]:
    """Median and worst seconds of ``repeats`` calls (after one untimed call), and the snapshot reads of one."""
    from leaderboards.store import Store  # start-up: the store only when measuring

    get()
    reads = [0]
    original = Store.snapshot

    def counted(self: Store, bot_id: int) -> Any:
        reads[0] += 1
        return original(self, bot_id)
    Store.snapshot = counted  # type: ignore[assignment]
    try:
        get()
    finally:
        Store.snapshot = original
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        answer = get()
        times.append(time.perf_counter() - t0)
        assert answer[0] == 200, answer[0]
    return {"median_s": statistics.median(times), "max_s": max(times), "snapshot_reads": reads[0]}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--case", action="append", help="VERSIONS:GAMES (repeatable)")
    args = parser.parse_args(argv)
    print(f"{'versions':>8} {'games':>6} | {'/admin median':>13} {'max':>6} {'snap reads':>10} | "
          f"{'/bots/ID median':>15} {'max':>6} | {'/ median':>8} {'max':>6}")
    for case in args.case or CASES:
        versions, games = (int(x) for x in case.split(":"))
        with tempfile.TemporaryDirectory() as tmp:
            config, bot_id = make_site(Path(tmp), versions, games)
            client = organiser_client(config)
            admin = measure(lambda: client.request("/admin"), args.repeats)
            bot = measure(lambda: client.request(f"/bots/{bot_id}"), args.repeats)
            board = measure(lambda: client.request("/"), args.repeats)  # (views after the first: no new game)
            client.close()
            print(f"{versions:>8} {games:>6} | {admin['median_s']:>12.3f}s {admin['max_s']:>5.2f}s "
                  f"{admin['snapshot_reads']:>10} | {bot['median_s']:>14.3f}s {bot['max_s']:>5.2f}s | "
                  f"{board['median_s']:>7.3f}s {board['max_s']:>5.2f}s", flush=True)


if __name__ == "__main__":
    main()
