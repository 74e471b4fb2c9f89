"""Shared helpers of issue 33's attack round: the probe bot (tests/arena/hostile/pool_probe.py) in a role, its facts."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from arena.limits import Limits
from arena.referee.sandboxed import play_game
from arena.results.records import GameRecord
from tests.arena.sandbox_helpers import HOSTILE

GAME = "nim(n=200,k=1)"
LIMITS = Limits(move_time=5.0, first_move_time=30.0, memory_mb=48)


def role_bot(tmp_path: Path, role: str) -> str:
    """A folder bot running hostile/pool_probe.py with ``role``."""
    os.chmod(tmp_path, 0o755)
    d = tmp_path / f"pool_{role}"
    if not d.exists():
        d.mkdir()
        os.chmod(d, 0o755)
        shutil.copy(HOSTILE / "pool_probe.py", d / "bot.py")
        (d / "role.txt").write_text(role)
    return str(d)


def facts(record: GameRecord, seat: int = 0) -> dict[str, Any]:
    """What the probe in ``seat`` reported (it ends its game with ``FACTS <json>``)."""
    failure = next((f for f in record.failures if f.seat == seat), None)
    assert failure is not None, f"the probe never reported: {record.terminations}"
    match = re.search(r"FACTS (\{[^\n]*\})", failure.detail)
    assert match, failure.detail
    return json.loads(match[1])


def probe(tmp_path: Path, limits: Limits = LIMITS) -> dict[str, Any]:
    """Plays the probe in seat 0 (it takes the group the last game's seat 1 gave back) and returns its facts."""
    return facts(play_game(GAME, [role_bot(tmp_path, "probe"), "random"], 1, limits))


def sender(tmp_path: Path, role: str, limits: Limits = LIMITS) -> GameRecord:
    """Plays ``role`` in both seats, so that every pooled group was last a sender's."""
    bot = role_bot(tmp_path, role)
    record = play_game(GAME, [bot, bot], 1, limits)
    assert not record.failures, record.failures
    return record
