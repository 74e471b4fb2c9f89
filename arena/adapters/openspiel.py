"""arena's games inside OpenSpiel, and the one import for OpenSpiel users (docs/openspiel.md).

:func:`register` registers arena's games as OpenSpiel Python games ``arena_doublestep``, ``arena_nim``,
``arena_hex``, ``arena_colosseum`` and ``arena_sorry``: ``pyspiel.load_game("arena_hex(size=5)")`` then gives a
game that OpenSpiel's algorithms (``evaluate_bots``, Python ``MCTSBot``, ``get_all_states``) run on, with the
facts OpenSpiel asks for (``GameType``: chance, information, utility, players; ``GameInfo`` per parameters) and a
numpy observation tensor. The states are arena's compiled states behind pyspiel's Python-game interface: the
same action numbers, the same rules (``arena_hex`` is OpenSpiel's ``hex`` move for move).

The other direction lives with the games and bots: ``openspiel:NAME`` games (:mod:`games.openspiel`),
``openspiel:mcts``/``openspiel:random`` and :func:`wrap` (:mod:`bots.openspiel_bots`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import games as games_pkg
from bots.openspiel_bots import wrap
from games.openspiel import import_pyspiel

__all__ = ["GAMES", "observation_vector", "register", "wrap"]

GAMES = ("doublestep", "nim", "hex", "colosseum", "sorry")
"""arena's games registered by :func:`register`, as ``arena_<name>``."""
UNSET = -1
"""An integer parameter whose arena default is computed (Colosseum's size, Nim's pile): OpenSpiel's parameter
specification needs a concrete value, so -1 stands for "the arena default"."""
_MAX_LENGTH = 2**31 - 1  # OpenSpiel's int: a game from another package may state a larger bound


def observation_vector(observation: dict[str, Any]) -> list[float]:
    """The numbers of an arena observation in a fixed order: keys sorted, lists in order, dict values by sorted
    key, booleans as 0/1, None as -1; strings (names) left out."""
    out: list[float] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            return
        if value is None:
            out.append(-1.0)
        elif isinstance(value, (bool, int, float, np.integer, np.floating)):
            out.append(float(value))
        elif isinstance(value, dict):
            for key in sorted(value, key=str):
                walk(value[key])
        else:
            for item in value:
                walk(item)

    for key in sorted(observation):
        if key != "current_player":
            walk(observation[key])
    return out


def _spec_params(cls: Any) -> dict[str, Any]:
    """OpenSpiel's parameter specification of an arena game class (its defaults, UNSET for computed ones)."""
    spec: dict[str, Any] = {}
    for key, param in cls.params.items():
        if param.default is not None:
            spec[key] = param.default
        elif param.kind is int:
            spec[key] = UNSET
        elif param.kind is str:
            spec[key] = ""
    return spec


def _game_type(pyspiel: Any, name: str, cls: Any) -> Any:
    kinds = pyspiel.GameType
    chance = cls.has_chance if isinstance(cls.has_chance, bool) else True  # Nim's coin: chance by parameter
    return kinds(
        short_name=f"arena_{name}", long_name=f"arena {name}",
        dynamics=kinds.Dynamics.SEQUENTIAL,
        chance_mode=kinds.ChanceMode.EXPLICIT_STOCHASTIC if chance else kinds.ChanceMode.DETERMINISTIC,
        information=kinds.Information.PERFECT_INFORMATION,
        utility=kinds.Utility.ZERO_SUM,  # every arena game's returns sum to zero (tests/games/conformance.py)
        reward_model=kinds.RewardModel.TERMINAL,
        max_num_players=cls.max_players, min_num_players=cls.min_players,
        provides_information_state_string=True, provides_information_state_tensor=False,
        provides_observation_string=True, provides_observation_tensor=True,
        parameter_specification=_spec_params(cls))


def _make_classes(pyspiel: Any, name: str) -> tuple[Any, type]:
    cls = games_pkg.game_class(name)
    game_type = _game_type(pyspiel, name, cls)
    given_by_default = _spec_params(cls)

    class ArenaState(pyspiel.State):
        def __init__(self, game: Any, state: Any = None) -> None:
            super().__init__(game)
            self.arena_state = state if state is not None else game.arena_game.new_initial_state()

        def current_player(self) -> int:
            return int(self.arena_state.current_player())  # -1 chance, -4 terminal: OpenSpiel's ids too

        def _legal_actions(self, player: int) -> list[int]:
            return self.arena_state.legal_actions()

        def chance_outcomes(self) -> list[tuple[int, float]]:
            return self.arena_state.chance_outcomes()

        def _apply_action(self, action: int) -> None:
            self.arena_state.apply_action(action)

        def _action_to_string(self, player: int, action: int) -> str:
            return str(self.arena_state.action_to_string(action))

        def is_terminal(self) -> bool:
            return bool(self.arena_state.is_terminal())

        def returns(self) -> list[float]:
            return self.arena_state.returns()

        def __str__(self) -> str:
            return str(self.arena_state)

        def __deepcopy__(self, memo: Any) -> ArenaState:  # OpenSpiel clones Python states by deepcopy
            return ArenaState(self.get_game(), self.arena_state.clone())

    class Observer:
        """OpenSpiel's PyObserver: ``tensor`` (float32) and a ``dict`` view of it, filled from the state."""

        def __init__(self, size: int, params: Any) -> None:
            if params:
                raise ValueError(f"observation parameters are not supported; passed {params}")
            self.tensor = np.zeros(size, np.float32)
            self.dict = {"observation": self.tensor}

        def set_from(self, state: Any, player: int) -> None:
            values = observation_vector(state.arena_state.observation())
            self.tensor[:] = values  # a shape that changes is the game's error: numpy raises

        def string_from(self, state: Any, player: int) -> str:
            return str(state.arena_state)

    class ArenaGame(pyspiel.Game):
        def __init__(self, params: Any = None) -> None:
            given = {k: v for k, v in (params or {}).items() if not (v == UNSET and given_by_default.get(k) == UNSET)
                     and not (v == "" and given_by_default.get(k) == "")}
            self.arena_game = cls(**given)
            g = self.arena_game
            chance = len(g.new_initial_state().chance_outcomes()) or 0
            info = pyspiel.GameInfo(
                num_distinct_actions=g.num_distinct_actions(),
                max_chance_outcomes=g.num_distinct_actions() if game_type.chance_mode !=
                pyspiel.GameType.ChanceMode.DETERMINISTIC else chance,
                num_players=g.num_players(), min_utility=g.min_utility(), max_utility=g.max_utility(),
                utility_sum=0.0, max_game_length=min(int(g.max_game_length()), _MAX_LENGTH))
            super().__init__(game_type, info, params or {})
            self._observation_size = len(observation_vector(g.new_initial_state().observation()))

        def new_initial_state(self) -> ArenaState:
            return ArenaState(self)

        def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Observer:
            return Observer(self._observation_size, params)

    ArenaGame.__name__ = ArenaGame.__qualname__ = f"Arena{cls.__name__}"
    return game_type, ArenaGame


def register(names: tuple[str, ...] = GAMES) -> list[str]:
    """Registers arena's games in OpenSpiel (``arena_<name>``); returns the names registered. Registering twice
    is harmless.

    Raises:
        GameSpecError: open_spiel is not installed (the message says how to install it).
    """
    pyspiel = import_pyspiel()
    done = []
    known = set(pyspiel.registered_names())
    for name in names:
        short = f"arena_{name}"
        if short not in known:
            game_type, game_cls = _make_classes(pyspiel, name)
            pyspiel.register_game(game_type, game_cls)
        done.append(short)
    return done
