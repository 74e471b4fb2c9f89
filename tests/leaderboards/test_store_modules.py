"""Issue 34 §4: the store's SQL is in modules with one job each, written in one style (functions whose first
parameter is the open store), and ``Store`` is the façade that binds them: every caller writes ``store.games(...)``
whichever module holds the function."""
from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import ModuleType

from leaderboards import bot_rows, decision_rows, fold_rows, game_rows, league_rows, store_views
from leaderboards.store import Store

ROOT = Path(__file__).resolve().parents[2]
ROW_MODULES = (league_rows, bot_rows, game_rows, fold_rows, decision_rows, store_views)
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE)\b")


def _public_functions(module: ModuleType) -> dict[str, object]:
    return {name: f for name, f in vars(module).items()
            if inspect.isfunction(f) and f.__module__ == module.__name__ and not name.startswith("_")
            and name != "content_hash"}  # (a plain helper, not a read or a write of a row)


def test_every_row_function_is_a_method_of_the_store() -> None:
    missing = {f"{m.__name__}.{name}" for m in ROW_MODULES for name, f in _public_functions(m).items()
               if vars(Store).get(name) is not f}
    assert missing == set()


def test_each_row_function_takes_the_store_first() -> None:
    wrong = {f"{m.__name__}.{name}" for m in ROW_MODULES for name, f in _public_functions(m).items()
             if next(iter(inspect.signature(f).parameters)) != "store"}  # type: ignore[arg-type]
    assert wrong == set()


def test_the_facade_holds_no_sql_of_its_own() -> None:
    """store.py opens, checks and closes the connection; its SQL statements live in the row modules and
    migrations.py (a PRAGMA is the connection's own setting)."""
    text = (ROOT / "leaderboards" / "store.py").read_text()
    code = "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))
    body = code.split('"""', 2)[2]  # (after the module docstring)
    assert SQL.findall(body) == []


def test_a_bound_method_is_the_module_function() -> None:
    """Binding keeps the function's own name and docstring (what ``help(store.games)`` shows)."""
    assert Store.games is game_rows.games and Store.games.__doc__ and "schedule order" in Store.games.__doc__
    assert Store.write_fold.__module__ == "leaderboards.fold_rows"
