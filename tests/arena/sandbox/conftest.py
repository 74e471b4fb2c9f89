"""Fixtures of the sandbox's tests."""
from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from arena.sandbox import zygote
from tests.arena.sandbox_helpers import descendants_of


@pytest.fixture
def fresh_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[int]]:
    """A fork server of this test's own, so no earlier test's games have shaped it; stopped afterwards. Yields
    the processes that were already below this one (the earlier server: not a leftover of this test's games)."""
    before = set(descendants_of(os.getpid()))  # leaves out the current server itself: added here
    if zygote._ZYGOTE is not None and zygote._ZYGOTE.proc is not None:
        before.add(zygote._ZYGOTE.proc.pid)
    monkeypatch.setattr(zygote, "_ZYGOTE", None)
    yield before
    server = zygote._ZYGOTE
    if server is not None and server.proc is not None:
        server.proc.kill()
        server.proc.wait()
