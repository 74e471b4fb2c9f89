"""The store stores (issue 24, section 2): what a stored game means for a league (failure runs, probation, the
rating fold, the schema 1 history rebuild) is the ledger's, the writer's one call; the store reads and writes rows."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from arena.league import runner as league_runner
from arena.league.config import load_config
from leaderboards import ledger
from leaderboards.store import Store
from tests.leaderboards.support import write

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):  # TYPE_CHECKING ones included
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(f"{node.module}.{a.name}" for a in node.names)
            names.add(node.module or "")
    return names


def test_the_store_imports_no_policy() -> None:
    imported = _imports(ROOT / "leaderboards" / "store.py")
    policy = {"leaderboards.rating_fold", "leaderboards.probation", "leaderboards.ledger",
              "leaderboards.ratings.failure_reasons", "leaderboards.ratings.Rater"}
    assert not any(name in policy or name.startswith(tuple(p + "." for p in policy)) for name in imported), \
        sorted(n for n in imported if n.startswith("leaderboards"))
    for method in ("record_game", "rate_pending", "recompute_ratings"):
        assert not hasattr(Store, method), f"Store.{method}: the ledger's"


LEAGUE = """
name = "ledgered"
games = ["nim"]
games_per_pairing = 2
database = "l.sqlite"
[[bots]]
name = "a"
spec = "random"
[[bots]]
name = "b"
spec = "greedy"
"""


def test_the_league_writer_stores_every_game_through_the_ledger(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = ledger.record_game

    def counting(store: Store, league_id: int, key: str, *args: Any, **kwargs: Any) -> int | None:
        calls.append(key)
        return original(store, league_id, key, *args, **kwargs)

    monkeypatch.setattr(ledger, "record_game", counting)
    config = load_config(write(tmp_path / "league.toml", LEAGUE))
    summary = league_runner.run_league(config, concurrency=1)
    assert summary.played == 2 and len(calls) == 2 and not summary.errors
    with Store.open(tmp_path / "l.sqlite", readonly=True) as store:
        assert sorted(g.schedule_key for g in store.games(1)) == sorted(calls)
        assert all(g.rated for g in store.games(1))  # and folded by the ledger
