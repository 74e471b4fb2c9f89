"""Limits from the command line go through the same schema as a league file's [limits]."""
from __future__ import annotations

import pytest

from arena.errors import ConfigError
from arena.limits import Limits
from tests.leaderboards.support import arena


@pytest.mark.parametrize("option,value,message", [
    ("--move-time", "inf", "Invalid value for '--move-time': inf: not allowed; must be a finite number, 0 < x"),
    ("--move-time", "nan", "Invalid value for '--move-time': nan: not allowed; must be a finite number"),
    ("--first-move-time", "0", "Invalid value for '--first-move-time': 0: not allowed; must be a finite number"),
    ("--memory", "512.5", "Invalid value for '--memory': 512.5: not allowed; must be an integer, 16 <= x"),
    ("--memory", "true", "Invalid value for '--memory': true: not allowed; must be an integer"),
])
def test_match_limits_are_checked_by_the_schema(tmp_path, option, value, message):
    p = arena(tmp_path, "match", "nim", "random", "random", "--games", "1", option, value)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], p.stderr


def test_limits_from_a_table_name_the_key_and_keep_exact_types():
    limits = Limits.from_dict({"move_time": 1, "memory_mb": 64})
    assert limits.move_time == 1.0 and type(limits.move_time) is float and limits.memory_mb == 64
    with pytest.raises(ConfigError, match=r"^limits\.debug = 1 is not allowed: true or false"):
        Limits.from_dict({"debug": 1})
    with pytest.raises(ConfigError, match=r"^limits\.memory_mb = true is not allowed: an integer"):
        Limits.from_dict({"memory_mb": True})
    with pytest.raises(ConfigError, match=r"^limits\.move_time = inf is not allowed"):
        Limits().with_(move_time=float("inf"))
