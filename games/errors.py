"""Errors raised by the game engines."""
from __future__ import annotations


class GameSpecError(ValueError):
    """A game (or bot) spec string is malformed, names an unknown game or parameter, or has a bad value."""


class InvalidActionError(ValueError):
    """An action (or action string) that cannot be parsed or is not an action of this game at all."""


class IllegalActionError(ValueError):
    """A well-formed action that is not legal in the current state. The state is left unchanged."""
