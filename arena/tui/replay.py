"""The replay model: a game rebuilt from (spec, history), one observation per step, computed on demand.

Step 0 is the initial state and step ``i`` the state after ``history[:i]``. Only the public State API is
used (``games.load(spec).new_initial_state()``, ``apply_action``, ``observation()``), so a replay also
checks that the stored history is legal: an illegal action ends the replay at the step before it.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import games
from arena.results.moves import OPENING, Movers


class Replay:
    """Steps through a stored game. Observations are cached as the cursor moves forward."""

    def __init__(self, spec: str, history: Sequence[int], opening: int = 0) -> None:
        self.game = games.load(spec)
        self.spec = str(self.game)
        self.history = list(history)
        self._state = self.game.new_initial_state()
        self._observations: list[dict[str, Any]] = [self._state.observation()]
        self._labels: list[str] = []  # _labels[i]: the name of history[i], taken in the state before it
        self._movers: list[int] = []
        self._decisions: list[int | None] = []  # _decisions[i]: which bot move history[i] was (None: chance, opening)
        self._numbering = Movers(opening)  # one numbering: arena/results/moves.py
        self._openings: list[bool] = []
        self.error: str | None = None
        """Why the replay stopped early (an action the rules refuse), or None."""

    @property
    def game_name(self) -> str:
        return str(self.game.name)

    def __len__(self) -> int:
        """The number of steps (actions + 1); less when the history broke the rules."""
        return len(self.history) + 1 if self.error is None else len(self._observations)

    def _advance_to(self, step: int) -> None:
        while len(self._observations) <= step and self.error is None:
            i = len(self._observations) - 1
            action = self.history[i]
            mover = self._state.current_player()
            try:
                label = self.game.action_name(self._state, action)  # the game names its moves
                self._state.apply_action(action)
            except ValueError as exc:
                self.error = f"action {i + 1} ({action}) is not legal here: {exc}"
                return
            self._labels.append(label)
            kind = self._numbering.next(i, mover)
            self._decisions.append(kind if isinstance(kind, int) else None)
            self._openings.append(kind == OPENING)
            self._movers.append(mover)
            self._observations.append(self._state.observation())

    def clamp(self, step: int) -> int:
        """``step`` limited to 0..len-1 (computing forward as needed to know the length)."""
        step = max(0, step)
        self._advance_to(min(step, len(self.history)))
        return min(step, len(self) - 1)

    def observation(self, step: int) -> dict[str, Any]:
        """The observation after ``step`` actions."""
        return self._observations[self.clamp(step)]

    def bot_move(self, step: int) -> int | None:
        """Which bot move (0-based, chance outcomes not counted) led to ``step``; None for step 0 or a chance
        outcome. The games list counts bot moves, so the replay says "move k/n" in the same units."""
        step = self.clamp(step)
        return None if step == 0 else self._decisions[step - 1]

    def bot_moves_until(self, step: int) -> int:
        """Bot moves among the first ``step`` actions."""
        step = self.clamp(step)
        return sum(d is not None for d in self._decisions[:step])

    def bot_moves_before(self, step: int) -> list[tuple[int, int]]:
        """(seat, bot move) of each bot move among the first ``step`` actions, in order (bot moves as
        :meth:`bot_move` numbers them)."""
        step = self.clamp(step)
        return [(seat, k) for seat, k in zip(self._movers[:step], self._decisions[:step]) if k is not None]

    def is_opening(self, step: int) -> bool:
        """Whether the action that led to ``step`` was an opening move (played before any bot was asked)."""
        step = self.clamp(step)
        return step > 0 and self._openings[step - 1]

    def move(self, step: int) -> tuple[int, str] | None:
        """(who moved, action name) of the action that led to ``step``; None at step 0. Chance is -1."""
        step = self.clamp(step)
        if step == 0:
            return None
        return self._movers[step - 1], self._labels[step - 1]
