"""arena: the referee, the sandbox, leagues, the CLI and the dashboard.

``arena.play(game, bots, seed=...)`` plays one game in-process between bot objects (docs/contracts.md).
"""
from __future__ import annotations

# Imported eagerly: the submodule arena/play.py has the same name as the function, and a lazy
# attribute would be shadowed by the module object as soon as anything imports `arena.play`.
from arena.play import play

__version__ = "0.1.0"
__all__ = ["play", "__version__"]
