"""Attack round 33c: what the fork server still decodes (``spawn.runtime_part``) must be the same for every bot,
whoever it is (a bot file, a folder bot, a built-in bot) and whatever the game: anything that differs between bots
is in the server's freed memory, which every later bot inherits."""
from __future__ import annotations

import json

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import check, spawn, zygote
from tests.arena.sandbox_helpers import FAST, place

pytestmark = [pytest.mark.xdist_group("sandbox"), pytest.mark.slow,
              pytest.mark.skipif(bool(check.missing_mandatory()), reason="mandatory sandbox layers missing"),
              pytest.mark.skipif(not zygote.enabled(), reason="the fork server is off")]


def test_the_server_is_told_the_same_runtime_part_for_every_bot(tmp_path, fresh_server, monkeypatch):
    told: list[tuple[str, str]] = []
    real = zygote._send

    def send(sock, message, fds=None):
        if message.get("op") == "spawn":
            told.append((message["runtime"] and json.dumps(message, sort_keys=True, default=str), ""))
        return real(sock, message, fds) if fds is not None else real(sock, message)
    monkeypatch.setattr(zygote, "_send", send)
    shill = place("shill", tmp_path)
    folder = place("sleeper", tmp_path, files={"helper.txt": "x"})
    play_game("nim", [shill, "random"], 1, FAST.with_(first_move_time=5.0))
    play_game("hex", ["mc", shill], 2, FAST.with_(first_move_time=5.0))
    play_game("nim", [folder, "uct"], 3, FAST.with_(first_move_time=2.0))
    distinct = {t for t, _ in told}
    assert len(told) >= 6
    for text in distinct:
        print(text[:3000])
    assert len(distinct) == 1, f"{len(distinct)} different spawn requests: the server can tell bots apart"


def test_the_runtime_part_names_no_bot_folder(tmp_path, fresh_server, monkeypatch):
    seen: list[dict] = []
    real = spawn.runtime_part

    def runtime_part(plan):
        part = real(plan)
        seen.append((part, plan))
        return part
    monkeypatch.setattr(spawn, "runtime_part", runtime_part)
    shill = place("shill", tmp_path)
    play_game("nim", [shill, "random"], 1, FAST.with_(first_move_time=5.0))
    assert seen
    for part, plan in seen:
        text = json.dumps(part, default=str)
        assert "arena-bots" not in text and f": {plan.uid}," not in text, text
        assert all(b[1] != plan.bot_dir_inside and "arena-bots" not in b[0] for b in part["binds"]), text
        for cg in plan.cgroup_procs:
            assert cg not in text
