"""Sorry!, the classic 45-card race game for 2-4 players (rules: shared/specs/sorry.md; docs/sorry.md).

Every card draw is a chance node (the referee samples it); decisions are the options of the drawn card,
numbered as docs/sorry.md says. Option flags keep the spec's camelCase names (§9), so a spec string
reads like the rules: ``sorry(players=2,sorryFwd4=true)``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from games.base import Game, check
from games.sorry._sorry import SorryState
from games.sorry.naming import COLOURS, HOME, N_ACTIONS, SAFETY0, START
from games.spec import Param

MAX_DECISIONS = 5_000
"""A game's bound by rule (max_game_length): at this many decisions the referee ends it as a draw."""

__all__ = ["SorryGame", "SorryState", "COLOURS", "SEATS", "parse_square"]

SEATS: dict[int, tuple[int, ...]] = {2: (0, 2), 3: (0, 1, 2), 4: (0, 1, 2, 3)}
"""Board colours played by each player, by player count (§7: 2 players sit opposite each other)."""


class SorryGame(Game):
    name: ClassVar[str] = "sorry"
    description: ClassVar[str] = "Sorry!: race 4 pawns round the board and home, 45-card deck (chance draws)"
    length_rule: ClassVar[str] = (f"cards can undo any progress, so a game ends as a draw after {MAX_DECISIONS:,} "
                                  "decisions (the longest of 300 four-player games of random players: 863)")
    params: ClassVar[dict[str, Param]] = {
        "players": Param(int, 4, "number of players (2 play red and yellow, 3 red, blue and yellow)",
                         min=2, max=4),
        "seed": Param(int, 0, "unused: Sorry! has no random set-up (every draw is a chance node); "
                              "accepted so a referee can set a seed on every game", min=0, max=2**63 - 1),
        "twoDrawsAgain": Param(bool, True, "a 2 gives the same player another draw"),
        "sorryFwd4": Param(bool, False, "a Sorry! card may instead move a pawn forward 4 (2013 edition)"),
        "swapVictimSlides": Param(bool, False,
                                  "the pawn displaced by an 11 swap slides if it lands on a triangle"),
        "oneOutAtStart": Param(bool, False,
                               "each player starts with one pawn on its START exit (faster game)"),
        "pawnsPerPlayer": Param(int, 4, "pawns per player", min=1, max=4),
        "stopAtFirstWinner": Param(bool, True, "the game ends when the first player gets all pawns HOME "
                                               "(only true: placings are not implemented)"),
        "teamPlay": Param(bool, False, "team variant (out of scope: only false)"),
    }
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    has_chance: ClassVar[bool] = True

    def _validate(self) -> None:
        check(self.param("stopAtFirstWinner"),
              "stopAtFirstWinner=false (playing on for placings) is not supported; valid values: true")
        check(not self.param("teamPlay"),
              "teamPlay=true (the team variant) is out of scope; valid values: false")

    def num_players(self) -> int:
        return int(self.param("players"))

    def colours(self) -> tuple[int, ...]:
        """The board colour of each player (0 red, 1 blue, 2 yellow, 3 green)."""
        return SEATS[self.num_players()]

    @classmethod
    def render_board(cls, observation: Mapping[str, Any], names: Sequence[str] | None = None) -> Any:
        from games.sorry.board import render_sorry  # start-up: Rich, only when a board is drawn
        return render_sorry(observation, names)

    def new_initial_state(self) -> SorryState:
        p = self.param
        return SorryState(self, self.num_players(), p("twoDrawsAgain"), p("sorryFwd4"), p("swapVictimSlides"),
                          p("pawnsPerPlayer"), p("oneOutAtStart"))

    def num_distinct_actions(self) -> int:
        return N_ACTIONS

    def max_game_length(self) -> int:
        """Cards can undo any progress, so players who avoid winning could play for ever (random games end with
        probability 1): the rule bounds a game at :data:`MAX_DECISIONS` decisions, where the referee ends it as a
        draw. The longest of 300 games of four random players took 863."""
        return MAX_DECISIONS

    def min_utility(self) -> float:
        return -1.0 / (self.num_players() - 1)

    def position(self, pawns: Mapping[str | int, Sequence[int | str]], to_move: int | str = 0,
                 card: int | str | None = None, pile: Mapping[int, int] | None = None,
                 extra_draw: bool = False) -> SorryState:
        """A hand-built position for rule tests (its history is empty, so it cannot be replayed).

        Args:
            pawns: colour (name or 0..3) -> squares of its pawns, as ints (START -1, track 0..59,
                S_i 60+i, HOME 65) or names (``"St"``, ``"H"``, ``"S3"``, ``"14"``). Missing pawns of a
                colour in play are in START; colours not listed keep all their pawns in START.
            to_move: the player (0..n-1) or colour name whose turn it is.
            card: the card drawn (1..12, 13 or ``"sorry"``), or None for the chance node before a draw.
            pile: the draw pile (card -> count); default: the full deck.
            extra_draw: mark the turn as an extra draw after a 2 (cosmetic).
        """
        state = self.new_initial_state()
        colours = self.colours()
        ppp = self.param("pawnsPerPlayer")
        board = [[START if (c in colours and k < ppp) else HOME for k in range(4)] for c in range(4)]
        for key, squares in pawns.items():
            c = COLOURS.index(key.lower()) if isinstance(key, str) else int(key)
            if c not in colours:
                raise ValueError(f"{COLOURS[c]} is not in play with {self.num_players()} players")
            if len(squares) > ppp:
                raise ValueError(f"{COLOURS[c]} has only {ppp} pawns")
            for k, sq in enumerate(squares):
                board[c][k] = parse_square(sq)
        player = colours.index(COLOURS.index(to_move.lower())) if isinstance(to_move, str) else int(to_move)
        value = 0 if card is None else (13 if str(card).lower() in ("sorry", "sorry!", "13") else int(card))
        state._py_set_position(board, player, value, pile, extra_draw)
        return state


def parse_square(square: int | str) -> int:
    """A square as an int: ``"St"``/``"start"`` -1, ``"H"``/``"home"`` 65, ``"S3"`` 63, ``"14"`` 14."""
    if isinstance(square, int):
        return square
    text = square.strip().lower()
    if text in ("st", "start"):
        return START
    if text in ("h", "home"):
        return HOME
    if text.startswith("s") and text[1:].isdigit() and int(text[1:]) < 5:
        return SAFETY0 + int(text[1:])
    return int(text)
