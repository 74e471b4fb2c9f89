"""The README's two commands are what a fresh machine runs, and CI runs exactly the second one: no step
before it that a user does not run (the one exception: installing chromium for the browser test)."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def readme_commands() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block, "README.md has no bash block"
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


def test_ci_runs_exactly_the_readmes_test_command_and_nothing_a_user_does_not():
    install, tests = readme_commands()
    assert "pip install ." in install and "pytest" in tests
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert tests in lines, f".ci/run does not run the README's command {tests!r}"
    before = lines[:lines.index(tests)]
    steps = [line for line in before if re.search(r"\b(pip|python3?|activate)\b", line)]
    assert not steps, f".ci/run runs steps before the README's command that a user does not: {steps}"
    assert lines[-1] == tests, "the README's command is CI's last step"


def test_the_test_command_lints_and_type_checks_before_the_tests():
    """The habits that keep the code readable hold on every run: ruff and mypy (the project's own settings in
    pyproject.toml) pass before pytest starts."""
    tests = readme_commands()[1]
    assert re.search(r"&& ruff check \. && mypy && python -m pytest ", tests), tests
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["ruff"]["line-length"] and config["tool"]["mypy"]["disallow_untyped_defs"] is True


def test_the_readme_says_the_browser_test_needs_chromium():
    text = (ROOT / "README.md").read_text()
    assert "apt-get install chromium chromium-driver" in text


def test_the_test_extra_brings_what_installing_the_outside_game_needs():
    """test_outside_game.py installs examples/tictactoe with --no-build-isolation (offline, into this venv):
    that needs bdist_wheel, which a new venv's setuptools 65 lacks without `wheel` (setuptools >= 70.1 has it)."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    names = {re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].lower() for req in extra}
    assert {"setuptools", "wheel"} <= names
    assert "--no-build-isolation" in (ROOT / "tests" / "games" / "test_outside_game.py").read_text()


def test_the_readme_leads_to_the_course_server():
    """A reader of the README finds `arena serve` and `arena accounts`, and docs/server.md."""
    text = (ROOT / "README.md").read_text()
    commands = re.search(r"## Commands\n```bash\n(.*?)```", text, re.S)
    assert commands, "the README has a Commands block"
    assert "\narena serve --league" in commands.group(1) and "\narena accounts " in commands.group(1)
    assert "(docs/server.md)" in text
