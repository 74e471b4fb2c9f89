"""Fixtures of the dashboard tests: a deterministic store (see storefix.py)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.storefix import Fixture, build


@pytest.fixture
def fixture_store(tmp_path: Path) -> Iterator[Fixture]:
    """An open store (league demo: 2 rounds, 48 games, one bot with timeouts; league ladder: 3 games)."""
    fx = build(tmp_path / "arena.sqlite")
    yield fx
    fx.close()


@pytest.fixture
def store_file(fixture_store: Fixture) -> Path:
    """The same store, closed (the app is its only reader)."""
    fixture_store.close()
    return fixture_store.path
