"""Opening books read from a league file's ``openings`` table or ``arena match --openings plies=N|file=PATH``: one
schema for both (:class:`arena.league.keys.Openings`), a file's lines checked against every game they are used in.
The book itself and how a game applies it: :mod:`arena.referee.openings`.
"""
from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

import games as games_pkg
from arena.errors import ConfigError
from arena.league.keys import Openings
from arena.referee.openings import OpeningBook
from arena.schema import explain


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
    set-up varies with the seed may still refuse a line: :func:`arena.referee.openings.apply_opening` then plays it
    up to that move).

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
    try:
        return tomllib.loads(f"x = {value}")["x"]
    except tomllib.TOMLDecodeError:
        return value
