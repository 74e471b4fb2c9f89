"""A final's league table (arena/tournament/finals.py): what `arena final` writes and what `arena serve` rebuilds
from the stored config are the same league, for every format."""
from __future__ import annotations

from pathlib import Path

import pytest

from arena.league.config import parse_config
from arena.tournament import finals


@pytest.mark.parametrize("fmt", finals.FORMATS)
def test_a_stored_final_rebuilds_the_same_league(tmp_path: Path, fmt: str) -> None:
    ladder = {"name": "course", "games": ["nim"], "seed": 9, "limits": {"move_time": 1.5, "max_game_seconds": None}}
    table = finals.final_table(ladder, tmp_path / "c.sqlite", fmt, ["nim(n=7)"], 3)
    config = parse_config(table, where="final")
    assert config.name == "course final" and config.games == ("nim(n=7)",) and config.format == fmt
    assert config.tournament["field_from"] == "course" and config.limits.move_time == 1.5
    again = parse_config(finals.table_of(config.to_dict(), tmp_path / "c.sqlite"), where="stored")
    assert again.to_dict() == config.to_dict()
