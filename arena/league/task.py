"""One league game as a unit of work: the :class:`Task` a backend runs, and what comes back, a
:class:`~arena.results.records.GameRecord` or a :class:`TaskFailure` (never a dict with a key to remember to test).

Between processes (a local worker's pipe, a Ray task) a result travels as :func:`encode_result`'s plain data,
in the record's versioned schema (:data:`arena.results.records.RECORD_SCHEMA`); the writer reads it back with
:func:`decode_result`. This module sits below the league runner and both backends, which import it (and not
each other).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.errors import MachineOverloadedError
from arena.limits import Limits
from arena.results.records import RECORD_SCHEMA, STORED_JSON, GameRecord, RecordSchemaError, stored_json
from arena.submissions.snapshot import Snapshot


@dataclass(frozen=True)
class Task:
    """Everything a worker needs to play one fixture (picklable, no store access)."""

    key: str
    game: str
    round: int
    seats: tuple[int, ...]
    """Bot id per seat."""
    bots: tuple[str, ...]
    """Per seat: a built-in spec, or ``file:<content hash>`` (a key of ``files``)."""
    names: tuple[str, ...]
    seed: int
    limits: Limits
    """The table's limits, typed from the league file to the referee: pickled with the task at the process edge
    (a worker's pipe, a Ray task), never turned into a dict and validated again on the way."""
    on_failure: str
    files: dict[str, Snapshot] = field(default_factory=dict)
    """content hash -> snapshot of the file bots at this table: they travel with the task, and the worker checks
    each against its digest before writing it for the bot process."""
    chance_key: bytes | None = None
    """The league's secret chance key (keys chance and bot seeds; never sent to a bot). None: a fresh one per game."""
    opening: tuple[int, ...] = ()
    """Moves played before the first decision (:mod:`arena.referee.openings`)."""


@dataclass(frozen=True)
class TaskFailure:
    """The referee could not play the game (an arena bug or a lost worker, not a bot's failure): nothing is
    stored and the next run plays it."""

    error: str
    """One line: what failed."""
    overloaded: bool = False
    """The machine starved a bot of CPU: the game was abandoned, never forfeited (the run warns at once)."""


TaskResult = GameRecord | TaskFailure


def play_task(task: Task, *, close_later: bool = False) -> TaskResult:
    """Plays one fixture through the referee. The referee writes the task's snapshots into this process's
    private bot root (:mod:`arena.submissions.snapshot`), checked against their digests; the root goes when the process
    exits. ``close_later``: see :func:`arena.referee.sandboxed.play_game`."""
    try:
        bots: list[str | Snapshot] = [task.files[b[5:]] if b.startswith("file:") else b for b in task.bots]
        return _referee()(task.game, bots, task.seed, task.limits, on_failure=task.on_failure, names=list(task.names),
                          chance_key=task.chance_key, opening=task.opening, close_later=close_later)
    except MachineOverloadedError as exc:  # abandoned, not forfeited: the writer says so, the next run replays it
        return TaskFailure(f"{type(exc).__name__}: {str(exc).splitlines()[0]}", overloaded=True)
    except Exception as exc:  # noqa: BLE001 - reported by the writer, the game is retried next run
        return TaskFailure(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


def _referee() -> Callable[..., GameRecord]:
    from arena.referee.sandboxed import play_game  # start-up: the sandbox stack loads only in the processes that play
    return play_game


def encode_result(result: TaskResult, *, columns: bool = False) -> dict[str, Any]:
    """A result as plain data for a pipe or a Ray object: ``{"record": ...}`` (schema'd) or ``{"failure": ...}``;
    with ``columns``, a record also brings the store's JSON text of it (``"columns"``: :func:`stored_columns`)."""
    if isinstance(result, TaskFailure):
        return {"schema": RECORD_SCHEMA, "failure": {"error": result.error, "overloaded": result.overloaded}}
    data = result.to_dict()
    if columns:  # encoded here, in parallel, not by the one writer
        return {"schema": RECORD_SCHEMA, "record": data, "columns": stored_json(data)}
    return {"schema": RECORD_SCHEMA, "record": data}


def stored_columns(data: dict[str, Any]) -> tuple[str, ...] | None:
    """The store's JSON columns that :func:`encode_result` put beside a record (None when it did not)."""
    columns = data.get("columns")
    if isinstance(columns, tuple) and len(columns) == len(STORED_JSON) and all(isinstance(c, str) for c in columns):
        return columns
    return None


def decode_result(data: dict[str, Any]) -> TaskResult:
    """The result :func:`encode_result` encoded.

    Raises:
        RecordSchemaError: encoded by a newer arena.
    """
    schema = data.get("schema")
    if not isinstance(schema, int) or schema > RECORD_SCHEMA:
        raise RecordSchemaError(f"a task result of schema {schema!r}; this arena reads up to schema {RECORD_SCHEMA}: "
                                "run the same arena on every worker")
    if "failure" in data:
        return TaskFailure(str(data["failure"]["error"]), bool(data["failure"].get("overloaded", False)))
    return GameRecord.from_dict(data["record"])
