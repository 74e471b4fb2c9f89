"""The sandbox for untrusted bot code: one hardened process per bot per game (see docs/sandbox.md).

- :mod:`~arena.sandbox.protocol`: length-prefixed JSON frames with a size cap (never pickle);
- :mod:`~arena.sandbox.host`: the bot side, ``python -m arena.sandbox.host``;
- :mod:`~arena.sandbox.spawn`, :mod:`~arena.sandbox.slots`, :mod:`~arena.sandbox.cgroups`,
  :mod:`~arena.sandbox.landlock`, :mod:`~arena.sandbox.seccomp`: the layers;
- :mod:`~arena.sandbox.proxy`: ``BotProcess``, the referee's handle with per-move deadlines;
- :mod:`~arena.sandbox.check`: the layer report (``arena sandbox check``).
"""
from __future__ import annotations

from arena.errors import ArenaError


class SandboxUnavailableError(ArenaError):
    """A bot file cannot run because mandatory sandbox layers are missing (and it is not trusted)."""
