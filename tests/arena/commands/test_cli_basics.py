"""The `arena` console script: help, catalogues, and one-line usage errors with exit code 2."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

ARENA = shutil.which("arena") or ""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [ARENA, *args] if ARENA else [sys.executable, "-m", "arena.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_help_lists_commands() -> None:
    p = run("--help")
    assert p.returncode == 0
    for command in ("games", "bots", "bench"):
        assert command in p.stdout


def test_bench_help_names_every_suite() -> None:
    from arena.bench import SUITES
    p = run("bench", "--help")
    listed = " ".join(p.stdout.split())  # (click wraps the line)
    assert p.returncode == 0 and all(f" {s}," in listed or f" {s})" in listed for s in SUITES), p.stdout


def test_games_lists_every_game_with_parameters() -> None:
    p = run("games", "--json")
    assert p.returncode == 0, p.stderr
    catalogue = {g["name"]: g for g in json.loads(p.stdout)}
    own = {"doublestep", "nim", "hex", "colosseum", "sorry"}
    from importlib.metadata import entry_points  # and every installed game (docs/adding-a-game.md)
    # an installed game may arrive meanwhile (tests/games/test_outside_game.py installs one): read them after
    assert own <= set(catalogue) <= own | {ep.name for ep in entry_points(group="arena.games")}
    assert catalogue["nim"]["params"]["k"]["default"] == 3
    assert "overshoot" in catalogue["doublestep"]["params"]
    table = run("games")
    assert table.returncode == 0 and "overshoot" in table.stdout


def test_bots_lists_every_bot() -> None:
    p = run("bots", "--json")
    assert p.returncode == 0, p.stderr
    names = [b["name"] for b in json.loads(p.stdout)]
    assert names == ["random", "greedy", "mc", "hmc", "uct", "mcts_reuse", "determinized", "openspiel:random",
                     "openspiel:mcts"]


@pytest.mark.parametrize("args,needle", [
    (("nosuchcommand",), "No such command"),
    (("games", "--bogus"), "No such option"),
    (("bench", "nosuchsuite"), "unknown benchmark suite 'nosuchsuite'"),
])
def test_usage_errors_are_one_line_with_exit_code_2(args: tuple[str, ...], needle: str) -> None:
    p = run(*args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], p.stderr
    assert "Traceback" not in p.stderr
