"""arena.submissions.snapshot: what a bot's snapshot holds, how it is written, and the store's snapshots (schema 4)."""
from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.sandbox import bot_files, spawn
from arena.submissions import snapshot
from arena.submissions import take as taking
from leaderboards.store import Store
from tests.leaderboards.test_history import V1_SCHEMA


def folder(path: Path) -> Path:
    (path / "pkg").mkdir(parents=True)
    (path / "bot.py").write_text("import helper\n")
    (path / "helper.py").write_text("X = 1\n")
    (path / "pkg" / "weights.bin").write_bytes(bytes(range(256)))
    (path / "__pycache__").mkdir()
    (path / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"junk")
    (path / ".git").mkdir()
    (path / ".git" / "HEAD").write_text("ref")
    return path


def test_a_folder_snapshot_is_its_files_and_its_digest_names_their_content(tmp_path):
    snap = taking.take(folder(tmp_path / "a"))
    assert snap.entry == "bot.py" and sorted(snap.files) == ["bot.py", "helper.py", "pkg/weights.bin"]
    assert snap.name == "a"
    copy = taking.take(folder(tmp_path / "b"))  # another place, the same content: the same digest
    (tmp_path / "current").symlink_to(tmp_path / "a")  # a symlink is never followed, even the path named
    with pytest.raises(ConfigError, match="is a symlink"):
        taking.take(tmp_path / "current")
    assert copy.digest == snap.digest
    (tmp_path / "b" / "pkg" / "weights.bin").write_bytes(b"changed")
    assert taking.take(tmp_path / "b").digest != snap.digest
    assert taking.take(tmp_path / "a", entry="helper.py").digest != snap.digest  # the entry is part of it
    assert snapshot.decode(snapshot.encode(snap), snap.digest) == snap
    assert snapshot.unpack(snapshot.pack(snap), snap.digest) == snap


@pytest.mark.parametrize("make, needle", [
    (lambda d: (d / "link.py").symlink_to("/etc/passwd"), "symlink link.py"),
    (lambda d: (d / "sub").symlink_to("/etc"), "symlink sub"),
    (lambda d: os.mkfifo(d / "pipe"), "not a regular file"),
    (lambda d: (d / "bot.py").unlink(), "has no bot.py"),
])
def test_what_a_folder_snapshot_refuses(tmp_path, make, needle):
    d = folder(tmp_path / "bot")
    make(d)
    with pytest.raises(ConfigError, match=needle):
        taking.take(d)


def test_the_size_limit_counts_the_whole_tree_and_names_the_setting(tmp_path):
    d = folder(tmp_path / "bot")
    (d / "data.bin").write_bytes(b"x" * 3000)
    with pytest.raises(ConfigError,
                       match=r"bot .*bot is 3\.\d KB, over the 2\.0 KB limit for a bot; raise it with SETTING"):
        taking.take(d, max_bytes=2048, setting="SETTING")
    assert taking.take(d, max_bytes=4096).size > 3000


def test_a_written_snapshot_is_checked_private_and_removed(tmp_path):
    snap = taking.take(folder(tmp_path / "bot"))
    with bot_files.BotRoot(str(tmp_path)) as root:
        directory = root.materialize(snap)
        assert bot_files.is_materialized(directory) and not bot_files.is_materialized(str(tmp_path / "bot"))
        assert stat.S_IMODE(os.stat(root.path).st_mode) == (0o711 if os.geteuid() == 0 else 0o700)
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o755
        assert stat.S_IMODE(os.stat(os.path.join(directory, "pkg", "weights.bin")).st_mode) == 0o644
        assert taking.take(directory).digest == snap.digest  # what is on disk is the snapshot
        tampered = snapshot.Snapshot(snap.entry, dict(snap.files, **{"helper.py": b"evil"}), snap.digest)
        with bot_files.BotRoot(str(tmp_path)) as other, pytest.raises(snapshot.SnapshotError):
            other.materialize(tampered)
            assert os.listdir(other.path) == []  # nothing published
    assert not os.path.exists(root.path)


def test_a_plan_shows_a_bot_only_a_snapshot_this_process_wrote(tmp_path):
    (tmp_path / "bot.py").write_text("class Bot: pass\n")
    with pytest.raises(OSError, match="not in a bot snapshot"):
        spawn.make_plan("none", os.getuid(), str(tmp_path / "bot.py"), [], [])
    with bot_files.BotRoot(str(tmp_path)) as root:
        path = os.path.join(root.materialize(taking.take(tmp_path / "bot.py")), "bot.py")
        assert spawn.make_plan("none", os.getuid(), path, [], []).bot_dir_inside == os.path.dirname(path)


def test_roots_of_dead_processes_are_swept_and_unsafe_temp_dirs_refused(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"arena-bots-{os.geteuid()}-{dead.stdout.strip()}-x"
    stale.mkdir()
    (stale / "left.py").write_text("")
    with bot_files.BotRoot(str(tmp_path)):
        assert not stale.exists()
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)  # world-writable, not sticky: another user could swap our directory
    with pytest.raises(ConfigError, match="not sticky"):
        bot_files.BotRoot(str(open_dir))
    planted = tmp_path / "planted"
    planted.symlink_to(tmp_path / "open")
    with pytest.raises(ConfigError, match="not a private directory"):
        bot_files.private_dir(str(planted))


def test_a_stored_one_file_bot_keeps_its_version_through_the_snapshot_migration(tmp_path):
    """A store from before snapshots: its file bot gets a snapshot and the snapshot's digest, so the same league
    file is still the same bot (no new version, no replayed games)."""
    path = tmp_path / "v1.sqlite"
    source = "class Bot:\n    pass\n"
    conn = sqlite3.connect(path)
    conn.executescript(V1_SCHEMA)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute("INSERT INTO leagues (id, name, config, created, updated) VALUES (1, 'old', '{}', 0, 0)")
    conn.execute("INSERT INTO bots (id, league_id, name, version, kind, filename, source, content_hash, origin, "
                 "created) VALUES (1, 1, 'mine', 1, 'file', 'mine.py', ?, ?, 'config', 0)",
                 (source, hashlib.sha256(source.encode()).hexdigest()))
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.snapshot(1) == snapshot.single("mine.py", source)
        assert store.bot(1).content_hash == snapshot.single("mine.py", source).digest
        bot, new = store.upsert_bot(1, "mine", origin="config", snapshot=snapshot.single("mine.py", source))
        assert (bot.id, new) == (1, False)
        bigger = snapshot.make("bot.py", {"bot.py": b"import h\n", "h.py": b""})
        v2, new = store.upsert_bot(1, "mine", origin="config", snapshot=bigger)
        assert new and v2.filename == "bot.py" and store.snapshot(v2.id) == bigger
