"""Helpers for the league tests: run the CLI in a directory, write league files and bot files."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import psutil

from arena.results.records import GameRecord
from leaderboards import ledger
from leaderboards.schema import GAME_JSON, transaction
from leaderboards.store import Store

RANDOM_BOT = """
import random

class Bot:
    def __init__(self, game, seat, seed):
        self.rng = random.Random(seed)

    def step(self, state, limit):
        return self.rng.choice(state.legal_actions())
"""

RAISING_BOT = """
class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        raise RuntimeError("this bot always fails")
"""

SYNTAX_ERROR_BOT = """
class Bot:
    def step(self, state, limit)
        return 1
"""

# Passes validation (seat 0) but fails every league game it plays from seat 1.
SEAT1_FAILING_BOT = """
class Bot:
    def __init__(self, game, seat, seed):
        self.seat = seat

    def step(self, state, limit):
        if self.seat == 1:
            raise RuntimeError("I cannot play second")
        return state.legal_actions()[0]
"""


def arena(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Runs ``arena ARGS`` in ``cwd`` (a fresh interpreter, as a user would)."""
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], check=False, cwd=cwd, capture_output=True,
                          text=True,
                          timeout=timeout)


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def tamper(store: Store, game_id: int, **fields: Any) -> None:
    """Overwrites stored fields of a game (tests of ``arena replay --verify``): what no arena code may do."""
    sets = ", ".join(f"{k}=?" for k in fields)
    values = [json.dumps(v) if k in GAME_JSON else v for k, v in fields.items()]
    with transaction(store.conn):
        store.conn.execute(f"UPDATE games SET {sets} WHERE id=?", (*values, game_id))


def store_game(store: Store, league_id: int, key: str, base_game: str, round_: int, seats: Any,
               record: dict[str, Any] | GameRecord, **rule: Any) -> int | None:
    """:func:`leaderboards.ledger.record_game` (the writer's one call) for a record the test wrote as plain data."""
    typed = record if isinstance(record, GameRecord) else GameRecord.from_dict(record)
    return ledger.record_game(store, league_id, key, base_game, round_, seats, typed, **rule)


def descendants(pid: int) -> list[psutil.Process]:
    """The process tree under ``pid`` (workers, fork servers, sandboxed bots); they come and go while we look, so
    the walk is retried when one vanishes mid-walk."""
    for _ in range(50):
        try:
            return psutil.Process(pid).children(recursive=True)
        except psutil.NoSuchProcess:
            if not psutil.pid_exists(pid):
                return []
    raise AssertionError(f"could not list the children of {pid}")
