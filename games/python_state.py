"""The State API for games written in Python: a game from outside arena (an ``arena.games`` entry point, an
OpenSpiel game) subclasses :class:`PythonState` and implements a handful of hooks; the public API
(validation, history, clone, observation, pickling by spec and history) is written here once, with the same
behaviour as the compiled :class:`games._core.CoreState`.

Hooks: ``_current_player()``, ``_legal_actions()`` (ascending), ``_apply(action)`` (a legal action),
``_returns()`` (at a terminal state), and optionally ``_chance_outcomes()``, ``_action_to_string(action)``,
``_observation()`` (a JSON-serialisable dict) and ``__str__``. ``clone()`` copies the object with
``copy.deepcopy`` unless ``_clone()`` is overridden.
"""
from __future__ import annotations

import copy
import json
import random
from typing import Any

from games.base import CHANCE, TERMINAL
from games.errors import IllegalActionError, InvalidActionError


def random_move(state: Any, rng: random.Random) -> int:
    """A uniformly random legal action of any state with the State API, or at a chance node an outcome drawn
    by its probability."""
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        return rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0]
    return rng.choice(state.legal_actions())


def _rebuild(game: Any, history: list[int]) -> Any:
    state = game.new_initial_state()  # (the game unpickles itself: no games.registry here, which imports this)
    state.apply_actions(history)
    return state


class PythonState:
    """A game state with the State API; ``game`` is the Game it belongs to."""

    def __init__(self, game: Any) -> None:
        self.game = game
        self.n_players = game.num_players()
        self.n_actions = game.num_distinct_actions()
        self._history: list[int] = []

    # -- hooks -------------------------------------------------------------------------------------------
    def _current_player(self) -> int:
        raise NotImplementedError

    def _legal_actions(self) -> list[int]:
        raise NotImplementedError

    def _apply(self, action: int) -> None:
        raise NotImplementedError

    def _returns(self) -> list[float]:
        raise NotImplementedError

    def _chance_outcomes(self) -> list[tuple[int, float]]:
        return []

    def _action_to_string(self, action: int) -> str:
        return str(action)

    def _observation(self) -> dict[str, Any]:
        return {"text": str(self)}

    def _clone(self) -> PythonState:
        return copy.deepcopy(self)

    # -- the State API ----------------------------------------------------------------------------------
    def current_player(self) -> int:
        """The seat to move, ``CHANCE`` (-1) at a chance node, or ``TERMINAL`` (-4)."""
        return self._current_player()

    def is_terminal(self) -> bool:
        return self._current_player() == TERMINAL

    def is_chance_node(self) -> bool:
        return self._current_player() == CHANCE

    def is_simultaneous_node(self) -> bool:
        return False

    def num_players(self) -> int:
        return self.n_players

    def legal_actions(self, player: int | None = None) -> list[int]:
        if self.is_terminal() or (player is not None and player != self._current_player()):
            return []
        return list(self._legal_actions())

    def legal_actions_mask(self, player: int | None = None) -> list[int]:
        mask = [0] * self.n_actions
        for a in self.legal_actions(player):
            mask[a] = 1
        return mask

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return list(self._chance_outcomes()) if self.is_chance_node() else []

    def apply_action(self, action: Any) -> None:
        """Applies a legal action (or chance outcome).

        Raises:
            InvalidActionError: not an integer action id.
            IllegalActionError: not legal here; the state is unchanged.
        """
        if isinstance(action, bool) or not hasattr(action, "__index__"):
            raise InvalidActionError(f"an action must be an int, not {action!r}")
        a = action.__index__()
        if self.is_terminal():
            raise IllegalActionError(f"action {a} is not legal: the game is over")
        legal = self.legal_actions()
        if a not in legal:
            shown = ", ".join(map(str, legal[:20])) + (", ..." if len(legal) > 20 else "")
            raise IllegalActionError(f"action {a} is not legal here; legal actions: {shown}")
        self._apply(a)
        self._history.append(a)

    def apply_actions(self, actions: Any) -> None:
        for a in actions:
            self.apply_action(a)

    def child(self, action: int) -> PythonState:
        s = self.clone()
        s.apply_action(action)
        return s

    def returns(self) -> list[float]:
        """One float per seat: the final result at a terminal state, zeros before."""
        if not self.is_terminal():
            return [0.0] * self.n_players
        return [float(r) for r in self._returns()]

    def player_return(self, player: int) -> float:
        return self.returns()[player]

    def clone(self) -> PythonState:
        c = self._clone()
        c._history = list(self._history)
        return c

    def history(self) -> list[int]:
        return list(self._history)

    def move_number(self) -> int:
        return len(self._history)

    def action_to_string(self, *args: Any) -> str:
        """A readable name for an action (``action_to_string(a)`` or OpenSpiel's ``(player, a)``)."""
        action = args[-1]
        if isinstance(action, bool) or not hasattr(action, "__index__"):
            raise InvalidActionError(f"an action must be an int, not {action!r}")
        a = action.__index__()
        if not 0 <= a < self.n_actions:
            raise InvalidActionError(f"{a} is not an action id of {self.game} (0..{self.n_actions - 1})")
        return self._action_to_string(a)

    def string_to_action(self, text: str) -> int:
        text = str(text).strip()
        for a in self.legal_actions():
            if self._action_to_string(a) == text:
                return a
        raise InvalidActionError(f"{text!r} names no legal action here")

    def observation(self, player: int | None = None) -> dict[str, Any]:
        """A JSON-serialisable dict of everything public, plus ``current_player``."""
        obs = dict(self._observation())
        obs["current_player"] = self._current_player()
        return obs

    def observation_string(self, player: int | None = None) -> str:
        return str(self)

    def random_playout(self, seed: int) -> int:
        """Plays this state to the end with uniformly random moves (chance by its probabilities); returns the
        number of actions applied, which are not added to ``history()`` (the compiled states' test hook)."""
        rng = random.Random(seed)
        n = 0
        while not self.is_terminal():
            self._apply(random_move(self, rng))
            n += 1
        return n

    def _state_key(self) -> Any:
        return (self._current_player(), json.dumps(self._observation(), sort_keys=True, default=str))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.game} after {len(self._history)} actions>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PythonState) or type(self) is not type(other):
            return NotImplemented
        return str(self.game) == str(other.game) and self._state_key() == other._state_key()

    __hash__ = None  # type: ignore[assignment]  # mutable, like the compiled states

    def __reduce__(self) -> Any:
        return (_rebuild, (self.game, list(self._history)))
