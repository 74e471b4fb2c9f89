"""One numbering of a game's moves for every display: ``arena replay``, the HTML replay, the dashboard, the report
and the failure texts.

Move N is the N-th action of the game's history (1-based; chance outcomes and opening moves count, as the replays
list them): the same action has the same number everywhere. A failure's stored ``move_number`` is the history index
of the action the bot was asked for, so it is shown as move ``move_number + 1``, the line a replay shows for the
move played in its place.

Who an action belongs to: a chance outcome (the mover is negative), an opening move (the first ``len(opening)``
actions that are not chance: played before any bot was asked, arena/referee/openings.py), or a bot's decision, the k-th
of the game (its index into the record's ``move_seats``, ``wall_times`` and ``cpu_times``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

CHANCE = "chance"
OPENING = "opening"


class Placed(Protocol):
    """A failure as any view holds it (a record's :class:`arena.results.records.Failure`, the game list's
    :class:`arena.output.views.GameFailure`): its reason and history index."""

    @property
    def reason(self) -> str: ...

    @property
    def move_number(self) -> int: ...


def failure_move(failure: Placed) -> int:
    """The 1-based move number of a failure."""
    return failure.move_number + 1


def failure_where(failure: Placed) -> str:
    """``crash at move 3``: a failure's reason and move, in the words every display uses."""
    return f"{failure.reason} at move {failure_move(failure)}"


class Movers:
    """Says, action by action, whose each action of a history is: :data:`CHANCE`, :data:`OPENING`, or which bot
    decision it was (0-based: its index into ``move_seats``/``wall_times``; the opening's moves have no time)."""

    def __init__(self, opening: int) -> None:
        self.opening = opening
        self.decisions = 0

    def next(self, index: int, mover: int) -> int | str:
        """The kind of the action at history ``index``, taken when ``mover`` (a seat, or negative: chance) was to
        move; call it for every action in order."""
        if mover < 0:
            return CHANCE
        if index < self.opening:
            return OPENING
        self.decisions += 1
        return self.decisions - 1


def decisions(movers: Sequence[int], opening: int) -> list[int | str]:
    """:meth:`Movers.next` for every action of a history, given who was to move before each."""
    numbering = Movers(opening)
    return [numbering.next(i, mover) for i, mover in enumerate(movers)]


def clocks_after(readings: Sequence[float | None], moves: Sequence[tuple[int, int]],
                 clocks: Sequence[float | None]) -> list[float | None]:
    """Each seat's game clock after ``moves`` ((seat, bot decision) in order), from ``clocks`` (None: not started):
    a decision's reading (the mover's clock after it, :attr:`StoredGame.clock_readings`) replaces its seat's, and a
    decision without one (never charged: its clock did not move) keeps it. Every viewer's clocks come from here."""
    out = list(clocks)
    for seat, k in moves:
        if 0 <= seat < len(out) and 0 <= k < len(readings) and readings[k] is not None:
            out[seat] = readings[k]
    return out
