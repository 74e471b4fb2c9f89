"""``arena match``, ``arena new-bot`` and ``arena sandbox check`` through the real CLI entry point."""
from __future__ import annotations

import json
import os

import pytest

from arena.cli import main
from arena.commands.match import schedule
from arena.sandbox import check

pytestmark = pytest.mark.xdist_group("sandbox")
FAST = ["--move-time", "1", "--first-move-time", "1"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_schedule_rotates_seats_fairly():
    plan = schedule(2, 4, seed=10)
    assert plan == [(10, [0, 1]), (10, [1, 0]), (11, [0, 1]), (11, [1, 0])]
    three = schedule(3, 6, seed=0)
    for bot in range(3):
        assert sorted(seats.index(bot) for _, seats in three) == [0, 0, 1, 1, 2, 2]


def test_match_json_has_every_game_and_the_totals(capsys):
    code, out, err = run(capsys, "match", "nim", "greedy", "random", "--games", "4", "--seed", "7", "--json", *FAST)
    assert code == 0, err
    data = json.loads(out)  # exactly one JSON object on stdout
    assert data["game"] == "nim" and data["bots"] == ["greedy", "random"] and len(data["games"]) == 4
    for g in data["games"]:
        assert set(g) >= {"seed", "seats", "players", "returns", "terminations", "history"}
        assert g["terminations"] == ["normal", "normal"]
        assert g["players"] == [data["labels"][i] for i in g["seats"]]
    assert [g["seats"] for g in data["games"]] == [[0, 1], [1, 0], [0, 1], [1, 0]]
    assert [g["seed"] for g in data["games"]] == [7, 7, 8, 8]
    totals = data["totals"]
    assert sum(t["wins"] + t["draws"] + t["losses"] for t in totals.values()) == 8
    assert totals["greedy"]["wins"] == totals["random"]["losses"]
    assert totals["greedy"]["move_time"]["p50"] is not None


def test_match_table_and_progress(capsys):
    code, out, err = run(capsys, "match", "nim", "random", "random", "--games", "2", *FAST)
    assert code == 0, err
    assert "random #1" in out and "random #2" in out and "move ms" in out
    assert "2/2" in err  # the progress bar goes to stderr


@pytest.mark.parametrize("argv, needle", [
    (["match", "nom", "random", "random"], "unknown game"),
    (["match", "nim", "random", "nobot"], "unknown bot"),
    (["match", "nim", "random"], "needs 2 bots"),
    (["match", "nim", "random", "random", "--games", "0"], "--games"),
    (["match", "nim", "random", "random", "--move-time", "-1"], "'--move-time': -1: not allowed; must be a finite"),
    (["match", "nim", "random", "random", "--on-failure", "explode"], "on-failure"),
    (["match", "nim", "random", "/no/such/bot.py"], "does not exist"),
    (["match", "hex(size=5)", "random", "greedy"], "cannot play"),
])
def test_usage_errors_exit_2_with_one_line(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.skipif(bool(check.missing_mandatory()), reason=f"sandbox layers missing: {check.missing_mandatory()}")
@pytest.mark.slow
def test_new_bot_template_plays_cleanly_against_random(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.chmod(tmp_path, 0o755)
    code, out, err = run(capsys, "new-bot", "mybot")
    assert code == 0 and (tmp_path / "mybot.py").exists()
    code, out, err = run(capsys, "new-bot", "mybot")
    assert code == 2 and "already exists" in err
    code, out, err = run(capsys, "match", "nim", "mybot.py", "random", "--games", "2", "--seed", "3", "--json",
                         "--move-time", "0.5", "--first-move-time", "0.5")
    assert code == 0, err
    data = json.loads(out)
    assert all(g["terminations"] == ["normal", "normal"] for g in data["games"])
    assert data["totals"]["mybot.py"]["failures"] == {"timeout": 0, "crash": 0, "illegal": 0, "memory": 0,
                                                      "protocol": 0}


def test_failures_are_counted_by_reason(capsys, tmp_path):
    bot = tmp_path / "crasher.py"
    bot.write_text("class Bot:\n    def __init__(self, g, s, seed): pass\n"
                   "    def step(self, state, limit): raise ValueError('boom')\n")
    os.chmod(tmp_path, 0o755)
    code, out, err = run(capsys, "match", "nim", str(bot), "random", "--games", "2", "--json", *FAST)
    assert code == 0, err
    data = json.loads(out)
    assert data["totals"]["crasher.py"]["failures"]["crash"] == 2
    assert data["totals"]["crasher.py"]["losses"] == 2
    crashed = [g["terminations"][g["seats"].index(0)] for g in data["games"]]
    assert crashed == ["crash", "crash"]
    assert "boom" in data["games"][0]["failures"][0]["detail"]


def test_sandbox_check_reports_every_layer(capsys):
    code, out, err = run(capsys, "sandbox", "check", "--json", "--no-live")
    data = json.loads(out)
    assert {l["name"] for l in data["layers"]} >= set(check.MANDATORY)
    assert data["bot_files_allowed"] == (not data["missing_mandatory"])
    assert code == (1 if data["missing_mandatory"] else 0)


def test_a_match_ends_with_every_bot_closed_and_its_groups_given_back(capsys):
    """Each game leaves its bots' end to the next (``close_later``); the match's last game's bots are closed before
    the command returns: none pending, no cgroup of this process but the emptied pooled ones."""
    from arena.sandbox import cgroups, proxy
    code, _, err = run(capsys, "match", "nim", "random", "random", "--games", "3", "--json", *FAST)
    assert code == 0, err
    assert proxy._CLOSING == []
    assert [g for g in cgroups.groups_of(os.getpid()) if g not in cgroups.pooled()] == []
