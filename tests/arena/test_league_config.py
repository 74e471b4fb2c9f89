"""Bad league files: one clear line on stderr, exit code 2, and nothing written (no store file)."""
from __future__ import annotations

import pytest

from arena.league import load_config
from tests.leaderboards.support import arena, write

GOOD = """
name = "cfg"
games = ["nim"]
games_per_pairing = 2
database = "league.sqlite"
bots = ["random", "greedy"]
"""


@pytest.mark.parametrize("text,message", [
    (GOOD.replace('["nim"]', '["chess"]'), "unknown game 'chess'; valid games: doublestep, nim"),
    (GOOD.replace('bots = ["random", "greedy"]', 'bots = ["random", {file = "missing_bot.py"}]'),
     "bot file 'missing_bot.py' not found"),
    (GOOD.replace("games_per_pairing = 2", "games_per_pairing = -2"), "'games_per_pairing' must be a positive integer"),
    (GOOD.replace("games_per_pairing = 2", "games_per_pairing = 3"), "must be a multiple of the 2 seats of nim"),
    (GOOD.replace('name = "cfg"', 'name = "cfg'), "malformed TOML"),
    (GOOD + "colour = 'red'\n", "unknown key 'colour'; valid keys: name, games"),
    (GOOD.replace('"greedy"', '"nobot"'), "unknown bot 'nobot'; valid bots: random"),
    (GOOD.replace('["nim"]', '["nim", "hex(size=5)"]'), "bot 'greedy' cannot play hex(size=5)"),
    (GOOD.replace('bots = ["random", "greedy"]', 'bots = ["random"]'), "nim needs at least 2 bots"),
    (GOOD + "[limits]\nmove_time = -1\n", "move_time must be a positive number"),
])
def test_a_bad_league_file_is_one_line_exit_2_and_writes_nothing(tmp_path, text, message):
    config = write(tmp_path / "league.toml", text)
    p = arena(tmp_path, "league", "run", str(config))
    assert p.returncode == 2, p.stderr
    assert message in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["league.toml"]  # no store, no bot copies


def test_a_missing_league_file_is_a_usage_error(tmp_path):
    p = arena(tmp_path, "league", "run", "nope.toml")
    assert p.returncode == 2 and "league file nope.toml not found" in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_good_file_parses_with_canonical_specs_and_paths(tmp_path):
    write(tmp_path / "b.py", "class Bot: pass\n")
    config = write(tmp_path / "league.toml", GOOD.replace('"greedy"]', '"greedy", {name = "mine", file = "b.py", '
                                                                        'games = ["nim(k=3)"], trusted = true}]'))
    cfg = load_config(config)
    assert cfg.games == ("nim",) and cfg.database == tmp_path / "league.sqlite"
    mine = cfg.bots[-1]
    assert mine.file == (tmp_path / "b.py").resolve() and mine.source == "class Bot: pass\n"
    assert mine.games is not None and mine.trusted


def test_the_demo_league_equals_the_example_file():
    from pathlib import Path

    from arena.commands.demo import DEMO
    from arena.league import parse_config
    example = load_config(Path(__file__).parents[2] / "examples" / "leagues" / "demo.toml")
    demo = parse_config(DEMO)
    assert (example.name, example.games, example.bots, example.games_per_pairing, example.seed) == \
        (demo.name, demo.games, demo.bots, demo.games_per_pairing, demo.seed)


@pytest.mark.parametrize("name", ["demo", "course", "sorry"])
def test_every_example_league_file_is_valid(name):
    from pathlib import Path
    cfg = load_config(Path(__file__).parents[2] / "examples" / "leagues" / f"{name}.toml")
    assert cfg.name and cfg.games and len(cfg.bots) >= 2
