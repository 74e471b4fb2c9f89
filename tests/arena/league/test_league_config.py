"""Bad league files: one clear line on stderr, exit code 2, and nothing written (no store file)."""
from __future__ import annotations

import pytest

from arena.league.config import load_config
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
    (GOOD.replace("games_per_pairing = 2", "games_per_pairing = -2"),
     "games_per_pairing = -2 is not allowed: an integer, 1 <= x"),
    (GOOD.replace("games_per_pairing = 2", "games_per_pairing = 3"), "must be a multiple of the 2 seats of nim"),
    (GOOD.replace('name = "cfg"', 'name = "cfg'), "malformed TOML"),
    (GOOD + "colour = 'red'\n", "unknown key 'colour'; valid keys: name, games"),
    (GOOD.replace('"greedy"', '"nobot"'), "unknown bot 'nobot'; valid bots: random"),
    (GOOD.replace('["nim"]', '["nim", "hex(size=5)"]'), "bot 'greedy' cannot play hex(size=5)"),
    (GOOD.replace('bots = ["random", "greedy"]', 'bots = ["random"]'), "nim needs at least 2 bots"),
    (GOOD + "[limits]\nmove_time = -1\n", "limits.move_time = -1 is not allowed: a finite number, 0 < x <= 86400"),
    (GOOD + "[limits]\ndebug = \"false\"\n",
     'limits.debug = "false" is not allowed: true or false (a TOML boolean, not a string)'),
    (GOOD + "[limits]\nmove_time = inf\n", "limits.move_time = inf is not allowed: a finite number"),
    (GOOD + "[limits]\nmemory_mb = 512.5\n", "limits.memory_mb = 512.5 is not allowed: an integer, 16 <= x"),
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
    from arena.league.config import parse_config
    example = load_config(Path(__file__).parents[3] / "examples" / "leagues" / "demo.toml")
    demo = parse_config(DEMO)
    assert (example.name, example.games, example.bots, example.games_per_pairing, example.seed) == \
        (demo.name, demo.games, demo.bots, demo.games_per_pairing, demo.seed)


@pytest.mark.parametrize("name", ["demo", "course", "sorry", "cup"])
def test_every_example_league_file_is_valid(name):
    from pathlib import Path
    cfg = load_config(Path(__file__).parents[3] / "examples" / "leagues" / f"{name}.toml")
    assert cfg.name and cfg.games and len(cfg.bots) >= 2


# Every key of every table: its type (TOML booleans only for booleans, integers only where integers are meant;
# Python's bool is an int, so `true` must not pass as 1), finite, in range; one line naming the key, the value
# and what is allowed.
BAD_VALUES = [
    ('[limits]\ndebug = "false"', 'limits.debug = "false" is not allowed: true or false'),
    ('[limits]\ntrusted = "false"', 'limits.trusted = "false" is not allowed: true or false'),
    ("[limits]\ntrusted = 1", "limits.trusted = 1 is not allowed: true or false"),
    ("[limits]\ncpu_seconds = 0", "limits.cpu_seconds = 0 is not allowed: an integer, 1 <= x"),
    ("[limits]\ncpu_seconds = -5", "limits.cpu_seconds = -5 is not allowed: an integer, 1 <= x"),
    ("[limits]\ncpu_seconds = 2.5", "limits.cpu_seconds = 2.5 is not allowed: an integer"),
    ("[limits]\nmax_processes = 4.5", "limits.max_processes = 4.5 is not allowed: an integer, 1 <= x <= 4096"),
    ("[limits]\nmax_open_files = 7", "limits.max_open_files = 7 is not allowed: an integer, 8 <= x"),
    ("[limits]\nmax_file_size_mb = -1", "limits.max_file_size_mb = -1 is not allowed: an integer, 0 <= x"),
    ("[limits]\nmove_time = inf", "limits.move_time = inf is not allowed: a finite number, 0 < x <= 86400"),
    ("[limits]\nmove_time = nan", "limits.move_time = nan is not allowed: a finite number"),
    ("[limits]\nfirst_move_time = 1e400", "limits.first_move_time = inf is not allowed: a finite number"),
    ("[limits]\nfirst_move_time = 0", "limits.first_move_time = 0 is not allowed: a finite number, 0 < x"),
    ('[limits]\nmove_time = "2"', 'limits.move_time = "2" is not allowed: a finite number'),
    ("[limits]\nmove_time = true", "limits.move_time = true is not allowed: a finite number"),
    ("[limits]\nmemory_mb = 512.5", "limits.memory_mb = 512.5 is not allowed: an integer, 16 <= x"),
    ("[limits]\nmemory_mb = true", "limits.memory_mb = true is not allowed: an integer, 16 <= x"),
    ('[limits]\nmemory_mb = "lots"', 'limits.memory_mb = "lots" is not allowed: an integer'),
    ("[limits]\nmemory_mb = 15", "limits.memory_mb = 15 is not allowed: an integer, 16 <= x"),
    ("[limits]\nmax_bot_mb = 0", "limits.max_bot_mb = 0 is not allowed: a finite number, 0 < x <= 1024"),
    ("[limits]\nbogus = 1", "unknown key 'limits.bogus'; valid keys: move_time, first_move_time"),
    ("seed = -1", "seed = -1 is not allowed: an integer, 0 <= x <= 2**63-1"),
    ("seed = true", "seed = true is not allowed: an integer"),
    ("seed = 1.5", "seed = 1.5 is not allowed: an integer"),
    ("concurrency = 0", "concurrency = 0 is not allowed: an integer, 1 <= x <= 1024"),
    ("concurrency = true", "concurrency = true is not allowed: an integer"),
    ("probation_after = 1.5", "probation_after = 1.5 is not allowed: an integer, 0 <= x"),
    ("probation_after = -1", "probation_after = -1 is not allowed: an integer, 0 <= x"),
    ("probation_window = 0", "probation_window = 0 is not allowed: an integer, 1 <= x"),
    ("probation_failures = 11", "probation_failures = 11 is not allowed: at most probation_window (10)"),
    ('on_failure = "forfeit"', 'on_failure = "forfeit" is not allowed: one of "lose", "random_move"'),
    ("on_failure = true", 'on_failure = true is not allowed: one of "lose", "random_move"'),
    ('tables = "some"', 'tables = "some" is not allowed: one of "auto", "all", "balanced"'),
    ("database = 3", "database = 3 is not allowed: a non-empty string"),
    ('database = ""', 'database = "" is not allowed: a non-empty string'),
    ("limits = 3", "limits = 3 is not allowed: a table of the [limits] keys below"),
]


@pytest.mark.parametrize("extra,message", BAD_VALUES)
def test_every_key_is_typed_and_ranged_with_one_line_naming_file_key_value_and_what_is_allowed(
        tmp_path, extra, message):
    from arena.errors import ConfigError
    base = GOOD.replace('database = "league.sqlite"\n', "")
    text = base + extra + "\n" if extra.startswith("[") else base.replace("bots =", f"{extra}\nbots =")
    config = write(tmp_path / "league.toml", text)
    with pytest.raises(ConfigError) as err:
        load_config(config)
    line = str(err.value)
    assert line.startswith(f"{config}: ") and message in line, line
    assert "\n" not in line


BAD_BOTS = [
    ('bots = ["random", "greedy", 3]', "bots[2] = 3 is not allowed: a bot spec string or a table"),
    ('bots = ["random", {spec = "greedy", trusted = "false"}]',
     'bots[1].trusted = "false" is not allowed: true or false'),
    ('bots = ["random", {spec = "greedy", trusted = 0}]', "bots[1].trusted = 0 is not allowed: true or false"),
    ('bots = ["random", {spec = 3}]', "bots[1].spec = 3 is not allowed: a non-empty string"),
    ('bots = ["random", {spec = "greedy", name = ""}]', 'bots[1].name = "" is not allowed: a non-empty string'),
    ('bots = ["random", {spec = "greedy", colour = "red"}]', "unknown key 'bots[1].colour'; valid keys: name, spec"),
    ('bots = ["random", {spec = "greedy", games = 3}]', "bots[1].games = 3 is not allowed: a game spec or a non-empty"),
    ('bots = ["random", {spec = "greedy", entry = "x.py"}]', "bots[1].entry is only for a folder bot"),
    ('bots = []', "bots is required: a list of bot specs or [[bots]] tables"),
    ('bots = "random"', 'bots = "random" is not allowed: a list of bot specs or [[bots]] tables'),
]


@pytest.mark.parametrize("bots,message", BAD_BOTS)
def test_every_bot_key_is_typed_and_named_by_its_full_path(tmp_path, bots, message):
    from arena.errors import ConfigError
    config = write(tmp_path / "league.toml", GOOD.replace('bots = ["random", "greedy"]', bots))
    with pytest.raises(ConfigError) as err:
        load_config(config)
    assert str(err.value).startswith(f"{config}: ") and message in str(err.value), str(err.value)


def test_a_league_file_that_is_not_utf8_is_one_line_exit_2(tmp_path):
    config = tmp_path / "league.toml"
    config.write_bytes(GOOD.encode() + b'# caf\xe9\n')
    p = arena(tmp_path, "league", "run", str(config))
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines() == [f"arena: error: {config}: not UTF-8 text (byte 0xe9 at offset "
                                             f"{len(GOOD.encode()) + 5}); save the league file as UTF-8"]
    assert sorted(f.name for f in tmp_path.iterdir()) == ["league.toml"]


@pytest.mark.slow
def test_a_bad_file_leaves_an_existing_store_untouched(tmp_path):
    config = write(tmp_path / "league.toml", GOOD)
    assert arena(tmp_path, "league", "run", str(config), "-q").returncode == 0
    before = {f.name: (f.stat().st_mtime_ns, f.read_bytes()) for f in tmp_path.iterdir() if f.is_file()}
    assert "league.sqlite" in before
    bad = write(tmp_path / "bad.toml", GOOD + '[limits]\ndebug = "false"\n')
    p = arena(tmp_path, "league", "run", str(bad))
    assert p.returncode == 2 and 'limits.debug = "false" is not allowed' in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    after = {f.name: (f.stat().st_mtime_ns, f.read_bytes()) for f in tmp_path.iterdir() if f.is_file()
             and f.name != "bad.toml"}
    assert after == before


def test_the_docs_key_tables_are_the_schema():
    """docs/leagues.md's key tables are generated from the schema that validates the files: a key added,
    retyped or re-ranged without the docs (or the reverse) fails here. Regenerate: python -m arena.league.keys"""
    from pathlib import Path

    from arena.league.keys import tables
    docs = (Path(__file__).parents[3] / "docs" / "leagues.md").read_text()
    begin, end = "<!-- keys: generated by `python -m arena.league.keys` -->\n", "\n<!-- /keys -->"
    assert begin in docs and end in docs
    assert docs[docs.index(begin) + len(begin):docs.index(end)] == tables()


def test_every_schema_key_is_parsed_into_the_config(tmp_path):
    """Each documented key reaches LeagueConfig (none is validated and then dropped)."""
    config = write(tmp_path / "league.toml", GOOD.replace("database", "seed = 7\nconcurrency = 3\n"
                   "on_failure = \"random_move\"\nprobation_after = 4\nprobation_window = 8\nprobation_failures = 3\n"
                   "tables = \"all\"\ndatabase") + "[limits]\nmove_time = 1\ncpu_seconds = 9\ndebug = true\n")
    cfg = load_config(config)
    assert (cfg.seed, cfg.concurrency, cfg.on_failure, cfg.probation_after, cfg.probation_window,
            cfg.probation_failures, cfg.tables) == (7, 3, "random_move", 4, 8, 3, "all")
    assert cfg.limits.move_time == 1.0 and isinstance(cfg.limits.move_time, float) and cfg.limits.cpu_seconds == 9
    assert cfg.limits.debug is True and cfg.relaxed() and cfg.to_dict()["sandbox_relaxed"] == cfg.relaxed()


@pytest.mark.slow
def test_a_league_that_relaxes_the_sandbox_says_so_on_every_run_and_on_its_leaderboard(tmp_path):
    import json
    write(tmp_path / "b.py", "import random\nclass Bot:\n    def __init__(self, game, seat, seed):\n"
          "        self.rng = random.Random(seed)\n    def step(self, state, limit):\n"
          "        return self.rng.choice(state.legal_actions())\n")
    config = write(tmp_path / "league.toml",
                   GOOD.replace('"greedy"]', '"greedy", {name = "mine", file = "b.py", trusted = true}]')
                   + "[limits]\ndebug = true\n")
    for _ in range(2):  # every run, the resumed one too
        p = arena(tmp_path, "league", "run", str(config), "-q")
        assert p.returncode == 0, p.stderr
        warning = [line for line in p.stderr.splitlines() if line.startswith("arena: warning: league cfg runs with "
                                                                             "the sandbox relaxed: ")]
        assert len(warning) == 1 and "limits.debug = true" in warning[0] and "mine" in warning[0], p.stderr
    board = arena(tmp_path, "leaderboard", "--db", "league.sqlite")
    assert board.returncode == 0 and "SANDBOX RELAXED in this league: limits.debug = true" in board.stdout
    data = json.loads(arena(tmp_path, "leaderboard", "--db", "league.sqlite", "--json").stdout)
    assert any("limits.debug" in line for line in data["sandbox_relaxed"])
    assert any("mine" in line for line in data["sandbox_relaxed"])

    plain = tmp_path / "plain"
    plain.mkdir()
    config = write(plain / "league.toml", GOOD)
    p = arena(plain, "league", "run", str(config), "-q")
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
    assert "SANDBOX RELAXED" not in arena(plain, "leaderboard", "--db", "league.sqlite").stdout
    data = json.loads(arena(plain, "leaderboard", "--db", "league.sqlite", "--json").stdout)
    assert data["sandbox_relaxed"] == []
