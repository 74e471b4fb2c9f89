"""Who won and why, decided in one place (python-chess's ``Outcome`` and ``Termination``).

The referee loop (:func:`arena.referee.loop.play`) asks :func:`decide` for a finished game's outcome, the replay
verifier asks it again for the outcome a stored game must have had, and the store, ratings and views read a
seat's result with :func:`seat_results` / :func:`winners`; none of them re-derives a rule of its own.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Termination(StrEnum):
    """Why a game ended (the game's), and per seat why that seat's game ended (a record's ``terminations``).

    A ``str``: records, the store and ``--json`` keep the plain words (docs/contracts.md)."""

    NORMAL = "normal"
    """By the game's rules (per seat: the seat did not fail)."""
    ADJUDICATED = "adjudicated"
    """A draw declared by the referee after the game's maximum length (the game's only; seats stay normal)."""
    TIMEOUT = "timeout"
    CRASH = "crash"
    ILLEGAL = "illegal"
    MEMORY = "memory"
    PROTOCOL = "protocol"

    # A new reason is this one line (and, being a failure, a store migration for its counter column: the test
    # tests/arena/results/test_termination_vocabulary.py says so); every list, counter, column and label derives
    # from here.

    @property
    def forfeit(self) -> bool:
        """A bot's failure: the seat that has it forfeits."""
        return self not in (Termination.NORMAL, Termination.ADJUDICATED)

    @property
    def counter(self) -> str:
        """The name of a bot's count of this failure: its store column, ``--json``/CSV key and table label
        (``timeouts``, ``crashes``; the other words as they are)."""
        return _COUNTER_NAMES.get(self, self.value)


_COUNTER_NAMES = {Termination.TIMEOUT: "timeouts", Termination.CRASH: "crashes"}
"""The counters whose names are plurals (kept from the first stores: their columns are named so)."""

FAILURES = tuple(t for t in Termination if t.forfeit)
"""The failure reasons a bot can be charged with (timeout, crash, illegal, memory, protocol), in this order."""
SEAT_TERMINATIONS = (Termination.NORMAL, *FAILURES)
"""What a record's per-seat ``terminations`` hold (adjudicated is the game's only)."""
COUNTERS = tuple(t.counter for t in FAILURES)
"""A bot's failure counters by name, in :data:`FAILURES`' order (``timeouts``, ``crashes``, ``illegal``, ...)."""


@dataclass(frozen=True)
class Outcome:
    """A finished game's result."""

    returns: tuple[float, ...]
    """Per seat."""
    terminations: tuple[Termination, ...]
    """Per seat: normal, or the failure that ended the game for that seat."""
    termination: Termination = Termination.NORMAL
    """The game's: normal, adjudicated, or the forfeiting seat's failure."""
    reason: str = ""
    """For an adjudicated game: what was adjudicated (``draw after 300 moves``)."""

    def winner(self) -> int | None:
        """The seat with the strictly highest return, or None (a draw or several winners)."""
        return winner(self.returns)


def decide(state: Any, *, forfeit: tuple[int, Termination] | None = None, adjudicated: str | None = None) -> Outcome:
    """The outcome of a game that stopped at ``state``.

    Args:
        state: the state the game stopped in (terminal unless a seat forfeited or the game was adjudicated).
        forfeit: ``(seat, reason)`` when a bot's failure ended the game: it gets the game's minimum utility and
            the others share the win (zero sum).
        adjudicated: the referee's reason when it declared a draw (the game ran past its maximum length).

    Raises:
        ValueError: neither terminal, nor forfeited, nor adjudicated (the game has no result yet).
    """
    game = state.game
    n = game.num_players()
    if forfeit is not None:
        seat, why = forfeit
        reason = Termination(why)
        terminations = tuple(reason if s == seat else Termination.NORMAL for s in range(n))
        return Outcome(tuple(forfeit_returns(n, seat, game.min_utility())), terminations, reason)
    normal = (Termination.NORMAL,) * n
    if state.is_terminal():
        return Outcome(tuple(float(r) for r in state.returns()), normal)
    if adjudicated is not None:
        return Outcome((0.0,) * n, normal, Termination.ADJUDICATED, adjudicated)
    raise ValueError("the game is not over: no seat forfeited and it was not adjudicated")


def forfeit_returns(num_players: int, loser: int, min_utility: float = -1.0) -> list[float]:
    """Returns after ``loser`` forfeits: it gets the loss, the others share the win (zero sum)."""
    others = -min_utility / (num_players - 1)
    return [min_utility if seat == loser else others for seat in range(num_players)]


def winners(returns: Sequence[float]) -> list[int]:
    """The seats with the highest return (every seat: a draw)."""
    best = max(returns)
    return [i for i, r in enumerate(returns) if r == best]


def winner(returns: Sequence[float]) -> int | None:
    """The seat with the strictly highest return, or None."""
    top = winners(returns)
    return top[0] if len(top) == 1 else None


def seat_results(returns: Sequence[float]) -> list[str]:
    """Per seat ``win`` (the only best), ``draw`` (one of several best) or ``loss``: what the store keeps."""
    top = winners(returns)
    return ["loss" if seat not in top else ("win" if len(top) == 1 else "draw") for seat in range(len(returns))]
