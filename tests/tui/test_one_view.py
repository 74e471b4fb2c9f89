"""Issue 24 §4: the dashboard and the CLI render one view model (arena/output/views.py), computed nowhere else."""
from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

from arena.output.views import leaderboard, with_elo
from arena.tui.data import LeaderRow, StoreReader
from leaderboards.ratings import ALL
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
    # the dashboard's rows are the CLI's Standing rows, shown for the terminal, with its trend and Elo on top
    dashboard = [replace(r, trend=(), elo=None) for r in snap.leaderboard]
    assert dashboard == [LeaderRow.of(r) for r in board.rows]
    assert [r.bot_id for r in board.rows] == [r.bot_id for r in snap.leaderboard] and len(board.rows) == 4
    # its Elo cells are the CLI's fit of the same rows
    fitted = with_elo(board.rows, store.outcomes(league.id, ALL))
    assert [r.elo for r in snap.leaderboard] == [(f.elo, f.elo_low, f.elo_high, f.group) for f in fitted]
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
            assert row.elo == (cli.elo, cli.elo_low, cli.elo_high, cli.group)
        top = board.rows[0]
        detail = reader.bot_detail(top.bot_id, ALL)
        assert detail.elo is not None and detail.elo["elo"] == top.elo and detail.elo["group"] == top.group
    finally:
        reader.close()
    fitters = [str(p.relative_to(ROOT)) for p in (ROOT / "arena").rglob("*.py")
               if "leaderboards.elo" in p.read_text() and "annotate" in _names(p)]
    assert fitters == ["arena/output/views.py"], fitters
