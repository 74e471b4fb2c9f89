"""arena: the referee, the sandbox, leagues, the CLI and the dashboard.

``arena.play(game, bots, seed=...)`` plays one game in-process between bot objects (docs/contracts.md).
"""
from __future__ import annotations

# The game loop itself lives in arena/referee/loop.py (beside its sandboxed twin, arena/referee/sandboxed.py).
from arena.referee.loop import play

__version__ = "0.1.0"
__all__ = ["play", "__version__"]
