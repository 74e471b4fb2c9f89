"""Resource limits of a sandboxed bot, configurable per match and per league."""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from arena.errors import ConfigError


@dataclass(frozen=True)
class Limits:
    """Per-bot limits. Defaults follow the COMP424 course: 2 s a move, 30 s for the first, 500 MB."""

    move_time: float = 2.0
    """Wall-clock seconds per move."""
    first_move_time: float = 30.0
    """Wall-clock seconds for a bot's first move (set-up time)."""
    memory_mb: int = 500
    """Memory limit of the bot process (and its children)."""
    cpu_seconds: int | None = None
    """Whole-game CPU backstop in seconds (None: derived from the move times and the game length)."""
    max_processes: int = 16
    """Processes and threads the bot may have at once."""
    max_open_files: int = 64
    """Open file descriptors."""
    max_file_size_mb: int = 0
    """Largest file the bot may write (0: none)."""
    trusted: bool = False
    """True: the bot code is trusted (runs even when mandatory sandbox layers are missing)."""
    debug: bool = False
    """Trusted debug mode: no sandbox and no time limits, so an author can use a debugger. Never for untrusted code."""

    def __post_init__(self) -> None:
        for name in ("move_time", "first_move_time"):
            value = getattr(self, name)
            if not value > 0:
                raise ConfigError(f"{name} must be a positive number of seconds, got {value!r}")
        if self.memory_mb < 16:
            raise ConfigError(f"memory_mb must be at least 16, got {self.memory_mb!r}")
        if self.max_processes < 1 or self.max_open_files < 8 or self.max_file_size_mb < 0:
            raise ConfigError("max_processes >= 1, max_open_files >= 8 and max_file_size_mb >= 0 are required")

    def time_for(self, move_number: int) -> float:
        """The limit for a bot's ``move_number``-th own move (0 = first)."""
        return self.first_move_time if move_number == 0 else self.move_time

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Limits":
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown limit {sorted(unknown)[0]!r}; valid limits: {', '.join(cls.__dataclass_fields__)}")
        return cls(**data)

    def with_(self, **changes: Any) -> "Limits":
        return replace(self, **changes)
