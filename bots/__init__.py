"""arena's built-in bots: ``bots.make(spec, game, seat, seed)`` (specs: shared/specs/bots.md)."""
from __future__ import annotations

from bots.base import BaseBot, Bot, Limit
from bots.registry import bot_class, bot_names, make, parse_bot_spec

__all__ = ["BaseBot", "Bot", "Limit", "bot_class", "bot_names", "make", "parse_bot_spec"]
