"""Driving the real dashboard in tests: wait until the app shows what a test waits for."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def wait_for(pilot, predicate: Callable[[], bool], timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    """Lets the app run until ``predicate()`` holds (the poller works on its own thread)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {predicate}")
        await pilot.pause(0.05)
    await pilot.pause()
    await asyncio.sleep(0)
