"""The Game base class: parameters, spec strings and game facts. States live in the compiled modules.

A game subclass declares its facts as class variables and its parameters as a ``params`` schema;
``new_initial_state()`` builds the state (compiled for arena's own games, any object with the State API for
a game from elsewhere). Everything else (spec parsing, ``str(game)``, equality, pickling by spec) is here, once.

The game protocol (docs/adding-a-game.md): tools never re-derive a game's facts, they ask the game.
Facts: ``num_players()``, ``has_chance``, ``has_draws``, ``min_utility()``/``max_utility()``,
``perfect_information``. Behaviour tools need: ``render_text(state)`` (the CLI's board),
``render_board(observation, names)`` (the TUI's Rich board, drawn from an observation so a replay can show
any step), ``action_name(state, action)`` and ``substitute_action(state, legal, rng)`` (the move played for
a failed bot under ``on_failure = "random_move"``).
"""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from games.errors import GameSpecError
from games.spec import Param, format_spec, parse_spec, resolve_params

Player = int
Action = int
CHANCE: Player = -1
TERMINAL: Player = -4


class Game:
    """An immutable game configuration (OpenSpiel's ``Game``)."""

    name: ClassVar[str]
    """The registry name used in spec strings."""
    description: ClassVar[str] = ""
    """One line for ``arena games``."""
    params: ClassVar[dict[str, Param]] = {}
    """The parameter schema, in the order ``str(game)`` writes them."""
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    has_chance: ClassVar[bool] = False
    perfect_information: ClassVar[bool] = True
    length_rule: ClassVar[str] = "at most max_game_length() decisions"
    """How long a game can last by its rules (:meth:`max_game_length` is the figure), for ``arena games``: the
    referee ends a game that reaches it as a draw, as it does one that lasts ``max_game_seconds``."""
    has_draws: ClassVar[bool] = False
    """Whether the rules allow a drawn result (ratings then give a draw a prior probability; an adjudicated
    tie is rated as a draw either way)."""

    def __init__(self, **params: Any) -> None:
        self._given = dict(params)
        self._params = resolve_params(f"game {self.name!r}", self.params, params)
        # Keep explicitly given values in their converted form, in schema order, for str(game).
        self._given = {k: self._params[k] for k in self.params if k in params}
        self._validate()

    # -- hooks for subclasses --------------------------------------------------------------------
    def _validate(self) -> None:
        """Cross-parameter checks; raise GameSpecError with a helpful message."""

    def new_initial_state(self) -> Any:
        """The state before the first move."""
        raise NotImplementedError

    def num_players(self) -> int:
        return self.min_players

    def num_distinct_actions(self) -> int:
        """Action ids are 0..num_distinct_actions()-1 (chance outcomes included)."""
        raise NotImplementedError

    def max_game_length(self) -> int:
        """An upper bound on the number of decisions (not chance events) in one game."""
        raise NotImplementedError

    def min_utility(self) -> float:
        return -1.0

    def max_utility(self) -> float:
        return 1.0

    # -- what tools ask the game (defaults suit most games) ----------------------------------------
    def render_text(self, state: Any) -> str:
        """The board as text, for ``arena replay`` and logs."""
        return str(state)

    @classmethod
    def render_board(cls, observation: Mapping[str, Any], names: Sequence[str] | None = None) -> Any:
        """The board as a Rich renderable for the TUI, drawn from ``state.observation()`` alone (a replay
        rebuilds observations, never states). Default: the observation's ``text`` field when it has one
        (``str(state)``), else its fields one per line."""
        from rich.text import Text  # start-up: the TUI's dependency, imported only when a board is drawn
        text = observation.get("text")
        if isinstance(text, str):
            return Text(text)
        return Text("\n".join(f"{k}: {v}" for k, v in observation.items()))

    def action_name(self, state: Any, action: int) -> str:
        """The name of ``action`` in ``state`` (before it is applied)."""
        return str(state.action_to_string(action))

    def substitute_action(self, state: Any, legal: Sequence[int], rng: random.Random) -> int:
        """The move played for a bot that failed under ``on_failure = "random_move"``: a uniformly random
        legal action unless the game has its own rule (Colosseum: the COMP424 engine's random walk). Must
        draw from ``rng`` only, so that ``arena replay --verify`` can re-draw it."""
        return rng.choice(list(legal))

    def observation_arrays(self, state: Any) -> dict[str, Any]:
        """The observation's numeric fields as numpy arrays, for bots that compute with numpy: lists become
        arrays (``hex``: ``board``; ``colosseum``: ``walls`` as the course's bool ``(M, M, 4)``), numbers 0-d
        arrays; names and other non-numeric fields are left out. The compiled states keep bit-packed or
        C-array layouts, so these are copies (one small copy each); see docs/adding-a-game.md."""
        import numpy as np  # start-up: numpy only for the bots that ask
        out: dict[str, Any] = {}
        for key, value in state.observation().items():
            try:
                array = np.asarray(value)
            except (TypeError, ValueError):  # ragged or mixed fields
                continue
            if array.dtype.kind in "biuf":
                out[key] = array
        return out

    def openspiel_twin(self) -> str | None:
        """The ``pyspiel.load_game`` spec of the same game with the same action numbers, if OpenSpiel has one
        (OpenSpiel's bots then play this game: docs/openspiel.md)."""
        return None

    # -- shared behaviour ------------------------------------------------------------------------
    def param(self, key: str) -> Any:
        """The value of one parameter (defaults filled in)."""
        return self._params[key]

    def get_parameters(self) -> dict[str, Any]:
        """Every parameter with its value, defaults included (OpenSpiel's name)."""
        return dict(self._params)

    def with_params(self, **changes: Any) -> Game:
        """A copy of this game with some parameters changed (e.g. a referee setting ``seed``)."""
        return type(self)(**{**self._given, **changes})

    def __str__(self) -> str:
        return format_spec(self.name, self._given)

    def __repr__(self) -> str:
        return f"games.load({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # rebuilt by its own class from its spec, not through games.registry (which imports this module)
        return (type(self).from_canonical_spec, (str(self),))

    @classmethod
    def from_canonical_spec(cls, spec: str) -> Game:
        """The game ``str(game)`` gave (``cls`` is the class of ``spec``'s game)."""
        return cls(**parse_spec(spec)[1])

    @classmethod
    def describe_params(cls) -> Mapping[str, Param]:
        return cls.params


def check(condition: bool, message: str) -> None:
    """Raises GameSpecError(message) unless condition holds (for ``_validate``)."""
    if not condition:
        raise GameSpecError(message)
