"""A store that cannot be written, is damaged, or fills the disk: one line that names the file, what is wrong and
what to do (exit 1), and the file is never modified. A file that is not an arena store (another program's, or a
store with a trigger, view or table arena did not write) is the user's wrong argument: one line, exit 2.

Root ignores permission bits, so "read-only" is made real with a read-only bind mount in a private mount
namespace (``unshare -m``), and a full disk with a small tmpfs mounted there; nothing outside the test's own
directory is touched and the mounts vanish with the namespace.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.leaderboards.support import RANDOM_BOT, arena, write

LEAGUE = """
name = "t"
games = ["nim"]
games_per_pairing = {n}
seed = 3
database = "s.sqlite"
[[bots]]
spec = "random"
[[bots]]
spec = "greedy"
"""


def _can_unshare() -> str | None:
    """None when private mount namespaces work here, else why not."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and unshare(1) for read-only bind mounts and a small tmpfs"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare -m does not work here: {probe.stderr.strip()}"


WHY_NOT = _can_unshare()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))


def _in_namespace(cwd: Path, setup: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """Runs ``argv`` in a private mount namespace after the shell commands ``setup``."""
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-ec", setup + '\nexec "$@"', "sh",
                           *argv], cwd=cwd, capture_output=True, text=True, timeout=300)


def _read_only(cwd: Path, target: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` while ``target`` (a file or a folder) is mounted read-only."""
    setup = f'mount --bind "{target}" "{target}"\nmount -o remount,bind,ro "{target}"'
    return _in_namespace(cwd, setup, sys.executable, "-m", "arena.cli", *args)


def _fingerprint(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_size


def _siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A played league in tmp_path/s.sqlite, closed cleanly (no -wal or -shm beside it)."""
    write(tmp_path / "l.toml", LEAGUE.format(n=2))
    write(tmp_path / "bot.py", RANDOM_BOT)
    done = arena(tmp_path, "league", "run", "l.toml", "-q", "-j", "1")
    assert done.returncode == 0, done.stderr
    db = tmp_path / "s.sqlite"
    for suffix in ("-wal", "-shm"):
        assert not Path(f"{db}{suffix}").exists()
    return db


def _one_line(result: subprocess.CompletedProcess[str], *words: str, code: int = 1) -> str:
    print(result.args[-4:], "->", result.stderr.strip())
    lines = result.stderr.strip().splitlines()
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert "internal error" not in line and "please report" not in line, line
    for word in words:
        assert word in line, (word, line)
    return line


WRITERS = (("league", "run", "l.toml", "-q"), ("submit", "bot.py", "--league", "t", "--db", "s.sqlite"))
READERS = (("leaderboard", "--db", "s.sqlite"), ("replay", "1", "--db", "s.sqlite"),
           ("replay", "--db", "s.sqlite"))


def test_a_read_only_store_is_refused_by_writers_and_read_by_readers(store: Path, tmp_path: Path):
    before = _fingerprint(store)
    for args in WRITERS:
        line = _one_line(_read_only(tmp_path, store, *args), "s.sqlite", "read-only")
        assert "writable" in line or "--db" in line, line  # what to do
        assert _fingerprint(store) == before
    for args in READERS:
        result = _read_only(tmp_path, store, *args)
        assert result.returncode == 0, (args, result.stderr)
        assert _fingerprint(store) == before


def test_a_store_in_a_read_only_folder_is_refused_by_writers_and_read_by_readers(store: Path, tmp_path: Path):
    before, beside = _fingerprint(store), _siblings(store)  # the store and the runner's lock file
    for args in WRITERS:
        line = _one_line(_read_only(tmp_path, tmp_path, *args), "s.sqlite", "read-only", "folder")
        assert "writable" in line or "--db" in line, line
    for args in READERS:
        result = _read_only(tmp_path, tmp_path, *args)
        assert result.returncode == 0, (args, result.stderr)
    assert _fingerprint(store) == before
    assert _siblings(store) == beside  # no -wal or -shm could appear, and none was needed to read


def _corrupt(db: Path) -> None:
    """Overwrites one whole page in the middle of the file with garbage (the header stays valid)."""
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    pages = len(data) // page
    start = (pages // 2) * page
    data[start:start + page] = bytes((i * 37 + 11) % 256 for i in range(page))
    db.write_bytes(bytes(data))
    check = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        assert check.execute("PRAGMA quick_check").fetchone()[0] != "ok"  # the premise: SQLite sees the damage
    except sqlite3.DatabaseError:
        pass
    finally:
        check.close()


def test_a_damaged_store_is_named_and_never_written(store: Path, tmp_path: Path):
    _corrupt(store)
    before = _fingerprint(store)
    for args in WRITERS + READERS:
        line = _one_line(arena(tmp_path, *args), "s.sqlite", "damaged")
        assert "backup" in line or ".recover" in line, line
        assert _fingerprint(store) == before, args


def test_a_file_that_is_not_a_store_is_named_and_left_alone(tmp_path: Path):
    write(tmp_path / "l.toml", LEAGUE.format(n=2))
    db = tmp_path / "s.sqlite"
    db.write_text("name,score\nalice,3\n" * 200)
    before = _fingerprint(db)
    for args in (("league", "run", "l.toml", "-q"), ("leaderboard", "--db", "s.sqlite")):
        _one_line(arena(tmp_path, *args), "s.sqlite", "not an arena store", code=2)
        assert _fingerprint(db) == before


FOREIGN = {  # what a handed-over store may carry, and how the refusal names it
    "trigger": ("CREATE TRIGGER fix AFTER INSERT ON games BEGIN UPDATE games SET returns='[1.0, -1.0]' "
                "WHERE id=NEW.id; END", "trigger 'fix'"),
    "view": ("CREATE VIEW v AS SELECT * FROM games", "view 'v'"),
    "extra table": ("CREATE TABLE notes (x)", "table 'notes'"),
    "application_id": ("PRAGMA application_id=7", "application_id 0x7"),
}


@pytest.mark.slow
def test_a_store_with_a_foreign_schema_is_refused_by_every_command_and_left_alone(store: Path, tmp_path: Path):
    """A store someone handed over ran its triggers on `arena league run` (a game's returns rewritten as it was
    stored): now every command refuses it, in one line naming what it found, exit 2, the file unchanged."""
    for kind, (sql, named) in FOREIGN.items():
        here = tmp_path / kind.replace(" ", "_")
        here.mkdir()
        write(here / "l.toml", LEAGUE.format(n=4))  # more games to play: a writer would insert (and fire it)
        write(here / "bot.py", RANDOM_BOT)
        db = here / "s.sqlite"
        shutil.copy(store, db)
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute(sql)
        conn.close()
        before = _fingerprint(db)
        for args in (("league", "run", "l.toml", "-q", "-j", "1"), *READERS):
            _one_line(arena(here, *args), "s.sqlite", "not an arena store", named, code=2)
            assert _fingerprint(db) == before, (kind, args)


def test_the_dashboard_open_path_names_a_damaged_store(store: Path):
    from arena.tui.data import StoreReader, Unavailable
    _corrupt(store)
    before = _fingerprint(store)
    reader = StoreReader(store)
    with pytest.raises(Unavailable) as caught:
        reader.poll(None, "*")
    reader.close()
    assert "damaged" in str(caught.value) and "s.sqlite" in str(caught.value)
    assert _fingerprint(store) == before


@pytest.mark.slow
def test_a_full_disk_stops_the_run_with_one_line_and_the_store_stays_intact(tmp_path: Path):
    write(tmp_path / "l.toml", LEAGUE.format(n=60))
    full = tmp_path / "full"
    out = tmp_path / "out"
    full.mkdir()
    out.mkdir()
    # A 4 MiB tmpfs holding the league's (empty) store, then filled to leave 256 KiB: the run's start (bots,
    # schedule) and a few games fit into the WAL, then a commit hits ENOSPC. The margin is counted from the
    # created store, so a schema that grows does not eat it.
    setup = (f'mount -t tmpfs -o size=4m tmpfs "{full}"\ncp l.toml "{full}/"\ncd "{full}"\n'
             f'"{sys.executable}" -c "from leaderboards.store import Store; '
             'Store.open(\'s.sqlite\', create=True).close()"\n'
             'free=$(df --output=avail -B1 . | tail -1)\n'
             'head -c $((free - 262144)) /dev/zero > filler\n'
             f'trap \'cp s.sqlite* "{out}/"\' EXIT\n')
    # exec would drop the trap: run arena as a child and copy the store out when it has ended
    result = _in_namespace(tmp_path, setup + f'"{sys.executable}" -m arena.cli league run '
                           'l.toml -q -j 1 || exit $?\n', "true")
    line = _one_line(result, "s.sqlite", "full")
    assert "space" in line, line
    db = out / "s.sqlite"
    check = sqlite3.connect(db)
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored, distinct = check.execute("SELECT count(*), count(DISTINCT schedule_key) FROM games").fetchone()
    check.close()
    assert stored == distinct and 0 < stored < 60, stored
    write(out / "l.toml", LEAGUE.format(n=60))
    resumed = arena(out, "league", "run", "l.toml", "-q", "-j", "1")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{60 - stored} games played" in resumed.stdout and "60 scheduled" in resumed.stdout
