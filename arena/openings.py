"""Openings: league games that start from varied positions (``openings = { plies = N }`` or ``{ file = ... }``).

Two deterministic bots replay one game forever; an opening makes each round's games different while keeping the
pairing fair. A fixture's opening depends only on its game spec, its seed and its round, so every seat rotation of
a table in a round (the games that share a seed, :mod:`arena.schedule`) starts from the same opening: each opening
is played once in each seat order.

- ``plies = N``: N legal moves drawn uniformly at random from a generator seeded by the fixture's seed (public,
  like the seed: an opening is no secret). It stops early rather than end the game or cross a chance node (the
  game's chance stays keyed by the league's secret).
- ``file``: one opening per line, actions as integers; round r plays line ``r mod lines``.

The opening is applied before the first decision (bots are told its moves as they are told an opponent's), is
recorded in the game record (``info["opening"]``), and ``arena replay --verify`` checks the stored history starts
with it.

``arena match --openings plies=N`` (or ``file=PATH``) plays the same books: :func:`book_option` reads the option
into the league file's ``openings`` table (:class:`arena.league_schema.Openings`, one schema) and :func:`make_book`
checks it for both.
"""
from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import games as games_pkg
from arena.errors import ConfigError

if TYPE_CHECKING:
    from arena.league_schema import Openings


@dataclass(frozen=True)
class OpeningBook:
    """A league's openings: random ones of ``plies`` moves, or the ``lines`` of a file."""

    plies: int | None = None
    lines: tuple[tuple[int, ...], ...] = ()
    file: str | None = None

    def opening(self, game: str, seed: int, round_: int) -> tuple[int, ...]:
        """The opening of the fixtures of ``game`` with ``seed`` in ``round_``."""
        if self.plies is not None:
            return random_opening(game, self.plies, seed)
        return self.lines[round_ % len(self.lines)] if self.lines else ()

    def to_dict(self) -> dict[str, Any]:
        return {"plies": self.plies} if self.plies is not None else {"file": self.file, "lines": len(self.lines)}


def seeded(game: str, seed: int) -> Any:
    """The game as the referee plays it with ``seed`` (its seed parameter set)."""
    g = games_pkg.load(game)
    return g.with_params(seed=seed) if "seed" in g.params else g


def random_opening(game: str, plies: int, seed: int) -> tuple[int, ...]:
    """Up to ``plies`` uniformly random legal moves from the start of ``game`` seeded by ``seed``."""
    rng = random.Random(f"opening|{game}|{seed}")  # (str seeds are hashed with SHA-512: stable across runs)
    state = seeded(game, seed).new_initial_state()
    moves: list[int] = []
    while len(moves) < plies and not state.is_terminal() and state.current_player() >= 0:
        legal = state.legal_actions()
        action = rng.choice(legal)
        after = state.clone()
        after.apply_action(action)
        if after.is_terminal():
            break  # an opening never decides the game
        moves.append(action)
        state = after
    return tuple(moves)


def read_book(path: Path) -> tuple[tuple[int, ...], ...]:
    """The openings of a file: one per line, integers separated by spaces or commas; ``#`` comments.

    Raises:
        ConfigError: the file is missing, unreadable, has no opening or a line that is not integers.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"openings file {path} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read openings file {path}: {exc}") from None
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [p for p in re.split(r"[\s,]+", line) if p]
        if not all(re.fullmatch(r"\d{1,9}", p) for p in parts):
            raise ConfigError(f"openings file {path}, line {number}: {line[:60]!r} is not a list of actions "
                              "(non-negative integers separated by spaces or commas)")
        lines.append(tuple(int(p) for p in parts))
    if not lines:
        raise ConfigError(f"openings file {path} has no opening: write one per line (actions as integers)")
    return tuple(lines)


def check_book(book: OpeningBook, game: str) -> None:
    """Every line of a file book is legal in ``game`` as its spec sets it up and leaves it unfinished (a game whose
    set-up varies with the seed may still refuse a line: :func:`apply_opening` then plays it up to that move).

    Raises:
        ConfigError: naming the line and the action that is illegal (or that ends the game).
    """
    for number, line in enumerate(book.lines, 1):
        state = games_pkg.load(game).new_initial_state()
        for action in line:
            if state.is_terminal() or state.current_player() < 0 or action not in state.legal_actions():
                raise ConfigError(f"openings file {book.file}, opening {number}: action {action} is not a legal move "
                                  f"of {game} there; an opening lists moves from the start (no chance outcomes)")
            state.apply_action(action)
        if state.is_terminal():
            raise ConfigError(f"openings file {book.file}, opening {number} ends the game {game}; an opening must "
                              "leave the game to be played")


def apply_opening(state: Any, opening: Sequence[int]) -> list[int]:
    """Plays the opening's moves on ``state`` while each is legal, never ending the game; returns the moves played
    (what the record keeps). Chance nodes are not crossed: an opening lists decisions from the start."""
    played: list[int] = []
    for action in opening:
        if state.is_terminal() or state.current_player() < 0 or action not in state.legal_actions():
            break
        after = state.clone()
        after.apply_action(action)
        if after.is_terminal():
            break
        state.apply_action(action)
        played.append(action)
    return played


def make_book(table: Openings, base: Path, specs: Sequence[str], *,
              example: str = "openings = { plies = 4 }") -> OpeningBook:
    """The book an ``openings`` table names (a league file's, or ``--openings``'s), a file relative to ``base`` and
    checked against every game spec in ``specs``.

    Raises:
        ConfigError: not exactly one of ``plies`` and ``file``, or a bad file (:func:`read_book`, :func:`check_book`).
    """
    if (table.plies is None) == (table.file is None):
        raise ConfigError("openings needs exactly one of plies (random openings of N moves) or file (one per line), "
                          f"e.g. {example}")
    if table.plies is not None:
        return OpeningBook(plies=table.plies)
    assert table.file is not None  # for mypy: exactly one of the two is set
    book = OpeningBook(lines=read_book(base / table.file), file=table.file)
    for spec in specs:
        check_book(book, spec)
    return book


def book_option(text: str, spec: str, *, base: Path = Path()) -> OpeningBook:
    """The book of ``arena match --openings plies=4`` (or ``file=book.txt``, relative to ``base``): ``KEY=VALUE``
    pairs separated by commas, validated by the league file's ``openings`` schema and checked against ``spec``.

    Raises:
        ConfigError: one line: ``--openings: plies = 0 is not allowed: an integer, 1 <= x <= 200``.
    """
    # start-up: pydantic and the schema's models cost ~40 ms, and every game (bot processes and the sandbox's fork
    # server too) imports this module for apply_opening; bots never load pydantic
    from pydantic import ValidationError

    from arena.league_schema import Openings
    from arena.schema import explain
    table: dict[str, Any] = {}
    for part in text.split(","):
        key, eq, value = (x.strip() for x in part.partition("="))
        if not eq or not key:
            raise ConfigError(f"--openings: {part.strip()!r} is not KEY=VALUE; give plies=N (random openings of N "
                              "moves) or file=PATH (one opening per line)")
        table[key] = value if key == "file" else _toml_value(value)  # a path stays text; plies=4 is the integer 4
    try:
        openings = Openings.model_validate(table)
    except ValidationError as exc:
        raise ConfigError(f"--openings: {explain(exc, Openings)}") from None
    try:
        return make_book(openings, base, [spec], example="--openings plies=4")
    except ConfigError as exc:
        raise ConfigError(f"--openings: {exc}") from None


def _toml_value(value: str) -> Any:
    """``value`` as a TOML value would be read (``4`` an integer), else the text itself (refused by the schema)."""
    import tomllib  # start-up: only for --openings (every game imports this module)
    try:
        return tomllib.loads(f"x = {value}")["x"]
    except tomllib.TOMLDecodeError:
        return value
