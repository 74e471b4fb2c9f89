"""OpenSpiel games as arena games: ``openspiel:<name>(params)`` is any game ``pyspiel.load_game`` accepts that
has two or more players, sequential moves, perfect information and explicit chance (docs/openspiel.md).

The spec after ``openspiel:`` is OpenSpiel's own (``openspiel:connect_four``, ``openspiel:hex(board_size=5)``),
passed to ``pyspiel.load_game`` unchanged; arena's action ids are OpenSpiel's. A state wraps a pyspiel state
through :class:`games.python_state.PythonState`, so the referee, the sandboxed bot host (which rebuilds the game
from its spec: pyspiel lives in site-packages, which a bot process sees), the store, ``arena replay --verify``,
ratings and the TUI (a text board from ``str(state)``) treat it like any other game.

Imperfect-information games are refused: arena hands every bot the whole state, which would show it the
hidden cards.
"""
from __future__ import annotations

from typing import Any, ClassVar

from games.base import Game
from games.errors import GameSpecError
from games.python_state import PythonState

INSTALL_HINT = 'install the extra with: pip install "arena[openspiel]"'


def import_pyspiel() -> Any:
    """pyspiel, or one clear line saying how to get it.

    Raises:
        GameSpecError: open_spiel is not installed.
    """
    try:
        # optional: open_spiel (said when missing)
        import pyspiel
    except ImportError as exc:
        raise GameSpecError(f"openspiel: games need open_spiel, which is not installed here ({exc}); "
                            f"{INSTALL_HINT}") from None
    return pyspiel


class OpenSpielGame(Game):
    """One OpenSpiel game, built from the text after ``openspiel:``."""

    name: ClassVar[str] = "openspiel"
    description: ClassVar[str] = "any sequential, perfect-information OpenSpiel game: openspiel:NAME(params)"
    has_draws: ClassVar[bool] = True
    """OpenSpiel's GameType does not say whether a game can end level; most two-player ones can (tic-tac-toe,
    connect four), so ratings keep a draw probability (a game without draws is still rated correctly)."""

    def __init__(self, text: str, pyspiel_game: Any) -> None:  # noqa: D107 - built by from_spec
        self._text = text
        self._given = {}
        # OpenSpiel's parameters with the game's own name: two games without parameters are still two games
        self._params = {"openspiel_game": pyspiel_game.get_type().short_name, **pyspiel_game.get_parameters()}
        self.pyspiel_game = pyspiel_game
        kind = pyspiel_game.get_type()
        self.kind = kind
        self._players = pyspiel_game.num_players()

    @classmethod
    def from_spec(cls, text: str) -> OpenSpielGame:
        """Loads ``text`` (``connect_four``, ``hex(board_size=5)``) with pyspiel and checks arena can run it.

        Raises:
            GameSpecError: open_spiel missing, an unknown game or parameter (OpenSpiel's own message), or a
                game arena cannot referee (one player, simultaneous moves, hidden information, sampled chance).
        """
        pyspiel = import_pyspiel()
        text = "".join(text.split())
        if not text:
            raise GameSpecError("openspiel: needs a game name, e.g. openspiel:tic_tac_toe")
        name = text.split("(", 1)[0]
        if name not in pyspiel.registered_names():  # before load_game, which prints every name to stderr
            raise GameSpecError(f"openspiel:{text}: OpenSpiel has no game {name!r} (see python -c 'import pyspiel; "
                                "print(pyspiel.registered_names())')")
        try:
            game = pyspiel.load_game(text)
        except (pyspiel.SpielError, RuntimeError, ValueError) as exc:
            raise GameSpecError(f"openspiel:{text}: OpenSpiel refuses it: "
                               f"{str(exc).strip().splitlines()[0][:300]}") from None
        kind = game.get_type()
        problems = []
        if game.num_players() < 2:
            problems.append(f"it has {game.num_players()} player (arena needs two or more)")
        if kind.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
            problems.append("its moves are simultaneous (arena referees sequential games)")
        if kind.information != pyspiel.GameType.Information.PERFECT_INFORMATION:
            problems.append("it has hidden information (arena shows every bot the whole state)")
        if kind.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
            problems.append("its chance is sampled, not listed (arena draws chance itself, from its key)")
        if problems:
            raise GameSpecError(f"openspiel:{text} cannot be played in arena: {'; '.join(problems)}")
        return cls(text, game)

    # -- facts ---------------------------------------------------------------------------------------
    @property
    def has_chance(self) -> bool:  # type: ignore[override]
        return self.kind.chance_mode != self.kind.chance_mode.DETERMINISTIC

    @property
    def perfect_information(self) -> bool:  # type: ignore[override]
        return True

    def num_players(self) -> int:
        return self._players

    def num_distinct_actions(self) -> int:
        # OpenSpiel numbers chance outcomes apart from moves; arena's action ids cover both.
        return max(self.pyspiel_game.num_distinct_actions(), self.pyspiel_game.max_chance_outcomes())

    def max_game_length(self) -> int:
        return int(self.pyspiel_game.max_game_length())

    def min_utility(self) -> float:
        return float(self.pyspiel_game.min_utility())

    def max_utility(self) -> float:
        return float(self.pyspiel_game.max_utility())

    def new_initial_state(self) -> OpenSpielState:
        return OpenSpielState(self, self.pyspiel_game.new_initial_state())

    # -- identity: the spec string -------------------------------------------------------------------
    def with_params(self, **changes: Any) -> Game:
        if changes:
            raise GameSpecError(f"{self} takes its parameters in OpenSpiel's spec, not {sorted(changes)}")
        return self

    def observation_arrays(self, state: Any) -> dict[str, Any]:
        """``observation``: OpenSpiel's observation tensor for the player to move (player 0 at chance and at
        the end), in the game's tensor shape, when the game provides one."""
        # start-up: numpy only for the bots that ask
        import numpy as np
        out = super().observation_arrays(state)
        if self.kind.provides_observation_tensor:
            player = max(0, state.current_player())
            tensor = np.asarray(state.pyspiel_state.observation_tensor(player), dtype=np.float32)
            out["observation"] = tensor.reshape(self.pyspiel_game.observation_tensor_shape())
        return out

    def openspiel_twin(self) -> str:
        return self._text

    def __str__(self) -> str:
        return f"openspiel:{self._text}"

    @classmethod
    def from_canonical_spec(cls, spec: str) -> OpenSpielGame:  # (unpickling: str(game) has the prefix)
        return cls.from_spec(spec.split(":", 1)[1])


class OpenSpielState(PythonState):
    """A pyspiel state behind arena's State API (OpenSpiel's player ids -1 chance, -4 terminal are arena's)."""

    def __init__(self, game: OpenSpielGame, state: Any) -> None:
        super().__init__(game)
        self.pyspiel_state = state

    def _current_player(self) -> int:
        return self.pyspiel_state.current_player()  # pybind11 gives Python ints

    def _legal_actions(self) -> list[int]:
        return self.pyspiel_state.legal_actions()

    def _chance_outcomes(self) -> list[tuple[int, float]]:
        return sorted((int(a), float(p)) for a, p in self.pyspiel_state.chance_outcomes() if p > 0)

    def _apply(self, action: int) -> None:
        self.pyspiel_state.apply_action(action)

    def _returns(self) -> list[float]:
        return [float(r) for r in self.pyspiel_state.returns()]

    def _action_to_string(self, action: int) -> str:
        return str(self.pyspiel_state.action_to_string(self.pyspiel_state.current_player(), action))

    def _observation(self) -> dict[str, Any]:
        return {"text": str(self.pyspiel_state)}

    def _clone(self) -> OpenSpielState:
        return OpenSpielState(self.game, self.pyspiel_state.clone())

    def __str__(self) -> str:
        return str(self.pyspiel_state)
