"""arena: the referee, the sandbox, leagues, the CLI and the dashboard.

``arena.play(game, bots, seed=...)`` plays one game in-process between bot objects (docs/contracts.md).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.referee.loop import play

__version__ = "0.1.0"
__all__ = ["play", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy: importing any arena module (the store's foundations: arena.errors, arena.results, ...) runs this file,
    # and the game loop would load the bot registry and every game with it. (No submodule is named `play`, so the
    # attribute is never shadowed by one.)
    if name == "play":
        # start-up: the referee loop loads the bot registry and the games; only arena.play's callers pay for it
        from arena.referee.loop import play
        return play
    raise AttributeError(f"module 'arena' has no attribute {name!r}")
