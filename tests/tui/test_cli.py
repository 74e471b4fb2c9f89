"""`arena tui`: the command's options reach the app; bad options are one-line usage errors."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.tui.app import ArenaApp


def test_tui_passes_db_league_and_poll_to_the_app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def fake_run(self: ArenaApp, *args: Any, **kwargs: Any) -> None:
        seen.update(db=self.db_path, league=self.league, poll=self.poll_interval)

    monkeypatch.setattr(ArenaApp, "run", fake_run)
    main(["tui", "--db", str(tmp_path / "x.sqlite"), "--league", "demo", "--poll", "0.25"])
    assert seen == {"db": tmp_path / "x.sqlite", "league": "demo", "poll": 0.25}


def test_tui_help_and_bad_option() -> None:
    help_ = subprocess.run([sys.executable, "-m", "arena.cli", "tui", "--help"], capture_output=True, text=True,
                           timeout=60, check=False)
    assert help_.returncode == 0 and "--db" in help_.stdout and "--league" in help_.stdout
    bad = subprocess.run([sys.executable, "-m", "arena.cli", "tui", "--poll", "0"], capture_output=True, text=True,
                         timeout=60, check=False)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "--poll" in bad.stderr


def test_tui_takes_the_league_file_and_finds_its_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def fake_run(self: ArenaApp, *args: Any, **kwargs: Any) -> None:
        seen.update(db=self.db_path, league=self.league)

    monkeypatch.setattr(ArenaApp, "run", fake_run)
    config = tmp_path / "course.toml"
    config.write_text('name = "course"\ngames = ["nim"]\ndatabase = "results/course.sqlite"\n'
                      '[[bots]]\nspec = "random"\n[[bots]]\nspec = "greedy"\n')
    main(["tui", "--league", str(config)])
    assert seen == {"db": tmp_path / "results" / "course.sqlite", "league": "course"}
