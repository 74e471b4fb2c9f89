"""The record of one played game: what the referee returns, the store keeps and a replay reads.

Records are plain data (JSON-serialisable via :meth:`GameRecord.to_dict`); a record plus the game spec
replays exactly (``games.load(record.game)`` + ``record.history``).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from copy import deepcopy
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

from arena.results.outcome import SEAT_TERMINATIONS, Termination, forfeit_returns, winner

# Per-seat termination reasons (docs/contracts.md, `arena match --json`): the words of
# arena.results.outcome.Termination.
NORMAL = Termination.NORMAL
TIMEOUT = Termination.TIMEOUT
CRASH = Termination.CRASH
ILLEGAL = Termination.ILLEGAL
MEMORY = Termination.MEMORY
PROTOCOL = Termination.PROTOCOL
REASONS = SEAT_TERMINATIONS

RECORD_SCHEMA = 1
"""The version of :meth:`GameRecord.to_dict`'s shape: what a worker, a Ray task, the store and ``arena match --json``
exchange. A reader refuses a newer one by name instead of misreading it."""

__all__ = ["CRASH", "ILLEGAL", "MEMORY", "NORMAL", "PROTOCOL", "REASONS", "RECORD_SCHEMA", "STORED_JSON", "TIMEOUT",
           "Failure", "GameRecord", "RecordSchemaError", "Termination", "forfeit_returns", "stored_json"]


STORED_JSON = ("players", "history", "returns", "terminations", "move_seats", "wall_times", "cpu_times", "failures",
               "info")
"""The record's fields the store keeps as JSON text, one column each, in this order (:func:`stored_json`)."""


def stored_json(data: dict[str, Any]) -> tuple[str, ...]:
    """The JSON text of the store's :data:`STORED_JSON` columns of a record, from :meth:`GameRecord.to_dict`'s data
    (returns as floats). A league worker encodes them where the game was played, so that the one writer, which
    every game waits for, inserts them as they are instead of encoding them itself."""
    return tuple(json.dumps([float(x) for x in data[name]] if name == "returns" else data[name])
                 for name in STORED_JSON)


class RecordSchemaError(ValueError):
    """A record written by a newer arena (its ``schema`` is above :data:`RECORD_SCHEMA`)."""


@dataclass
class Failure:
    """One bot failure during a game."""

    seat: int
    """The seat whose bot failed."""
    reason: Termination
    """A failure (:data:`arena.results.outcome.FAILURES`): timeout, crash, illegal, memory, protocol."""
    move_number: int
    """Index into the history where the failure happened."""
    detail: str = ""
    """A short explanation, with the last lines of the bot's stderr for crashes."""
    substituted: int | None = None
    """With on_failure=random_move: the random action played instead; None when the bot lost."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Failure:
        """A failure from its stored dict (:meth:`GameRecord.to_dict`'s ``failures``): the one decoder every reader
        of a stored or sent failure goes through.

        Tolerant of rows any arena wrote, or a hand edited (every one has a ``seat``): a missing ``detail``,
        ``substituted`` or ``move_number`` takes its default, and a reason word that is no failure of
        :data:`arena.results.outcome.FAILURES` (a newer arena's, a hand-edited store's) becomes
        :attr:`Termination.CRASH` (the catch-all: the bot's game ended abnormally) with the word kept at the head of
        ``detail`` (``stored reason 'oops', unknown to this arena``), so a reader never fails on it and nothing of
        it is lost from view."""
        word = str(data.get("reason", ""))
        detail = str(data.get("detail") or "")
        try:
            reason = Termination(word)
        except ValueError:
            reason = Termination.NORMAL  # (not a failure: replaced just below)
        if not reason.forfeit:
            reason = Termination.CRASH
            detail = f"stored reason {word!r}, unknown to this arena" + (f"; {detail}" if detail else "")
        substituted = data.get("substituted")
        return cls(int(data["seat"]), reason, int(data.get("move_number") or 0), detail,
                   None if substituted is None else int(substituted))


@dataclass
class GameRecord:
    """One finished game."""

    game: str
    """The exact game spec (random set-ups fixed by its ``seed`` parameter)."""
    seed: int
    """The game's public seed: its random set-up derives from it; chance draws and the bots' seeds derive from it
    and the secret chance key (``info["chance_key_id"]`` names that key; :mod:`arena.chance`)."""
    players: list[str]
    """Per seat: the bot spec or bot file name."""
    history: list[int] = field(default_factory=list)
    """Every action, chance outcomes included."""
    returns: list[float] = field(default_factory=list)
    """Per seat, as ``state.returns()``, or the adjudicated result after a forfeit."""
    terminations: list[Termination] = field(default_factory=list)
    """Per seat: normal or a failure (:data:`arena.results.outcome.SEAT_TERMINATIONS`)."""
    move_seats: list[int] = field(default_factory=list)
    """Per decision (not chance): the seat that moved."""
    wall_times: list[float] = field(default_factory=list)
    """Per decision: wall-clock seconds the referee measured around the bot's answer."""
    cpu_times: list[float] = field(default_factory=list)
    """Per decision: CPU seconds the bot used for it (its own process, or this thread in-process)."""
    failures: list[Failure] = field(default_factory=list)
    """Every bot failure, in order."""
    duration: float = 0.0
    """Wall-clock seconds for the whole game."""
    info: dict[str, Any] = field(default_factory=dict)
    """Anything else the runner wants to keep (limits, sandbox layers, ...)."""

    def __getitem__(self, key: str) -> Any:  # rec["returns"] works like rec.returns (docs/contracts.md)
        return getattr(self, key)

    def winner(self) -> int | None:
        """The seat with the strictly highest return, or None for a draw."""
        return winner(self.returns)

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON data, in schema :data:`RECORD_SCHEMA` (the ``schema`` key): a copy that shares
        nothing mutable with the record (what :func:`dataclasses.asdict` gives, in its key order)."""
        # Written out instead of asdict: asdict deep-copies every leaf through copy.deepcopy (0.4 ms for a short
        # Nim game), which the league writer and every worker would pay once per game.
        return {"game": self.game, "seed": self.seed, "players": list(self.players), "history": list(self.history),
                "returns": list(self.returns), "terminations": [str(t) for t in self.terminations],
                "move_seats": list(self.move_seats), "wall_times": list(self.wall_times),
                "cpu_times": list(self.cpu_times),
                "failures": [{"seat": f.seat, "reason": str(f.reason), "move_number": f.move_number,
                              "detail": f.detail, "substituted": f.substituted} for f in self.failures],
                "duration": self.duration, "info": _plain(self.info), "schema": RECORD_SCHEMA}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        """A record from :meth:`to_dict`'s data (a record without ``schema`` is of schema 1's shape).

        Raises:
            RecordSchemaError: written by a newer arena.
        """
        data = dict(data)
        schema = data.pop("schema", RECORD_SCHEMA)
        if not isinstance(schema, int) or schema > RECORD_SCHEMA:
            raise RecordSchemaError(f"a game record of schema {schema!r}; this arena reads up to schema "
                                    f"{RECORD_SCHEMA}: upgrade arena")
        # the words back to the type they travel as (a termination no Termination has raises ValueError; a failure's
        # reason is read as Failure.from_dict says)
        data["terminations"] = [Termination(t) for t in data.get("terminations", [])]
        data["failures"] = [Failure.from_dict(f) for f in data.get("failures", [])]
        return cls(**data)


def _plain(value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, tuples; a dataclass becomes a dict, as asdict does); leaves (numbers,
    strings, None) are immutable and kept as they are, anything else is deep-copied."""
    if type(value) in _LEAVES:
        return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_plain(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return deepcopy(value)


_LEAVES = frozenset({str, int, float, bool, type(None)})


def headline(detail: str) -> str:
    """The one line of a failure's detail that says what happened: its last line (a traceback's exception), with
    where it happened when the traceback says so (``SyntaxError: expected ':' (at /bot/bot.py, line 2)``): a
    syntax error's last line has no line number of its own."""
    lines = [line.strip() for line in (detail or "").splitlines() if line.strip()]
    if not lines:
        return ""
    last = lines[-1]
    frames = [line for line in lines if line.startswith('File "')]
    if frames and "line " in frames[-1]:
        where = frames[-1][len("File "):].replace('"', "")  # /bot/bot.py, line 2[, in step]
        return f"{last} (at {where})"
    return last
