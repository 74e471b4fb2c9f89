"""arena's exit status tells the user's mistakes (2) from arena's own bugs (1): only our usage errors are exit 2."""
from __future__ import annotations

import json

import click
import pytest

from arena import cli


@click.command("boom")
def boom() -> None:
    """A command with a bug: a ValueError that is no usage error."""
    raise ValueError("math domain error")


def test_a_value_error_from_a_bug_is_an_internal_error_not_a_usage_error(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(cli.COMMANDS, "boom", f"{__name__}:boom")
    monkeypatch.delenv("ARENA_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["boom"])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert "internal error: ValueError: math domain error" in err and "please report it" in err


def test_a_bad_chance_key_in_a_match_file_is_a_usage_error(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    match = tmp_path / "match.json"
    match.write_text(json.dumps({"chance_key": "not hex", "games": []}))
    with pytest.raises(SystemExit) as exit_:
        cli.main(["replay", "--match", str(match)])
    assert exit_.value.code == 2
    assert "a chance key is 64 hex digits" in capsys.readouterr().err
