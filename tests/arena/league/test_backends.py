"""The :class:`~arena.league.backends.Backend` protocol declares everything the writer reads from a backend, and both
backends have all of it (the local one here; the Ray one in test_ray.py, and mypy checks both through
``backends.make_backend``'s return type)."""
from __future__ import annotations

import ast
import inspect
import typing

from arena.league import backends, writer
from arena.league.backends import Backend
from arena.league.workers import LocalBackend


def _declared() -> set[str]:
    hints = typing.get_type_hints(Backend)
    methods = {n for n, v in vars(Backend).items() if callable(v) and not n.startswith("_")}
    return set(hints) | methods


def _read_from_backends(module: object) -> set[str]:
    """The attributes ``module`` reads from a parameter or local annotated ``Backend``."""
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    names = {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg) and node.annotation is not None
             and ast.unparse(node.annotation) == "Backend"}
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names}


def test_the_protocol_declares_every_attribute_the_writer_reads() -> None:
    read = _read_from_backends(writer)
    assert {"execute", "ready", "columns"} <= read, read  # (the scan sees the writer's reads)
    assert read <= _declared(), read - _declared()
    assert "getattr(" not in inspect.getsource(writer)  # an attribute read by name would escape the protocol
    assert _read_from_backends(backends) <= _declared()


def test_the_local_backend_satisfies_the_protocol() -> None:
    backend = LocalBackend(0)  # (no worker started)
    try:
        assert isinstance(backend, Backend)
        assert backend.ready == 0 and backend.columns == {}
    finally:
        backend.close()
