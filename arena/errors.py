"""arena's exception hierarchy (the referee turns BotError into recorded results, never crashes)."""
from __future__ import annotations

from typing import ClassVar

from arena.results.outcome import Termination


class ArenaError(Exception):
    """Base class of arena's own errors."""


class ConfigError(ArenaError, ValueError):
    """A bad command line, league file or limit: the user must change what they asked for (exit code 2)."""


class BotError(ArenaError):
    """A bot failed during a game; ``reason`` is the termination reason recorded for its seat."""

    reason: ClassVar[Termination] = Termination.CRASH


class BotTimeoutError(BotError, TimeoutError):
    reason = Termination.TIMEOUT


class BotCrashedError(BotError):
    reason = Termination.CRASH


class BotMemoryError(BotError):
    reason = Termination.MEMORY


class IllegalMoveError(BotError):
    reason = Termination.ILLEGAL


class ProtocolError(BotError):
    reason = Termination.PROTOCOL


class MachineOverloadedError(ArenaError):
    """The machine, not the bot, made a move late: the bot waited for a CPU longer than the referee may
    credit it (arena/sandbox/proxy.py). Not a BotError: the game is abandoned, not forfeited, and a league
    plays it again on its next run."""
