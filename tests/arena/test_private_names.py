"""No module uses another package's private names: a name that starts with ``_`` is its package's own (the league
runner's ``_run`` was called by the server's ladder until ``run_pass`` replaced it).

Every module of games/, bots/, leaderboards/ and arena/ is parsed: ``from X import _name`` and ``module._name`` (a
module bound by an import) count when X or the module lies in another package than the importer (modules of one
package may share their privates). Dunders (``__version__``) are public. Tests may use privates.
"""
from __future__ import annotations

import ast
from pathlib import Path

from tests.arena.test_layers import modules


def _package(module: str, is_init: bool) -> str:
    return module if is_init else module.rpartition(".")[0]


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(module: str, source: str, packages: dict[str, str]) -> list[str]:
    """``module``'s uses of other packages' private names, one ``line: name`` each; ``packages`` maps every known
    module (``module`` included) to its package."""
    tree = ast.parse(source)
    mine = packages[module]
    bound: dict[str, str] = {}  # local name -> the module an import bound to it
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = mine.split(".")[: len(mine.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in packages:  # ``from package import module``
                    bound[alias.asname or alias.name] = full
                elif _private(alias.name) and base in packages and packages[base] != mine:  # (ours only)
                    found.append((node.lineno, f"from {base} import {alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = top
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        chain, value = [], node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in bound:
            target = ".".join([bound[value.id], *reversed(chain)])
            if target in packages and packages[target] != mine:
                found.append((node.lineno, f"{target}.{node.attr}"))
    return [f"{line}: {use}" for line, use in sorted(found)]


def _packages(known: dict[str, Path]) -> dict[str, str]:
    return {name: _package(name, path.stem == "__init__") for name, path in known.items()}


def test_no_module_uses_another_package_s_private_names() -> None:
    known = {name: path for name, path in modules().items() if path.suffix == ".py"}
    packages = _packages(known)
    found = [f"{path}:{use}" for name, path in known.items()
             for use in private_uses(name, path.read_text(), packages)]
    assert not found, "\n".join(found)


def test_the_scan_finds_both_kinds_of_use_and_allows_a_package_s_own() -> None:
    packages = {"pkg": "pkg", "pkg.a": "pkg", "pkg.b": "pkg", "other": "other", "other.c": "other",
                "other.sub": "other.sub", "other.sub.d": "other.sub"}
    source = """
from pkg.a import _run, public
from pkg import a, b as bee
import pkg.a
import pkg.b as pb
from . import c
from .c import _own
a._run()
bee._stop()
pkg.a._x
pb._y
a.__doc__
c._shared
"""
    assert private_uses("other.c", source, packages) == [
        "2: from pkg.a import _run", "8: pkg.a._run", "9: pkg.b._stop", "10: pkg.a._x", "11: pkg.b._y"]
    assert private_uses("other.sub.d", "from other.c import _own\nimport other.c as oc\noc._x\n", packages) == [
        "1: from other.c import _own", "3: other.c._x"]  # a subpackage is another package
    assert private_uses("pkg.b", source, packages) == []  # pkg's modules share their privates
