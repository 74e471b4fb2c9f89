"""The layering of docs/architecture.md, enforced: which package may import which, no import cycles, and docs that
stand on their own.

Every ``import`` of every module of arena's packages counts, function-level ones included (a lazy import is still a
dependency). Imports under ``if TYPE_CHECKING:`` never run, so the layer rules leave them out, but they count for
cycles: two modules that name each other's types are one unit however their imports are written. Cython sources are
read for their ``import``/``cimport`` lines.
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("games", "bots", "leaderboards", "arena")

FOUNDATION = ("arena.errors", "arena.text", "arena.limits", "arena.schema", "arena.results", "arena.chance",
              "arena.snapshot", "arena.comp424_names", "arena.referee.openings")
"""arena's leaf modules: plain types and rules that the store and the sandbox build on (they import only games, the
bot protocol's types and each other). ``arena.results`` is a whole package of them (outcome, records, moves). Those
the store uses sit at arena's top level, in no package above the store (issue 34)."""

SHIMS = ("arena.submissions.snapshot", "arena.adapters.comp424_names")
"""The old names of moved foundation modules, kept for their many importers (each is the moved module itself):
allowed wherever the foundation is, except in the store, which imports the foundation by its own names."""

# module prefix -> the prefixes it may import (its own package is always allowed); the first matching rule applies.
ALLOWED: list[tuple[str, tuple[str, ...]]] = [
    ("games", ("games",)),
    ("bots", ("games", "bots")),
    *[(m, ("games", "bots.base") + FOUNDATION) for m in FOUNDATION + SHIMS],
    ("leaderboards", ("games", "leaderboards") + FOUNDATION),
    ("arena.sandbox", ("games", "bots", "arena.sandbox") + FOUNDATION + SHIMS),
    # the referee plays one game: the bots (in-process, or taken from their files and run in the sandbox) and the
    # foundation, never a league
    ("arena.referee", ("games", "bots", "arena.sandbox", "arena.submissions.take", "arena.referee") + FOUNDATION
     + SHIMS),
    # a submission is taken, validated (one refereed game per seat, a league task) and checked for duplicates
    ("arena.submissions", ("games", "bots", "leaderboards", "arena.sandbox", "arena.referee", "arena.league",
                           "arena.adapters", "arena.submissions") + FOUNDATION),
    # a tournament is worked out from the store's games: its pairings and brackets, never a game played
    ("arena.tournament", ("games", "leaderboards", "arena.league.schedule", "arena.tournament") + FOUNDATION + SHIMS),
    # the view model and its renderings read the store (and a league's stored settings); they never run a game
    ("arena.output", ("games", "bots.base", "leaderboards", "arena.league.config", "arena.tournament",
                      "arena.output") + FOUNDATION + SHIMS),
    ("arena", PACKAGES),
]

# prefix -> the only importers it may have (besides itself): the front ends sit on top of everything.
ONLY_IMPORTED_BY: dict[str, tuple[str, ...]] = {
    "arena.commands": ("arena.cli",),
    "arena.cli": (),
    "arena.tui": ("arena.commands", "arena.bench"),
    "arena.server": ("arena.commands", "arena.bench"),
    "arena.experiments": ("arena.commands", "arena.bench"),
    "arena.bench": ("arena.commands", "arena.experiments"),
    "arena.output": ("arena.commands", "arena.tui", "arena.server", "arena.bench"),
}


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*")):
            if path.suffix not in (".py", ".pyx") or "__pycache__" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imported(name: str, path: Path, *, type_checking: bool = False) -> Iterator[str]:
    """The absolute names ``name`` imports (``from a import b`` gives ``a.b`` and ``a``); with ``type_checking``
    also those under ``if TYPE_CHECKING:``."""
    text = path.read_text()
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    if path.suffix == ".pyx":
        for match in re.finditer(r"^\s*(?:from\s+([\w.]+)\s+c?import|c?import\s+([\w.]+))", text, re.M):
            yield match.group(1) or match.group(2)
        return
    tree = ast.parse(text)
    skip = set() if type_checking else _type_checking_lines(tree)
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            yield from (f"{base}.{alias.name}" for alias in node.names)


def graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    """module -> the project modules it imports (a name resolves to its longest known module); with
    ``type_checking`` the imports under ``if TYPE_CHECKING:`` too."""
    known = modules()
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = set()
        for target in imported(name, path, type_checking=type_checking):
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and not _within(name, target):  # (a package's own __init__ runs first)
                targets.add(target)
        edges[name] = targets
    return edges


def test_every_import_follows_the_layers() -> None:
    wrong = []
    for module, targets in graph().items():
        allowed = next(rule for prefix, rule in ALLOWED if _within(module, prefix))
        own = module.split(".")[0]
        for target in targets:
            if not (_within(target, own) and own != "arena") and not any(_within(target, p) for p in allowed):
                wrong.append(f"{module} imports {target}")
            for prefix, importers in ONLY_IMPORTED_BY.items():
                if _within(target, prefix) and not _within(module, prefix) and \
                        not any(_within(module, p) for p in importers):
                    wrong.append(f"{module} imports {target} (only {', '.join(importers) or 'nothing'} may)")
    assert not wrong, "imports against docs/architecture.md's layers:\n" + "\n".join(sorted(wrong))


def test_no_import_cycles() -> None:
    assert not cycles(graph(type_checking=True)), f"import cycles: {cycles(graph(type_checking=True))}"


def test_the_cycle_check_sees_imports_under_type_checking(tmp_path: Path) -> None:
    """The checker itself: a type-only import back is a cycle (the store and the rating fold once were one)."""
    (tmp_path / "a.py").write_text("from b import g\n")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a import f\n")
    assert "a.f" in set(imported("b", tmp_path / "b.py", type_checking=True))
    assert "a.f" not in set(imported("b", tmp_path / "b.py"))  # (the layer rules still leave it out)
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``edges`` (strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in edges:
        if module not in index:
            visit(module)
    return found


def test_the_layer_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The checker itself: a games module importing arena is caught (lazy or not)."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from arena.bench import Record\n    return Record\n")
    assert "arena.bench.Record" in set(imported("games.bad", bad))


def test_docs_stand_on_their_own() -> None:
    """No link out of the repository (a user's checkout has only the repository)."""
    outside = []
    for doc in sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]:
        for target in re.findall(r"\]\(([^)\s]+)", doc.read_text()):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            resolved = (doc.parent / target.split("#")[0]).resolve()
            if ROOT not in resolved.parents and resolved != ROOT:
                outside.append(f"{doc.relative_to(ROOT)}: {target}")
        for line_number, line in enumerate(doc.read_text().splitlines() if doc.parent.name == "docs" else [], 1):
            if re.search(r"(?<![\w-])(\.\./)?shared/(specs|notes|checks|DESIGN|STYLE)", line):
                outside.append(f"{doc.relative_to(ROOT)}:{line_number}: names a file of the development folder")
    assert not outside, "links outside the repository:\n" + "\n".join(outside)


# The development folder beside the checkout and its contract file: no file of the project may name them (the
# patterns are escaped, so this file does not name them either).
OUTSIDE_NAMES = re.compile(r"DESIGN\.md|\.\./shared\b|/work/s[h]ared\b")
TEXT_SUFFIXES = {".py", ".pyx", ".pxd", ".pyi", ".md", ".toml", ".txt", ".cfg", ".css", ".tcss", ".js", ".json",
                 ".html", ".svg", ".sh", ".yml", ".yaml", ""}


def repository_files(root: Path = ROOT) -> list[Path]:
    """The repository's own files: git's tracked and not-ignored ones, or (no git, e.g. an unpacked archive) every
    file outside hidden and build folders."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=root,
                                capture_output=True, check=True).stdout.decode()
        return [root / name for name in listed.split("\0") if name and (root / name).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = {"build", "dist", "__pycache__"}
        return [path for path in root.rglob("*") if path.is_file() and not any(
            part.startswith(".") or part in skip or part.endswith(".egg-info")
            for part in path.relative_to(root).parts[:-1])]


def test_nothing_names_the_development_folder() -> None:
    """Code, comments, docstrings, tests and docs cite the project's own documents (docs/contracts.md for what it
    promises), never a file that exists only beside the developers' checkout."""
    named = []
    for path in repository_files():
        if path.suffix not in TEXT_SUFFIXES:
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for line_number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_NAMES.search(line):
                named.append(f"{path.relative_to(ROOT)}:{line_number}: {line.strip()[:100]}")
    assert not named, "names a file outside the repository:\n" + "\n".join(named)


STORE_MUST_NOT_LOAD = ("arena.referee", "arena.submissions", "arena.adapters", "arena.sandbox", "arena.league", "bots")
"""What opening the store has no use for: the referee (its game loop), submissions, adapters, the sandbox, leagues,
the bots and their registry (issue 34 §4); its foundations are modules of their own below it."""


def test_importing_the_store_loads_its_foundations_only() -> None:
    """``import leaderboards.store`` (every reader of results: the dashboard, ``arena leaderboard``, the report)
    loads no game loop and no bot registry: arena's package runs no import of its own (``arena.play`` is lazy).
    Measured in a fresh interpreter."""
    code = ("import json, sys\nimport leaderboards.store\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('arena', 'bots', 'games', "
            "'leaderboards'))))\n")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       cwd=ROOT).stdout)
    assert "leaderboards.store" in loaded
    assert [m for m in loaded if any(_within(m, p) for p in STORE_MUST_NOT_LOAD)] == []
    arena_modules = [m for m in loaded if _within(m, "arena")]
    print(f"import leaderboards.store loads {len(arena_modules)} arena modules: {arena_modules}")
    assert all(m == "arena" or any(_within(m, p) for p in FOUNDATION) for m in arena_modules), arena_modules


def test_arena_play_is_the_function_however_it_is_reached() -> None:
    """``arena.play`` (lazy) is the referee loop's function, before and after its module is imported."""
    code = ("import arena\nfirst = arena.play\nimport arena.referee.loop\nfrom arena import play\n"
            "assert first is play is arena.referee.loop.play and callable(play), (first, play)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
