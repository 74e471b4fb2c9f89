"""Resource limits of a sandboxed bot, configurable per match and per league.

One schema (a strict pydantic dataclass, arena/schema.py) checks every limit from a league file, the store
or the command line: type, finite, range. The same fields generate the table in docs/leagues.md.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import asdict, replace
from dataclasses import dataclass as std_dataclass
from dataclasses import field as std_field
from typing import Annotated, Any, cast

import click
from pydantic import AfterValidator, Field, ValidationError, model_validator
from pydantic.dataclasses import dataclass
from pydantic_core import ArgsKwargs

from arena.errors import ConfigError
from arena.schema import STRICT, explain, type_name
from bots.base import Limit

MAX_DECISIONS = 100_000
"""No game has more decisions, whatever its own bound (a Double Step on 100,000-square lanes) or the limits say: the
referee ends it as a draw there, so a stored record stays under ~10 MB (~52 bytes of JSON per action, a chance
outcome before each decision at most)."""
DAY = 86_400.0
"""The longest move time one can ask for (a finite cap: larger values overflow the sandbox's timers)."""


# -- game clocks (docs/leagues.md, "Game clocks") -------------------------------------------------------------------
# A bot's clock starts at the base; each of its moves is charged what the sandbox charges a move (wall time less the
# credit for waiting on a loaded machine, the first move paying for start-up: arena/sandbox/clock.py), then the
# increment is added; with moves per period the base is added again after every ``moves`` of its moves (cutechess's
# ``tc=40/60+0.6``). A move may use at most the time left (capped by ``move_time`` only where the limits set it); a
# bot whose clock runs out has flagged: it loses on ``timeout``.
MAX_PERIOD = MAX_DECISIONS
"""The most moves per period (no game has more decisions)."""
FORMS = ('"BASE+INCREMENT" or "MOVES/BASE+INCREMENT" in seconds (BASE > 0), e.g. "60+0.5" or "40/60+0.5" '
         '(no increment: "60")')
"""What a time control may be, in words (every refusal names it)."""

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_FORM = re.compile(rf"(?:(\d+)/)?({_NUMBER})(?:\+({_NUMBER}))?")


@std_dataclass(frozen=True)
class TimeControl:
    """A parsed time control: ``base`` seconds, ``increment`` seconds added after each move, and ``moves`` per period
    (None: one period, the whole game)."""

    base: float
    increment: float = 0.0
    moves: int | None = None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """``"60+0.5"``, ``"40/60+0.5"``, ``"60"``, ``"40/60"`` (spaces around the parts are allowed).

        Raises:
            ValueError: the text is not one of :data:`FORMS`, or a number is out of range (one line).
        """
        m = _FORM.fullmatch(text.replace(" ", "")) if isinstance(text, str) else None
        if m is None:
            raise ValueError(f"not a time control; {FORMS}")
        moves = int(m.group(1)) if m.group(1) is not None else None
        base, increment = float(m.group(2)), float(m.group(3) or 0.0)
        if not (0 < base <= DAY and math.isfinite(base)):
            raise ValueError(f"the base must be 0 < seconds <= {DAY:g}; {FORMS}")
        if not (0 <= increment <= DAY):
            raise ValueError(f"the increment must be 0 <= seconds <= {DAY:g}; {FORMS}")
        if moves is not None and not 1 <= moves <= MAX_PERIOD:
            raise ValueError(f"the moves per period must be 1 <= moves <= {MAX_PERIOD}; {FORMS}")
        return cls(base, increment, moves)

    def __str__(self) -> str:
        return (f"{self.moves}/" if self.moves else "") + f"{self.base:g}" + (f"+{self.increment:g}" if self.increment
                                                                              else "")

    def total(self, moves: int) -> float:
        """The most clock time one bot is given over ``moves`` own moves: the base, once more for every period
        completed, and the increments."""
        refills = (moves - 1) // self.moves if self.moves and moves > 0 else 0
        return self.base * (1 + refills) + self.increment * moves


@std_dataclass
class GameClock:
    """One bot's clock in one game: what is left, the moves it made, what was left after each of them."""

    control: TimeControl
    left: float = -1.0
    moves: int = 0
    """Own moves charged so far (flagged and failed ones included: they count towards the period)."""
    after: list[float] = std_field(default_factory=list)
    """Seconds left after each own move (the increment and any refill included; 0 once flagged or in debt)."""
    flagged: bool = False

    def __post_init__(self) -> None:
        if self.left < 0:
            self.left = self.control.base

    @property
    def moves_to_go(self) -> int | None:
        """Moves left in this period, this one included (None: no periods)."""
        period = self.control.moves
        return None if period is None else period - self.moves % period

    def charge(self, seconds: float) -> None:
        """A move was made in time and charged ``seconds``: the clock is left less that, plus the increment and,
        at a period's end, the base. A move answered within the deadline's grace but past the clock leaves the
        clock below 0 (a debt the increment pays first), so the grace never adds time: a bot that overran by the
        grace every move gained ~40% on a 1+0.1 clock while the clock said 0 after each move."""
        self.left -= max(0.0, seconds)
        self._moved()

    def flag(self) -> None:
        """The bot ran out of time on this move: its clock stays at 0."""
        self.left, self.flagged = 0.0, True
        self.moves += 1
        self.after.append(0.0)

    def _moved(self) -> None:
        self.moves += 1
        self.left += self.control.increment
        if self.control.moves and self.moves % self.control.moves == 0:
            self.left += self.control.base
        self.after.append(round(max(0.0, self.left), 4))


UNCAPPED = ("move_time", "first_move_time")
"""With a game clock, these cap a single move only where they are given: left out, they are DAY (no cap)."""


def _time_control(text: str | None) -> str | None:
    if text is not None:
        TimeControl.parse(text)  # a ValueError is the field's refusal (arena.schema.explain names the forms)
    return text


@dataclass(frozen=True, config=STRICT)
class Limits:
    """Per-bot limits. Defaults follow the COMP424 course: 2 s a move, 30 s for the first, 500 MB."""

    move_time: Annotated[float, Field(gt=0, le=DAY)] = 2.0
    """Wall-clock seconds per move; also what built-in bots think on every move, the first included. With
    `time_control`: a cap on any one move, only where given (left out: no cap)."""
    first_move_time: Annotated[float, Field(gt=0, le=DAY)] = 30.0
    """Wall-clock seconds allowed for a bot's first move: start-up (imports, tables) plus one move. With
    `time_control`: a cap on the first move, only where given (left out: no cap)."""
    time_control: Annotated[str | None, AfterValidator(_time_control), Field(json_schema_extra={
        "type": "string", "allowed": FORMS + " (or left out)"})] = None
    """A game clock per bot (left out: none, every move has `move_time`): `"60+0.5"` is 60 s for the whole game
    plus 0.5 s after each move, `"40/60+0.5"` adds the 60 s again after every 40 moves. Each move is charged as a
    move is (start-up in the first); a bot whose clock runs out loses on timeout (docs/leagues.md, "Game
    clocks")."""
    memory_mb: Annotated[int, Field(ge=16, le=1_048_576)] = 500
    """Memory limit of the bot process and its children, in MB."""
    cpu_seconds: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    """Whole-game CPU backstop in seconds (left out: derived from the move times and the game length, or the
    clock)."""
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
    bound (with a clock: twice every seat's whole clock), plus a minute: a game whose every move keeps its limit
    never reaches it)."""

    @model_validator(mode="before")
    @classmethod
    def _uncapped(cls, data: Any) -> Any:
        """With a time control, a move time left out is no cap (DAY), not the 2 s default."""
        if isinstance(data, ArgsKwargs) and not data.args and data.kwargs and data.kwargs.get("time_control"):
            return ArgsKwargs((), {**{name: DAY for name in UNCAPPED}, **data.kwargs})
        return data

    def clock(self) -> TimeControl | None:
        """The game clock's time control (None: none, every move has ``move_time``)."""
        return None if self.time_control is None else TimeControl.parse(self.time_control)

    def game_seconds(self, seats: int, moves: int | None) -> float | None:
        """The wall-clock bound of one game of ``seats`` seats and at most ``moves`` decisions (None: no bound,
        ``debug`` or no known length)."""
        if self.debug:
            return None
        if self.max_game_seconds is not None:
            return self.max_game_seconds
        if moves is None:
            return None
        return self.moves_seconds(seats, moves) + 60

    def moves_seconds(self, seats: int, moves: int) -> float:
        """What the moves of a game of ``seats`` seats and ``moves`` decisions may take by their limits, twice over
        (a move may be credited up to twice its limit for waiting on a loaded machine): each seat's first move and
        the move time for every decision; with a clock, every seat's whole clock (the base once per period) and
        the increments, plus each decision's grace (a tenth of a second), never more than the move caps allow."""
        by_moves = seats * self.first_move_time + 2 * moves * self.move_time
        tc = self.clock()
        if tc is None:
            return by_moves
        periods = 1 + ((moves - 1) // tc.moves if tc.moves and moves > 0 else 0)
        return min(by_moves, 2 * (seats * tc.base + (periods - 1) * tc.base + moves * tc.increment) + 0.1 * moves)

    def bot_seconds(self, moves: int) -> float:
        """The most time one bot's moves may be charged in a game of ``moves`` decisions (its CPU limit's
        ground): its first move and a move time for each decision; with a clock, at most its whole clock."""
        by_moves = self.first_move_time + self.move_time * moves
        tc = self.clock()
        return by_moves if tc is None else min(by_moves, tc.total(moves) + 0.1 * moves)

    def startup_time(self) -> float:
        """The first move's limit as the bot starts (its start-up counts in it): ``first_move_time``, and with a
        clock never more than the base."""
        tc = self.clock()
        return self.first_move_time if tc is None else min(self.first_move_time, tc.base)
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

    def allowance(self, move_number: int, clock: GameClock | None = None) -> Limit:
        """What a bot's ``move_number``-th own move (0 = first) may use, computed here only (the referee hands it
        to the bot; the sandbox's time account, arena/sandbox/clock.py, charges it): the hard time (the first
        move's covers start-up), the thinking budget (``move_time`` on every move) and the memory.

        With the bot's game ``clock``: the hard time is what is left on it (never more than a move time the limits
        set), and the bot is told its clock (time left, increment, moves to go) to share it itself (no ``think``)."""
        if clock is None:
            return Limit(time=self.time_for(move_number), memory_mb=self.memory_mb, first_move=move_number == 0,
                         think=self.move_time)
        left = max(0.0, clock.left)  # (a debt left by the last move's grace: no time at all)
        return Limit(time=min(left, self.time_for(move_number)), memory_mb=self.memory_mb,
                     first_move=move_number == 0, clock=left, increment=clock.control.increment,
                     moves_to_go=clock.moves_to_go)

    def relaxed(self) -> list[str]:
        """The sandbox layers these limits turn off, in words (empty: the full sandbox)."""
        out = []
        if self.debug:
            out.append("limits.debug = true (no sandbox, no time limits)")
        if self.trusted:
            out.append("limits.trusted = true (bot files run without the mandatory sandbox layers)")
        return out

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if out["time_control"] is None:  # stored configs and records without a clock read as they always did
            del out["time_control"]
        return out

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
        """These limits with ``changes``; turning a clock on leaves the move times not in ``changes`` uncapped."""
        if changes.get("time_control") and self.time_control is None:
            changes = {**{name: DAY for name in UNCAPPED}, **changes}
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
    if isinstance(value, str) and name != "time_control":  # a time control is text: "60" is not the number 60
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
