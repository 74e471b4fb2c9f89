"""The bot protocol and the move budget a referee hands a bot."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable


@dataclass(frozen=True)
class Limit:
    """What one move may use (python-chess's ``Limit``). A bot must answer within ``time``."""

    time: float | None = None
    """Wall-clock seconds this move may take (None: no time limit, e.g. an iteration budget)."""
    memory_mb: int | None = None
    """The bot process's memory limit in MB (None: not limited)."""
    first_move: bool = False
    """True for the bot's first move, which usually has a longer time limit (set-up time)."""


@runtime_checkable
class Bot(Protocol):
    """Anything with ``step(state, limit) -> action`` is a bot (DESIGN.md)."""

    def step(self, state: Any, limit: Limit) -> int:
        """Chooses an action for the player to move. ``state`` is the bot's own copy; it may mutate it."""
        ...


class BaseBot:
    """Convenience base class of the built-in bots: remembers the game, seat and seed."""

    name: ClassVar[str] = "bot"

    def __init__(self, game: Any, seat: int, seed: int) -> None:
        self.game = game
        self.seat = seat
        self.seed = seed

    def step(self, state: Any, limit: Limit) -> int:
        raise NotImplementedError

    def inform(self, action: int) -> None:
        """Called for every action taken by anyone else (other seats and chance). No-op by default."""

    def restart(self) -> None:
        """Forget everything learned during a game (OpenSpiel's ``restart_at``)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} seat={self.seat} seed={self.seed}>"
