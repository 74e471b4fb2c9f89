"""The runtime mounted once per fork server and copied for each bot (issue 33, :mod:`arena.sandbox.template`): a bot
sees the same root as one that built its own, cannot write to it, so a later bot sees the same root again; the
template is rebuilt when the host's mounts change."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import _sys, check, spawn, template, zygote
from tests.arena.sandbox_helpers import FAST, assert_nothing_left, place

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(os.geteuid() != 0 or not check.active("mount_namespace"),
                                 reason="the template is the fork server's as root (a user namespace per bot "
                                        "builds its own root)"),
              pytest.mark.skipif(not zygote.enabled(), reason="the fork server is off (ARENA_SANDBOX_ZYGOTE=0)")]


def view(record) -> dict:
    failure = next(f for f in record.failures if f.seat == 0)
    match = re.search(r"ROOTVIEW (\{.*\})", failure.detail)
    assert match, failure.detail
    return json.loads(match[1])


def test_a_bot_sees_the_same_root_from_the_template_as_from_a_root_of_its_own(tmp_path, monkeypatch):
    probe = place("root_view", tmp_path)
    copied = view(play_game("nim", [probe, "random"], 1, FAST.with_(first_move_time=5.0)))
    monkeypatch.setenv("ARENA_SANDBOX_ZYGOTE", "0")  # a fresh interpreter per bot, each building its root
    built = view(play_game("nim", [probe, "random"], 1, FAST.with_(first_move_time=5.0)))
    print(f"the probe sees {copied}")
    assert copied["entries"] > 50 and copied["bot"] == ["root_view.py"]
    for key in ("top", "bot", "tree", "entries", "statvfs", "writes"):
        assert copied[key] == built[key], (key, copied[key], built[key])


def test_what_one_bot_tries_on_its_root_leaves_the_next_bots_root_as_it_was(tmp_path):
    probe = place("root_view", tmp_path)
    first = view(play_game("nim", [probe, "random"], 1, FAST.with_(first_move_time=5.0)))
    record = play_game("nim", [probe, "random"], 2, FAST.with_(first_move_time=5.0))
    assert_nothing_left(record)
    second = view(record)
    assert first["writes"] and not set(first["writes"]) & {"done"}, first["writes"]
    assert second == first  # the same tree and file system, the same device: one template, never written
    # (the same device also shows the root was copied from the template: each bot's own tmpfs has a new one)


def test_the_template_is_built_again_when_the_hosts_mounts_change(tmp_path):
    source = tmp_path / "runtime"
    source.mkdir()
    (source / "f").write_text("x")
    root = tmp_path / "root"
    root.mkdir()
    plan = spawn.Plan(mode="root", mount_ns=True, new_root=str(root), binds=[(str(source), "/runtime", True)])
    t = template.Template()
    try:
        first = t.for_plan(plan)
        assert first >= 0 and not t.failed
        held = os.dup(first)  # (keeps the first namespace, so a new one cannot get its number)
        ino = os.fstat(first).st_ino
        assert t.for_plan(plan) == first  # unchanged: the same namespace
        extra = tmp_path / "mounted-later"
        extra.mkdir()
        _sys.mount("tmpfs", str(extra), "tmpfs", 0, "size=4k")
        try:
            again = t.for_plan(plan)
            assert again >= 0 and os.fstat(again).st_ino != ino  # a new namespace: sees what the host mounted
        finally:
            _sys.umount2(str(extra), _sys.MNT_DETACH)
            os.close(held)
        # nothing of the template reached the host: its root is an empty folder here
        assert os.listdir(root) == []
        out = subprocess.run(["findmnt", "-n", str(root)], capture_output=True, text=True)
        assert out.stdout == "", out.stdout
    finally:
        t.close()
