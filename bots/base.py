"""The bot protocol and the move budget a referee hands a bot."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable


@dataclass(frozen=True)
class Limit:
    """What one move may use (python-chess's ``Limit``). A bot must answer within ``time``, and should think
    for ``think_time``: on the first move ``time`` also covers the bot's start-up, which is not thinking time
    (docs/bot-authors.md, "The first move")."""

    time: float | None = None
    """Wall-clock seconds this move may take (None: no time limit, e.g. an iteration budget). The hard deadline:
    past it the move is a timeout."""
    memory_mb: int | None = None
    """The bot process's memory limit in MB (None: not limited)."""
    first_move: bool = False
    """True for the bot's first move, which usually has a longer time limit (set-up time)."""
    think: float | None = None
    """Seconds the referee means a move to think: the league's ``move_time``, on every move, the first included
    (None: not given, think for ``time``)."""

    @property
    def think_time(self) -> float | None:
        """Seconds to search this move: ``think``, never past ``time``; ``time`` when no budget was given."""
        if self.think is None or self.time is None:
            return self.time if self.think is None else self.think
        return min(self.think, self.time)


def think_time(limit: Any) -> float | None:
    """The seconds a built-in bot searches this move, for any limit object: docs/contracts.md promises bots only
    ``limit.time``, so a limit without ``think_time`` (a caller's own object) means think for ``time``."""
    budget = getattr(limit, "think_time", None)
    return budget if budget is not None else getattr(limit, "time", None)


@runtime_checkable
class Bot(Protocol):
    """Anything with ``step(state, limit) -> action`` is a bot (docs/contracts.md)."""

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
