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
    (None: not given, think for ``time``, or with a game clock, for a share of it)."""
    clock: float | None = None
    """With a game clock (a league's ``time_control``): seconds left on this bot's clock as this move starts (on
    the first move, after its start-up was charged). ``time`` is then at most this. None: no game clock."""
    increment: float | None = None
    """With a game clock: seconds added to the clock after each move (None: no game clock)."""
    moves_to_go: int | None = None
    """With a game clock that has periods (``"40/60+0.5"``): moves left in this period, this one included, after
    which the base is added again (None: no periods, or no game clock)."""

    @property
    def think_time(self) -> float | None:
        """Seconds to search this move: ``think``, never past ``time``; ``time`` when no budget was given; with a
        game clock, a share of it (:func:`clock_share`), never past ``think`` or ``time``."""
        budget = self.think
        if self.clock is not None:
            share = clock_share(self.clock, self.increment or 0.0, self.moves_to_go)
            budget = share if budget is None else min(budget, share)
        if budget is None or self.time is None:
            return self.time if budget is None else budget
        return min(budget, self.time)


MOVES_LEFT_GUESS = 30
"""Moves a game clock is shared over when the period does not say (a game's remaining length is not known)."""
SAFE_SHARE = 0.5
"""The most of the clock left one move of the built-in bots thinks for (a move the period ends with: 0.8)."""


def clock_share(left: float, increment: float, moves_to_go: int | None) -> float:
    """How long a built-in bot thinks on a move with ``left`` seconds on its clock: an even share of it over the
    moves to go in the period (else :data:`MOVES_LEFT_GUESS`) plus three quarters of the increment it gets back,
    never more than half of what is left (the period's last move: 0.8 of it, the base comes back after it). A bot
    that ends moves early banks that time for its later moves."""
    moves = moves_to_go or MOVES_LEFT_GUESS
    cap = 0.8 if moves_to_go == 1 else SAFE_SHARE
    return max(0.0, min(left / moves + 0.75 * increment, cap * left))


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
