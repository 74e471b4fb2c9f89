"""Submitting a path never reads beyond it (issue 22 §7).

`arena submit link.py`, with link.py a symlink into a folder only root can read, stored the file it pointed to:
the snapshot (and the world-readable store) held root's secret. A bot's path is opened once without following a
symlink and read from that descriptor; symlinks inside a folder bot are refused; and a run as root reads a bot
that belongs to another user (the path, or the folder holding it) with that user's rights, so a hard link to a
file they cannot read is refused instead of copied.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.submissions import take as taking
from tests.leaderboards.support import RANDOM_BOT, arena, write

IS_ROOT = os.geteuid() == 0
NOBODY = 65534


@pytest.fixture
def world() -> Iterator[Path]:
    """A folder every user can reach (pytest's own tmp folders are root's 0700 when run as root)."""
    top = Path(tempfile.mkdtemp(prefix="arena-submit-paths-", dir="/tmp"))
    os.chmod(top, 0o755)
    yield top
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture
def secret(world: Path) -> tuple[Path, str]:
    """A reference solution in a folder only its owner (this process's user) can read."""
    canary = f"SECRET-{uuid.uuid4()}"
    folder = world / "solutions"
    folder.mkdir()
    target = folder / "reference.py"
    target.write_text(f"class Bot:\n    pass\n# {canary}\n")
    os.chmod(target, 0o600)
    os.chmod(folder, 0o700)
    return target, canary


def test_a_symlink_named_as_the_bot_is_refused_not_followed(world: Path, secret: tuple[Path, str]) -> None:
    target, _ = secret
    link = world / "link.py"
    link.symlink_to(target)
    with pytest.raises(ConfigError, match=r"link\.py is a symlink .*reference\.py.*pass its real path"):
        taking.take(link)


def test_a_folder_named_as_the_bot_that_is_a_symlink_is_refused(world: Path, secret: tuple[Path, str]) -> None:
    target, _ = secret
    (target.parent / "bot.py").write_text("class Bot:\n    pass\n")
    folder_link = world / "mine"
    folder_link.symlink_to(target.parent, target_is_directory=True)
    with pytest.raises(ConfigError, match="mine is a symlink"):
        taking.take(folder_link)


def test_a_symlink_inside_a_folder_bot_is_refused(world: Path, secret: tuple[Path, str]) -> None:
    target, _ = secret
    bot = world / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text("import helper\nclass Bot:\n    pass\n")
    (bot / "helper.py").symlink_to(target)
    with pytest.raises(ConfigError, match="contains a symlink helper.py"):
        taking.take(bot)


def test_arena_submit_and_match_refuse_a_symlink_in_one_line(tmp_path: Path, secret: tuple[Path, str]) -> None:
    target, canary = secret
    write(tmp_path / "league.toml", 'name = "l"\ngames = ["nim"]\nbots = ["random", "greedy"]\n[limits]\n'
                                    'move_time = 2.0\nfirst_move_time = 10.0\n')
    done = arena(tmp_path, "league", "run", "league.toml", "-q", "--concurrency", "1")
    assert done.returncode == 0, done.stderr
    (tmp_path / "link.py").symlink_to(target)
    for args in (("submit", "link.py", "--league", "league.toml"), ("match", "nim", "link.py", "random")):
        result = arena(tmp_path, *args)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and "symlink" in lines[0], (args, result.stderr)
    conn = sqlite3.connect(tmp_path / "arena.sqlite")
    stored = b"".join(row[0] or b"" for row in conn.execute("SELECT snapshot FROM bots"))
    conn.close()
    assert canary.encode() not in stored and not any(b"reference" in s for s in [stored])


@pytest.mark.skipif(not IS_ROOT, reason="reading with the owner's rights is what a run as root does")
def test_root_reads_a_users_bot_with_that_users_rights(world: Path, secret: tuple[Path, str]) -> None:
    """A user's folder bot holding a hard link to root's 0600 reference solution, and a user's one-file bot that
    is such a hard link: root, submitting for them, reads as them, so both are refused; their own readable bot
    is taken as it is."""
    target, canary = secret
    home = world / "student"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    folder = home / "bot"
    folder.mkdir()
    write(folder / "bot.py", RANDOM_BOT)
    os.link(target, folder / "helper.py")  # root can make it (protected_hardlinks binds users only)
    os.link(target, home / "copy.py")
    for path in (folder, folder / "bot.py", home):
        os.chown(path, NOBODY, NOBODY)
    for bot, shown in ((folder, "helper.py"), (home / "copy.py", "copy.py")):
        with pytest.raises(ConfigError) as refused:
            taking.take(bot)
        line = str(refused.value)
        assert shown in line and "Permission denied" in line and f"uid {NOBODY}" in line, line
        assert canary not in line
    os.unlink(folder / "helper.py")
    taken = taking.take(folder)  # the same user's readable bot: read (by a child with their rights)
    assert sorted(taken.files) == ["bot.py"] and taken.files["bot.py"] == (folder / "bot.py").read_bytes()
    assert taken.name == "bot"


@pytest.mark.skipif(not IS_ROOT, reason="reading with the owner's rights is what a run as root does")
def test_root_reads_its_own_bot_itself(world: Path, secret: tuple[Path, str]) -> None:
    target, canary = secret
    assert taking.reader_uid(str(target)) is None
    assert canary.encode() in taking.take(target).files["reference.py"]


@pytest.mark.skipif(not IS_ROOT, reason="reading with the owner's rights is what a run as root does")
def test_root_never_follows_a_users_symlink_on_the_way_to_a_bot(world: Path, secret: tuple[Path, str]) -> None:
    """student/link -> root's 0700 solutions folder: student/link/sub/x.py is a root file in a root folder, so only
    the user's symlink on the way shows whose path it is; it is refused, not read with root's rights."""
    target, canary = secret
    sub = target.parent / "sub"
    sub.mkdir()
    (sub / "x.py").write_text(f"class Bot:\n    pass\n# {canary}\n")
    home = world / "student"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    link = home / "link"
    link.symlink_to(target.parent, target_is_directory=True)
    os.lchown(link, NOBODY, NOBODY)
    with pytest.raises(ConfigError, match=rf"reached through .*student/link, a symlink of uid {NOBODY}"):
        taking.take(link / "sub" / "x.py")
    assert taking.reader_uid(str(home / "mine.py")) == NOBODY  # (a bot in the user's folder: read as them)
