"""OpenSpiel's bots as arena contestants: ``openspiel:mcts(...)``, ``openspiel:random``, and :func:`wrap` for any
``pyspiel.Bot`` or Python bot (``step(state) -> action``) built in a bot file (docs/openspiel.md).

They play ``openspiel:`` games and arena games that have an OpenSpiel twin (``Game.openspiel_twin()``: Hex, with
the same action numbers; ``size``/``pie`` become ``board_size``/``swap``). Each move the bot sees a pyspiel state
of the position: the ``openspiel:`` state's own, or the twin's, rebuilt from the arena state's history.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from bots.base import BaseBot, Limit, think_time
from games.errors import GameSpecError
from games.spec import Param


def pyspiel_game(game: Any) -> Any:
    """The pyspiel game of an ``openspiel:`` game or of an arena game's OpenSpiel twin, or None."""
    own = getattr(game, "pyspiel_game", None)
    if own is not None:
        return own
    twin = getattr(game, "openspiel_twin", lambda: None)()
    if twin is None:
        return None
    from games.openspiel import import_pyspiel  # optional: open_spiel
    return import_pyspiel().load_game(twin)


def _no_twin(game: Any, params: dict[str, Any]) -> str | None:
    from games.openspiel import import_pyspiel  # optional: open_spiel
    try:
        import_pyspiel()
    except GameSpecError as exc:  # refused where the bot is named, not in its process
        return str(exc).replace("openspiel: games need", "OpenSpiel bots need")
    if getattr(game, "pyspiel_game", None) is None and getattr(game, "openspiel_twin", lambda: None)() is None:
        return (f"{game} has no OpenSpiel twin (OpenSpiel bots play openspiel: games and arena games with a twin: "
                "hex)")
    return None


class OpenSpielBot(BaseBot):
    """An OpenSpiel bot behind arena's ``step(state, limit)``: made by ``factory(pyspiel_game, seat, seed)``."""

    name: ClassVar[str] = "openspiel"
    params: ClassVar[dict[str, Param]] = {}
    supports = staticmethod(_no_twin)

    def __init__(self, game: Any, seat: int, seed: int, factory: Callable[..., Any] | None = None,
                 **params: Any) -> None:
        super().__init__(game, seat, seed)
        self.pyspiel_game = pyspiel_game(game)
        if self.pyspiel_game is None:
            raise ValueError(_no_twin(game, {}))
        self.options = params
        self.bot = (factory or self.make)(self.pyspiel_game, seat, seed & 0x7FFFFFFF)

    def make(self, game: Any, seat: int, seed: int) -> Any:
        raise NotImplementedError

    def position(self, state: Any) -> Any:
        """The pyspiel state of ``state`` (the bot's own copy)."""
        own = getattr(state, "pyspiel_state", None)
        if own is not None:
            return own
        twin = self.pyspiel_game.new_initial_state()
        for action in state.history():  # a twin numbers its actions as arena does
            twin.apply_action(action)
        return twin

    def step(self, state: Any, limit: Limit) -> int:
        return int(self.bot.step(self.position(state)))


class OpenSpielRandomBot(OpenSpielBot):
    """``openspiel:random``: OpenSpiel's uniform random bot."""

    name: ClassVar[str] = "openspiel:random"

    def make(self, game: Any, seat: int, seed: int) -> Any:
        import pyspiel  # optional: open_spiel
        return pyspiel.make_uniform_random_bot(seat, seed)


class OpenSpielMCTSBot(OpenSpielBot):
    """``openspiel:mcts(...)``: OpenSpiel's (C++) MCTS with random rollouts; the move time caps each search."""

    name: ClassVar[str] = "openspiel:mcts"
    params: ClassVar[dict[str, Param]] = {
        "max_simulations": Param(int, 1000, "simulations per move", min=1, max=10**9),
        "uct_c": Param(float, 2.0, "UCT exploration constant", min=0.0, max=1000.0),
        "rollout_count": Param(int, 1, "random rollouts per leaf evaluation", min=1, max=10**6),
        "solve": Param(bool, False, "MCTS-Solver: back up proven wins and losses"),
        "max_memory_mb": Param(int, 100, "tree memory before OpenSpiel prunes it", min=1, max=10**6),
    }

    def make(self, game: Any, seat: int, seed: int) -> Any:
        import pyspiel  # optional: open_spiel
        p = {k: self.options.get(k, spec.default) for k, spec in self.params.items()}
        self._args = (game, pyspiel.RandomRolloutEvaluator(p["rollout_count"], seed), p["uct_c"],
                      p["max_simulations"], p["max_memory_mb"], p["solve"], seed, False)
        self._wall: float | None = None
        return pyspiel.MCTSBot(*self._args)

    def step(self, state: Any, limit: Limit) -> int:
        budget = think_time(limit)
        if budget is not None and budget != self._wall:  # OpenSpiel's own clock stops the search in time
            # optional: open_spiel
            import pyspiel
            self._wall = budget
            self.bot = pyspiel.MCTSBot(*self._args, pyspiel.ChildSelectionPolicy.UCT, max(0.01, budget * 0.9))
        return int(self.bot.step(self.position(state)))


def wrap(factory: Callable[[Any, int, int], Any]) -> type:
    """An arena ``Bot`` class from ``factory(pyspiel_game, seat, seed) -> bot`` (a ``pyspiel.Bot`` or any object
    with ``step(pyspiel_state) -> action``), for a bot file::

        from bots.openspiel_bots import wrap
        Bot = wrap(lambda game, seat, seed: pyspiel.make_uniform_random_bot(seat, seed))
    """
    class Bot(OpenSpielBot):
        name: ClassVar[str] = "openspiel-wrapped"

        def __init__(self, game: Any, seat: int, seed: int) -> None:
            super().__init__(game, seat, seed, factory)

    return Bot
