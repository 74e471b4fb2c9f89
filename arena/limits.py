"""Resource limits of a sandboxed bot, configurable per match and per league.

One schema (a strict pydantic dataclass, arena/schema.py) checks every limit from a league file, the store
or the command line: type, finite, range. The same fields generate the table in docs/leagues.md.
"""
from __future__ import annotations

import tomllib
from dataclasses import asdict, replace
from typing import Annotated, Any, cast

import click
from pydantic import Field, ValidationError
from pydantic.dataclasses import dataclass

from arena.errors import ConfigError
from arena.schema import STRICT, explain, type_name
from bots.base import Limit

MAX_DECISIONS = 100_000
"""No game has more decisions, whatever its own bound (a Double Step on 100,000-square lanes) or the limits say: the
referee ends it as a draw there, so a stored record stays under ~10 MB (~52 bytes of JSON per action, a chance
outcome before each decision at most)."""
DAY = 86_400.0
"""The longest move time one can ask for (a finite cap: larger values overflow the sandbox's timers)."""


@dataclass(frozen=True, config=STRICT)
class Limits:
    """Per-bot limits. Defaults follow the COMP424 course: 2 s a move, 30 s for the first, 500 MB."""

    move_time: Annotated[float, Field(gt=0, le=DAY)] = 2.0
    """Wall-clock seconds per move; also what built-in bots think on every move, the first included."""
    first_move_time: Annotated[float, Field(gt=0, le=DAY)] = 30.0
    """Wall-clock seconds allowed for a bot's first move: start-up (imports, tables) plus one move."""
    memory_mb: Annotated[int, Field(ge=16, le=1_048_576)] = 500
    """Memory limit of the bot process and its children, in MB."""
    cpu_seconds: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    """Whole-game CPU backstop in seconds (left out: derived from the move times and the game length)."""
    max_processes: Annotated[int, Field(ge=1, le=4096)] = 16
    """Processes and threads the bot may have at once."""
    max_open_files: Annotated[int, Field(ge=8, le=65_536)] = 64
    """Open file descriptors of the bot."""
    max_file_size_mb: Annotated[int, Field(ge=0, le=1_048_576)] = 0
    """Largest file the bot may write, in MB (0: none)."""
    max_moves: Annotated[int, Field(ge=1, le=MAX_DECISIONS)] | None = None
    """Decisions in one game before the referee ends it as a draw (left out: the game's own bound,
    ``max_game_length()``, finite for every built-in game)."""
    max_game_seconds: Annotated[float, Field(gt=0, le=DAY)] | None = None
    """Wall-clock seconds one game may last: no move starts after it, and the game ends as a draw (left out: the
    sum of the game's own allowances, each seat's first move plus twice the move time for every decision of its
    bound, plus a minute: a game whose every move keeps its limit never reaches it)."""

    def game_seconds(self, seats: int, moves: int | None) -> float | None:
        """The wall-clock bound of one game of ``seats`` seats and at most ``moves`` decisions (None: no bound,
        ``debug`` or no known length)."""
        if self.debug:
            return None
        if self.max_game_seconds is not None:
            return self.max_game_seconds
        if moves is None:
            return None
        return seats * self.first_move_time + 2 * moves * self.move_time + 60
    max_bot_mb: Annotated[float, Field(gt=0, le=1024)] = 1.0
    """Largest bot snapshot (a file or a folder) a league, `arena match` or `arena submit` accepts, in MB."""
    trusted: bool = False
    """SANDBOX RELAXED: bot files run even when mandatory sandbox layers are missing. Only for code you trust."""
    debug: bool = False
    """SANDBOX OFF: bots run in the referee's process, with no sandbox and no time limits (for a debugger).
    Never for untrusted code."""

    def time_for(self, move_number: int) -> float:
        """The limit for a bot's ``move_number``-th own move (0 = first)."""
        return self.first_move_time if move_number == 0 else self.move_time

    def allowance(self, move_number: int) -> Limit:
        """What a bot's ``move_number``-th own move (0 = first) may use, computed here only (the referee hands it
        to the bot; the sandbox's time account, arena/sandbox/clock.py, charges it): the hard time (the first
        move's covers start-up), the thinking budget (``move_time`` on every move) and the memory."""
        return Limit(time=self.time_for(move_number), memory_mb=self.memory_mb, first_move=move_number == 0,
                     think=self.move_time)

    def relaxed(self) -> list[str]:
        """The sandbox layers these limits turn off, in words (empty: the full sandbox)."""
        out = []
        if self.debug:
            out.append("limits.debug = true (no sandbox, no time limits)")
        if self.trusted:
            out.append("limits.trusted = true (bot files run without the mandatory sandbox layers)")
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, prefix: str = "limits.") -> Limits:
        """Validated limits from a table (a league file's ``[limits]``, a stored config).

        Raises:
            ConfigError: one line naming the key (``prefix`` + name), the value and what is allowed.
        """
        if not isinstance(data, dict):
            raise ConfigError(f"{prefix.rstrip('.')} must be a table, e.g. [limits] move_time = 1.0")
        try:
            return cls(**data)
        except ValidationError as exc:
            raise ConfigError(explain(exc, cls, where=lambda loc: prefix + ".".join(map(str, loc)))) from None

    def with_(self, **changes: Any) -> Limits:
        try:
            return replace(self, **changes)
        except ValidationError as exc:
            raise ConfigError(explain(exc, type(self), where=lambda loc: "limits." + ".".join(map(str, loc)))) from None


def limit_value(name: str, value: Any, option: str) -> Any:
    """One limit from the command line, checked by the same schema: ``value`` is the option's text (read as a
    TOML value, so ``inf`` and ``512.5`` mean what they mean in a league file) or an already typed default.

    Raises:
        ConfigError: ``--memory = 512.5 is not allowed: an integer, 16 <= x <= 1048576``.
    """
    if isinstance(value, str):
        try:
            value = tomllib.loads(f"x = {value}")["x"]
        except tomllib.TOMLDecodeError:
            pass  # not a TOML value: checked (and refused) as the string it is
    try:
        Limits(**{name: value})
    except ValidationError as exc:
        raise ConfigError(explain(exc, Limits, where=lambda loc: option)) from None
    return value


class LimitType(click.ParamType):
    """A click option holding one limit: checked by the schema (:func:`limit_value`), so ``--move-time inf``
    and ``--memory 512.5`` are refused in the words a league file gets."""

    def __init__(self, field: str) -> None:
        self.field = field
        fields = cast(Any, Limits).__pydantic_fields__  # a pydantic dataclass: its fields are known at run time
        self.name = type_name(fields[field].annotation)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        option = param.opts[0] if param is not None and param.opts else self.field
        try:
            return limit_value(self.field, value, option)
        except ConfigError as exc:
            self.fail(str(exc).removeprefix(f"{option} = ").replace(" is not allowed: ", ": not allowed; must be ", 1),
                      param, ctx)
