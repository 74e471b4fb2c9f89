"""arena: the referee, the sandbox, leagues, the CLI and the dashboard.

``arena.play(game, bots, seed=...)`` plays one game in-process between bot objects (DESIGN.md).
"""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Lazy so that `import arena` stays cheap for the CLI and the sandboxed bot host.
    if name == "play":
        from arena.play import play
        return play
    raise AttributeError(f"module 'arena' has no attribute {name!r}")
