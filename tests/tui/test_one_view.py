"""Issues 24 §4 and 34 §2: the dashboard, the CLI, exports, the report and the server render one view model
(arena/output/views.py), computed nowhere else: leaderboard rows, bot pages and game lists."""
from __future__ import annotations

import ast
import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from starlette.testclient import TestClient

from arena.league.config import load_config
from arena.output.replays import replay
from arena.output.views import Standing, bot_facts, bot_standing, leaderboard, percentile, result_text, with_elo
from arena.server.app import create_app
from arena.server.site import Site
from arena.tui.data import LeaderRow, StoreReader
from leaderboards.ratings import ALL
from tests.leaderboards.support import arena
from tests.tui.storefix import Fixture

ROOT = Path(__file__).resolve().parents[2]

ROW_MACHINERY = {"leaderboard_order", "BotRating"}
"""What builds leaderboard rows from ratings (ordering, the prior rating): arena.output.views' job only."""


def test_the_dashboard_and_the_cli_show_the_same_typed_rows(fixture_store: Fixture) -> None:
    store, league = fixture_store.store, fixture_store.demo
    reader = StoreReader(fixture_store.path)
    snap = reader.poll(None, ALL)
    reader.close()
    assert snap is not None
    board = leaderboard(store, league, ALL, h2h=True)  # what `arena leaderboard --json --h2h` prints
    # the dashboard's rows are the CLI's Standing rows (their batch Elo included), with the trend on top
    assert all(type(r) is LeaderRow and isinstance(r, Standing) for r in snap.leaderboard)
    assert [r.standing() for r in snap.leaderboard] == list(board.rows) and len(board.rows) == 4
    assert all(r.fitted for r in snap.leaderboard)
    # its Elo cells are the CLI's fit of the same rows
    fitted = with_elo(board.rows, store.outcomes(league.id, ALL))
    assert [(r.elo, r.elo_low, r.elo_high, r.group) for r in snap.leaderboard] == \
        [(f.elo, f.elo_low, f.elo_high, f.group) for f in fitted]
    # and its head-to-head counts are the CLI's cells
    assert board.cells is not None and board.cells
    assert {(c.bot_id, c.opponent_id): (c.wins, c.draws, c.losses) for c in board.cells if c.games} == \
        {pair: wdl for pair, wdl in snap.h2h.items() if sum(wdl)}


def _names(path: Path) -> set[str]:
    """Every name a module uses or imports (``a.b`` gives ``b`` too)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            out.update(a.name for a in node.names)
            out.add(node.module or "")
    return out


def test_no_front_end_builds_leaderboard_rows_itself() -> None:
    """The CLI commands, the dashboard and the web server order and fill rows only through arena.output.views."""
    fronts = [p for sub in ("arena/commands", "arena/tui", "arena/server") for p in sorted((ROOT / sub).glob("*.py"))]
    assert len(fronts) > 10
    offenders = {str(p.relative_to(ROOT)): sorted(_names(p) & (ROW_MACHINERY | {"leaderboards.standings"}))
                 for p in fronts}
    assert {p: bad for p, bad in offenders.items() if bad} == {}


def test_one_percentile_for_every_screen() -> None:
    """The dashboard had its own interpolating percentile: for move times [0.1, 0.2, 0.3, 1.0] its p90 was 0.79 while
    exports, the report and `arena match` said 1.0. One rule now (nearest rank, arena.output.views.percentile), and no
    other module defines one."""
    import ast
    from pathlib import Path

    from arena.output.views import percentile
    root = Path(__file__).resolve().parents[2] / "arena"
    defined = [str(p.relative_to(root)) for p in root.rglob("*.py")
               if any(isinstance(n, ast.FunctionDef) and n.name == "percentile"
                      for n in ast.walk(ast.parse(p.read_text())))]
    assert defined == ["output/views.py"], defined
    assert percentile([0.1, 0.2, 0.3, 1.0], 90) == 1.0


def test_one_verdict_for_every_screen(fixture_store: Fixture) -> None:
    """The dashboard's games said ``greedy won`` by a rule of their own beside the report's ``greedy won: greedy +1,
    random -1``; both are the view model's verdict now."""
    from arena.output.views import result_text, verdict
    from arena.tui.data import game_row
    store, league = fixture_store.store, fixture_store.demo
    labels = {b.id: b.label for b in store.bots(league.id)}
    games = store.games(league.id)
    assert {verdict(g.returns, g.players).split()[-1] for g in games} >= {"won"}
    for g in games:
        row = game_row(g, labels, moves=len(g.history))  # (the dashboard names bots by their labels)
        assert row.result == verdict(g.returns, list(row.players))
        assert result_text(g).startswith(verdict(g.returns, g.players) + ": ")


def test_one_batch_elo_fit_for_every_screen(fixture_store: Fixture) -> None:
    """The batch Elo was fitted in three places (the CLI's rows, the dashboard's table, the dashboard's bot detail);
    one function fits it now (arena.output.views.batch_elo), and the three agree."""
    store, league = fixture_store.store, fixture_store.demo
    board = leaderboard(store, league, ALL)
    reader = StoreReader(fixture_store.path)
    try:
        snap = reader.poll(None, ALL)
        assert snap is not None
        for row, cli in zip(snap.leaderboard, board.rows):
            assert (row.elo, row.elo_low, row.elo_high, row.group) == (cli.elo, cli.elo_low, cli.elo_high, cli.group)
        top = board.rows[0]
        detail = reader.bot_detail(top.bot_id, ALL)
        assert detail.elo is not None and detail.elo["elo"] == top.elo and detail.elo["group"] == top.group
    finally:
        reader.close()
    fitters = [str(p.relative_to(ROOT)) for p in (ROOT / "arena").rglob("*.py")
               if "leaderboards.elo" in p.read_text() and "annotate" in _names(p)]
    assert fitters == ["arena/output/views.py"], fitters


def test_bot_pages_show_one_row_one_failure_list_and_one_percentile(fixture_store: Fixture) -> None:
    """Issue 34 §2: a bot's page in the dashboard (its detail screen) and in the report and on `arena serve` (both
    from views.bot_standing and views.bot_facts) show the same Standing, the same failures (game, reason, move) and
    move-time percentiles by the one nearest-rank rule, read from the same games."""
    store, league = fixture_store.store, fixture_store.demo
    facts, _ = bot_facts(store.iter_games(league.id))
    reader = StoreReader(fixture_store.path)
    try:
        failing = 0
        for bot in store.bots(league.id):
            detail = reader.bot_detail(bot.id, ALL)
            page = bot_standing(store, league.id, bot.id)
            assert page is not None and detail.rating is not None
            row = page[0]
            assert replace(detail.rating.standing(), rank=row.rank) == row  # (the page ranks among retired bots too)
            listed = facts[bot.id].failures
            failing += bool(listed)
            assert [f[:3] for f in detail.failures] == [(f.id, f.reason, f.move) for f in reversed(listed)]
            times = sorted(wall for g in store.iter_games(league.id, bot_id=bot.id)
                           for s, wall in zip(g.move_seats, g.wall_times) if g.seats[s] == bot.id)
            assert detail.percentiles == {**{f"p{q}": percentile(times, q) for q in (50, 90, 99)}, "max": times[-1]}
        assert failing == 1  # (the fixture's one bot with timeouts: the comparison is not of empty lists only)
    finally:
        reader.close()


def test_game_lists_say_one_result(fixture_store: Fixture) -> None:
    """Issue 34 §2: a game's result is one text (views.result_text) in the report's game list, `arena export games`,
    the replay viewer (the report's and the server's) and `arena replay`'s list; the dashboard's narrow column
    shows its verdict, the part before the colon."""
    store, league = fixture_store.store, fixture_store.demo
    games = {g.id: g for g in store.games(league.id)}
    expected = {i: result_text(g) for i, g in games.items()}
    assert len(expected) == 48 and any("(timeout)" in text for text in expected.values())
    _, listing = bot_facts(store.iter_games(league.id))
    assert {e.id: e.result for e in listing} == expected
    assert {i: (replay(g, {}) or {}).get("result") for i, g in games.items()} == expected
    here = fixture_store.path.parent
    export = arena(here, "export", "games", "--db", str(fixture_store.path), "--league", "demo", "--json")
    assert export.returncode == 0, export.stderr
    assert {r["id"]: r["result"] for r in json.loads(export.stdout)["games"]} == expected
    listed = arena(here, "replay", "--db", str(fixture_store.path), "--league", "demo", "--last", "100")
    assert listed.returncode == 0, listed.stderr
    assert {int(line.split()[0]): line.split(None, 2)[2] for line in listed.stdout.splitlines()} == expected
    reader = StoreReader(fixture_store.path)
    try:
        snap = reader.poll("demo", ALL)
    finally:
        reader.close()
    assert snap is not None and len(snap.games) == 48
    assert {r.id: r.result for r in snap.games} == {i: text.split(":")[0] for i, text in expected.items()}


def test_the_server_s_bot_page_shows_the_same_row_and_results(fixture_store: Fixture, tmp_path: Path) -> None:
    """Issue 34 §2: `arena serve`'s public bot page (in process, over the fixture's store) says the dashboard's
    numbers: the row's record and failure counts, and one result word per game whose counts are the row's."""
    store, league = fixture_store.store, fixture_store.demo
    (tmp_path / "l.toml").write_text(f'name = "demo"\ngames = ["nim", "doublestep"]\n'
                                     f'database = "{fixture_store.path}"\nbots = ["random", "uct(iterations=100)"]\n')
    site = Site(db=fixture_store.path, config=load_config(tmp_path / "l.toml"))
    reader = StoreReader(fixture_store.path)
    try:
        with TestClient(create_app(site), follow_redirects=False) as client:
            for bot in store.bots(league.id):
                row = reader.bot_detail(bot.id, ALL).rating
                assert row is not None
                page = client.get(f"/bots/{bot.id}")
                assert page.status_code == 200, page.text[:300]
                assert (f"{row.games} games: {row.wins} won, {row.draws} drawn, {row.losses} lost; failures: "
                        f"{row.fails_text()}") in page.text
                words = Counter(re.findall(r'<td class="(won|lost|draw)">', page.text))
                assert (words["won"], words["draw"], words["lost"]) == (row.wins, row.draws, row.losses)
    finally:
        reader.close()
