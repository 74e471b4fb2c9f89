"""When a failing bot is put on probation, and what its owner can do about it (docs/leagues.md, "Probation").

Two rules, either one is enough:

- a run: ``after`` failed games in a row (``probation_after``);
- a rate: at least ``failures`` failed games among the bot's last ``window`` games (``probation_failures`` of
  ``probation_window``), in a row or not. A bot that fails only from one seat alternates failures with normal
  games and never makes a run; the rate catches it.

"Failed" means any failure in the game (:func:`leaderboards.ratings.failure_reasons`: a termination other than
normal, or a move that had to be replaced by a random one). The window counts the bot's games in the order
they were stored, and only those since probation was last lifted, so a released bot starts clean.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from shlex import quote
from typing import Any


@dataclass(frozen=True)
class ProbationRule:
    """The league's probation settings (0 turns a rule off)."""

    after: int = 5
    """Failed games in a row."""
    window: int = 10
    """How many of the bot's latest games the rate looks at."""
    failures: int = 5
    """Failed games among the last ``window`` that put the bot on probation."""

    @classmethod
    def from_config(cls, config: Any) -> ProbationRule:
        """From a :class:`arena.league.config.LeagueConfig` or its stored dict (older stores: the defaults)."""
        get = config.get if isinstance(config, Mapping) else lambda k, d: getattr(config, k, d)
        defaults = cls()
        return cls(after=int(get("probation_after", defaults.after)),
                   window=int(get("probation_window", defaults.window)),
                   failures=int(get("probation_failures", defaults.failures)))

    @property
    def active(self) -> bool:
        return bool(self.after or self.failures)

    def reason(self, consecutive: int, recent: Sequence[bool], reasons: set[str], game_id: int) -> str | None:
        """Why a bot goes on probation after a failed game, or None.

        Args:
            consecutive: its failed games in a row, this one included.
            recent: whether each of its latest games failed (newest first, this one included, at most
                ``window``, only games since probation was last lifted).
            reasons: this game's failure kinds.
            game_id: this game.
        """
        last = f"last: {', '.join(sorted(reasons))} in game {game_id}"
        if self.after and consecutive >= self.after:
            return f"{self.after} failed games in a row ({last})"
        failed = sum(recent[:self.window])
        if self.failures and failed >= self.failures:
            return f"{failed} of its last {min(len(recent), self.window)} games failed ({last})"
        return None


def lift_hint(bot: Mapping[str, Any], league: str, db: str) -> str:
    """What lifts a bot's probation, for its kind of bot (a leaderboard row: ``name``, ``origin``, ``kind``).

    A bot of the league file cannot be resubmitted (`arena submit` refuses its name): its owner fixes the file
    and runs the league again, which enters a new version. A submitted bot is resubmitted. Either way
    `arena league release` lifts it as it is.
    """
    release = f"or lift it as it is: `arena league release {quote(bot['name'])} --league {quote(league)} " \
              f"--db {quote(db)}`"
    if bot.get("origin") == "config":
        what = "spec" if bot.get("kind") == "builtin" else "file"
        return f"fix its {what} in the league file and run `arena league run` again (a change enters a new " \
               f"version), {release}"
    return f"resubmit it with `arena submit` (a fixed file enters a new version), {release}"
