"""Every import inside a function says why it is there and not at the top of its module.

A function-level import hides a dependency and costs a lookup per call, so it is kept only for a reason a reader
can check: ``# start-up:`` (what loading it early would cost, and who would pay) or ``# optional:`` (the extra it
needs). The comment sits on the import or on the comment lines right above a run of imports (one reason covers
the run). Anything else moves to the top of the module.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("games", "bots", "leaderboards", "arena")
WHY = re.compile(r"#\s*(start-up|optional):")


def _comments(text: str) -> dict[int, str]:
    return {t.start[0]: t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type == tokenize.COMMENT}


def _runs(tree: ast.AST) -> list[list[ast.stmt]]:
    """Runs of adjacent import statements inside function bodies (at any depth)."""
    runs: list[list[ast.stmt]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for name in ("body", "orelse", "finalbody"):
            run: list[ast.stmt] = []
            statements = getattr(node, name, None)
            for statement in statements if isinstance(statements, list) else []:
                if in_function and isinstance(statement, (ast.Import, ast.ImportFrom)):
                    run.append(statement)
                    continue
                if run:
                    runs.append(run)
                run = []
            if run:
                runs.append(run)
        for child in ast.iter_child_nodes(node):
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return runs


def unexplained(path: Path) -> list[str]:
    """``path:line: import`` for each run of function-level imports that gives no reason."""
    text = path.read_text()
    comments = _comments(text)
    lines = text.splitlines()
    found = []
    for run in _runs(ast.parse(text)):
        first, last = run[0].lineno, run[-1].end_lineno or run[-1].lineno
        above = first - 1
        while above >= 1 and lines[above - 1].strip().startswith("#"):  # the comment block right above the run
            above -= 1
        if not any(WHY.search(comments.get(n, "")) for n in range(above + 1, last + 1)):
            found.append(f"{path.relative_to(ROOT) if ROOT in path.parents else path}:{first}: "
                         f"{lines[first - 1].strip()}")
    return found


def test_every_function_level_import_says_why() -> None:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found += unexplained(path)
    assert not found, ("function-level imports without '# start-up:' or '# optional:' (say why, or move them to "
                       "the top):\n" + "\n".join(found))


def test_the_check_sees_an_import_without_a_reason(tmp_path: Path) -> None:
    """The checker itself: a bare lazy import is caught, at any depth; a reason on it or above its run is not."""
    module = tmp_path / "m.py"
    module.write_text("import os\n\n"
                      "def f():\n    if os:\n        import json\n    return json\n\n"
                      "def g():\n    # start-up: rich is heavy\n    # (a second line)\n"
                      "    import rich\n    import sys\n"
                      "    return rich, sys\n\n"
                      "def h():\n    import pyspiel  # optional: open_spiel\n    return pyspiel\n\n"
                      "def k():\n    import json  # only sometimes\n    return json\n")
    assert [line.split(":", 1)[1] for line in unexplained(module)] == ["5: import json",
                                                                       "20: import json  # only sometimes"]
