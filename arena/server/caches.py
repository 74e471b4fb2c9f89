"""What the site's pages keep between requests (one of each per :class:`arena.server.site.Site`): work that
would otherwise be done again for every view while the ladder plays."""
from __future__ import annotations

import threading
import time
from typing import Any

from arena.output.views import Leaderboard, leaderboard
from leaderboards.audit import league_audit
from leaderboards.schema import League
from leaderboards.store import Store

AUDIT_EVERY = 60.0
"""Seconds between two audits of the league for /admin while games come in (leaderboards/audit.py)."""


class Audits:
    """`arena audit`'s findings for /admin (a fit per pair of bots: seconds for a big league, not for every view
    while the ladder plays)."""

    def __init__(self) -> None:
        self.doc: dict[str, Any] | None = None
        self.games, self.at = 0, 0.0
        self.lock = threading.Lock()

    def pairs_to_look_at(self, store: Store, league_id: int) -> dict[str, Any]:
        """The findings, computed again when games were added and :data:`AUDIT_EVERY` seconds have passed."""
        games = store.count_games(league_id)
        with self.lock:
            if self.doc is None or (self.games != games and time.monotonic() - self.at >= AUDIT_EVERY):
                self.doc, self.games, self.at = league_audit(store, league_id).as_json(), games, time.monotonic()
            return {**self.doc, "games": self.games}


class Boards:
    """The league's leaderboard with its head-to-head (``/`` and ``/api/leaderboard``): a batch Elo fit over every
    game (~0.45 s at 20,000 games), so it is made again only when the standings changed
    (:func:`leaderboards.store_views.standings_token`), once for every viewer: the others wait for it."""

    def __init__(self) -> None:
        self.key: tuple[Any, ...] | None = None
        self.board: Leaderboard | None = None
        self.lock = threading.Lock()
        self.made = 0
        """Leaderboards made (a test's count)."""

    def get(self, store: Store, league: League) -> Leaderboard:
        key = (league.id, repr(league.config), store.standings_token(league.id))  # (read before the board)
        with self.lock:
            if self.board is None or self.key != key:
                self.board, self.key = leaderboard(store, league, h2h=True), key
                self.made += 1
            return self.board


class Brackets:
    """The latest bracket document (/api/bracket): every viewer's /bracket polls it every 2 s, so it is made again
    only when a game or a round was stored (its key: the league, its games, its decisions)."""

    def __init__(self) -> None:
        self.key: tuple[int, int, int] | None = None
        self.text = ""
        self.lock = threading.Lock()

    def get(self, key: tuple[int, int, int]) -> str | None:
        with self.lock:
            return self.text if self.key == key else None

    def put(self, key: tuple[int, int, int], text: str) -> None:
        with self.lock:
            self.key, self.text = key, text
