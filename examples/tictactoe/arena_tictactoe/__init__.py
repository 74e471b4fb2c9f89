"""Tic-tac-toe as an arena game: the worked example of docs/adding-a-game.md.

One package, nothing in arena changed: the Game declares its facts (players, draws, utilities) and what
tools need (text and Rich boards, move names, the substitute move for a failed bot); the State implements
the hooks of :class:`games.python_state.PythonState`. ``pyproject.toml`` registers it under the
``arena.games`` entry point, so ``arena match tictactoe random random``, leagues, sandboxed bots, the TUI and
``arena replay`` all find it.
"""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from games import TERMINAL, Game
from games.python_state import PythonState
from games.spec import Param

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
MARKS = ("x", "o")


class TicTacToeGame(Game):
    name: ClassVar[str] = "tictactoe"
    description: ClassVar[str] = "three in a row on a 3 x 3 board (the adding-a-game example)"
    params: ClassVar[dict[str, Param]] = {
        "first": Param(str, "x", "who moves first", choices=("x", "o")),
    }
    has_draws: ClassVar[bool] = True  # a full board with no line
    length_rule: ClassVar[str] = "at most 9 moves: every move fills one of the 9 cells"

    def new_initial_state(self) -> TicTacToeState:
        return TicTacToeState(self)

    def num_distinct_actions(self) -> int:
        return 9

    def max_game_length(self) -> int:
        return 9

    @classmethod
    def render_board(cls, observation: Mapping[str, Any], names: Sequence[str] | None = None) -> Any:
        from rich.text import Text  # only when the TUI draws a board
        out = Text()
        for row in range(3):
            for col in range(3):
                cell = observation["board"][3 * row + col]
                out.append(f" {MARKS[cell] if cell >= 0 else '·'} ", style=("bold red", "bold blue")[cell]
                           if cell >= 0 else "grey50")
            out.append("\n")
        player = observation["current_player"]
        if player == TERMINAL:
            out.append("game over", style="bold")
        else:
            out.append(f"{names[player] if names else MARKS[player]} to move")
        return out

    def substitute_action(self, state: Any, legal: Sequence[int], rng: random.Random) -> int:
        # This game's rule for a failed bot: the centre when free, else a random free square.
        return 4 if 4 in legal else rng.choice(list(legal))


class TicTacToeState(PythonState):
    def __init__(self, game: TicTacToeGame) -> None:
        super().__init__(game)
        self.board = [-1] * 9
        self.to_move = 0 if game.param("first") == "x" else 1
        self.winner: int | None = None

    def _current_player(self) -> int:
        if self.winner is not None or all(c >= 0 for c in self.board):
            return TERMINAL
        return self.to_move

    def _legal_actions(self) -> list[int]:
        return [i for i, c in enumerate(self.board) if c < 0]

    def _apply(self, action: int) -> None:
        self.board[action] = self.to_move
        if any(all(self.board[i] == self.to_move for i in line) for line in LINES):
            self.winner = self.to_move
        self.to_move = 1 - self.to_move

    def _returns(self) -> list[float]:
        if self.winner is None:
            return [0.0, 0.0]
        return [1.0 if seat == self.winner else -1.0 for seat in range(2)]

    def _action_to_string(self, action: int) -> str:
        return "abc"[action % 3] + str(action // 3 + 1)

    def _observation(self) -> dict[str, Any]:
        return {"board": list(self.board)}

    def _clone(self) -> TicTacToeState:
        c = TicTacToeState.__new__(TicTacToeState)
        c.__dict__.update(self.__dict__)
        c.board = list(self.board)
        return c

    def __str__(self) -> str:
        rows = ["".join(MARKS[c] if c >= 0 else "." for c in self.board[r:r + 3]) for r in (0, 3, 6)]
        return "\n".join(rows)
