"""What every request of ``arena serve``'s site needs (:class:`Site`): the store, the league file and the running
ladder's hooks, built whole once the ladder has started (``arena.commands.serve``) and never changed after; what
changes while the site runs (login limits, caches, each web thread's store connection) lives in objects of its own.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arena.league.config import LeagueConfig
from arena.server import auth, caches, similarity
from arena.snapshot import MB
from leaderboards.store import Store


def _nothing() -> None:
    """A hook with nothing to wake (a site served without a ladder: the tests', the benchmark's)."""


def _no_problems() -> list[str]:
    return []


class Connections:
    """Each web thread's store connection (SQLite connections stay in their thread), made from the process's one
    opened and checked store by :meth:`Store.another`: a second :meth:`Store.open` in this process would drop the
    process's locks on the file."""

    def __init__(self, db: Path, base: Store | None) -> None:
        self.db, self._base = db, base
        self._local = threading.local()
        self._opening = threading.Lock()

    def store(self) -> Store:
        store = getattr(self._local, "store", None)
        if store is not None and not store.settled():  # (an old snapshot pinned: a fresh connection)
            store.close()
            store = None
        if store is None:
            with self._opening:
                if self._base is None:  # no ladder holds the store (a site served alone): its own, opened once
                    self._base = Store.open(self.db)
            store = self._local.store = self._base.another()
        return store


@dataclass(frozen=True, eq=False)  # (one site is one site: compared and hashed by identity)
class Site:
    """The store, the league file and the running ladder's hooks; the login limits and the caches every request
    shares."""

    db: Path
    config: LeagueConfig
    secure: bool = False
    """``--behind-https``: cookies get ``Secure``."""
    base: Store | None = None
    """The process's one opened and checked store (the ladder's); None: opened at the first request."""
    entered: threading.Event = field(default_factory=threading.Event)
    """Set when the field changes (a withdrawal, a release): the ladder plans again."""
    wake: Callable[[], None] = _nothing
    """Wakes the validator (a submission was queued)."""
    scrimmage_wake: Callable[[], None] = _nothing
    """Wakes the scrimmage player (a scrimmage was asked for: arena.server.scrimmages)."""
    problems: Callable[[], list[str]] = _no_problems
    """The server's own faults an organiser must fix (bot packages that cannot load in the sandbox), shown on
    /admin; submissions wait in the queue meanwhile."""
    queueing: threading.Lock = field(default_factory=threading.Lock)
    """Held from the hourly count to the new submission's row: parallel uploads of one account each saw the same
    count and all got in (7 of 20 past a limit of 3)."""
    per_account: auth.RateLimit = field(default_factory=lambda: auth.RateLimit(auth.MAX_FAILS_PER_ACCOUNT))
    per_account_address: auth.RateLimit = field(
        default_factory=lambda: auth.RateLimit(auth.MAX_FAILS_PER_ACCOUNT_ADDRESS))
    per_address: auth.RateLimit = field(default_factory=lambda: auth.RateLimit(auth.MAX_FAILS_PER_ADDRESS))
    near: similarity.NearCache = field(default_factory=similarity.NearCache)
    """Near-duplicate similarities by pair of bot digests (/admin compares only pairs it has not seen)."""
    audits: caches.Audits = field(default_factory=caches.Audits)
    """/admin's audit of the league, made again only as games come in."""
    boards: caches.Boards = field(default_factory=caches.Boards)
    """The leaderboard of ``/`` and ``/api/leaderboard``, made again only when the standings changed."""
    brackets: caches.Brackets = field(default_factory=caches.Brackets)
    """/api/bracket's latest document."""
    connections: Connections = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "connections", Connections(self.db, self.base))  # (frozen: set once, here)

    def store(self) -> Store:
        """This thread's connection to the store."""
        return self.connections.store()

    @property
    def max_bytes(self) -> int:
        return int(self.config.limits.max_bot_mb * MB)

    def league_id(self, store: Store) -> int:
        return store.find_league(self.config.name).id
