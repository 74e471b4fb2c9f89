"""Fixtures of the dashboard tests: a deterministic store (see storefix.py) and a wait helper."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
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


async def wait_for(pilot, predicate: Callable[[], bool], timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    """Lets the app run until ``predicate()`` holds (the poller works on its own thread)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {predicate}")
        await pilot.pause(0.05)
    await pilot.pause()
    await asyncio.sleep(0)
