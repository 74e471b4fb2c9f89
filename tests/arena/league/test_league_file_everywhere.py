"""Every command that reads a store takes the league FILE as ``--league`` and finds its store there (the file's
``database``), as ``arena league run`` does: none of them looks for arena.sqlite when given the file."""
from __future__ import annotations

from pathlib import Path

import click
import pytest

from arena.cli import COMMANDS, LazyGroup
from leaderboards.store import Store
from tests.leaderboards.support import RANDOM_BOT, arena, write

pytestmark = pytest.mark.xdist_group("league_file_everywhere")

# Commands with --db that need no --league: the demo plays its own built-in league into its store.
OWN_LEAGUE = {"demo"}


def commands() -> list[tuple[str, click.Command]]:
    found = []

    def walk(prefix: str, cmd: click.Command) -> None:
        if isinstance(cmd, click.Group):
            names = cmd.list_commands(click.Context(cmd))
            for name in names:
                walk(f"{prefix} {name}".strip(), cmd.get_command(click.Context(cmd), name))
        else:
            found.append((prefix, cmd))
    for name in COMMANDS:
        cmd = LazyGroup._load(name)
        if cmd is not None:
            walk(name, cmd)
    return found


def test_every_command_that_takes_a_store_takes_the_league_file():
    for name, cmd in commands():
        params = {p.name: p for p in cmd.params}
        if "db" not in params or name in OWN_LEAGUE:
            continue
        if "config" in params:  # `league run CONFIG`, `league status CONFIG`: the file is the argument
            continue
        league = next((p for p in cmd.params if isinstance(p, click.Option) and "--league" in p.opts), None)
        assert league is not None, f"arena {name} has --db but no --league"
        assert "FILE" in (league.metavar or ""), f"arena {name} --league takes no league FILE ({league.metavar})"
        assert params["db"].default is None, (f"arena {name} --db defaults to {params['db'].default!r}: the league "
                                              "file's database is never looked at")


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    d = tmp_path_factory.mktemp("league_file")
    config = write(d / "course.toml", """
        name = "course"
        games = ["nim(n=7)"]
        games_per_pairing = 2
        seed = 3
        database = "results/course.sqlite"
        bots = ["random", "greedy"]
    """)
    out = arena(d, "league", "run", str(config), "-q")
    assert out.returncode == 0, out.stderr
    assert not (d / "arena.sqlite").exists()
    with Store.open(d / "results" / "course.sqlite", readonly=True) as store:
        game_id = store.games(store.find_league("course").id)[0].id
    return d, config, game_id


@pytest.mark.parametrize("args", [
    ["replay"],
    ["replay", "{game}"],
    ["replay", "{game}", "--verify"],
    ["leaderboard"],
    ["export", "games"],
    ["report", "--out", "rep"],
])
@pytest.mark.slow
def test_a_viewer_given_the_league_file_reads_its_store(league, args):
    d, config, game_id = league
    out = arena(d, *[a.format(game=game_id) for a in args], "--league", str(config))
    assert out.returncode == 0, out.stderr
    assert "arena.sqlite" not in out.stdout + out.stderr


def test_replay_given_the_league_file_lists_that_leagues_games_and_shows_one(league):
    d, config, game_id = league
    listed = arena(d, "replay", "--league", "course.toml")
    assert listed.returncode == 0 and str(game_id) in listed.stdout, listed.stderr
    shown = arena(d, "replay", str(game_id), "--league", "course.toml", "--no-board")
    assert shown.returncode == 0 and f"game {game_id} of league course" in shown.stdout, shown.stderr


def test_release_and_submit_given_the_league_file_reach_its_store(league):
    d, config, _ = league
    release = arena(d, "league", "release", "random", "--league", str(config))
    assert release.returncode == 2 and "is not on probation" in release.stderr, release.stderr
    write(d / "alice.py", RANDOM_BOT)
    submit = arena(d, "submit", "alice.py", "--league", str(config), "--name", "alice")
    assert submit.returncode == 0, submit.stderr
    assert not (d / "arena.sqlite").exists()


def test_a_league_file_whose_store_is_missing_says_so_and_writes_nothing(tmp_path):
    config = write(tmp_path / "new.toml", """
        name = "new"
        games = ["nim"]
        database = "new.sqlite"
        bots = ["random", "greedy"]
    """)
    for args in (["replay"], ["replay", "1"], ["league", "release", "random"]):
        out = arena(tmp_path, *args, "--league", str(config))
        assert out.returncode == 2 and "new.sqlite" in out.stderr and len(out.stderr.splitlines()) == 1, out.stderr
    assert not (tmp_path / "new.sqlite").exists()
