"""Opening a store file safely: checked read-only before anyone writes, and every failure explained.

:meth:`leaderboards.store.Store.open` calls :func:`preflight`, then :func:`check` on a read-only connection from
:func:`connect_readonly`; only a store that passes is reopened for writing. :func:`explain` turns an SQLite or OS
error into the one line a user sees (the file, what is wrong, what to do); ``Store.__exit__`` applies it to
every error raised while a store is in use, so no command needs its own mapping.

Read-only opens and the ``-wal``/``-shm`` files: a WAL store opened read-only still needs its ``-shm`` (the WAL
index), and SQLite creates ``-wal`` and ``-shm`` beside the store when the folder is writable (as any reader
would). In a folder that cannot be written, with no ``-wal`` present, no writer can be active (a WAL writer
must create ``-wal`` there), so the store is opened ``immutable=1``: nothing beside it is created or needed.
"""
from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path
from urllib.parse import quote

from arena.errors import ArenaError

HEADER = b"SQLite format 3\x00"
APPLICATION_ID = 0x4172454E
"""``PRAGMA application_id`` of arena stores ("ArEN"); 0 in stores made before it was set (then the ``meta``
table decides)."""
BUSY_TIMEOUT = 30.0

# primary SQLite result codes (sqlite3.h)
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 3, 5, 6, 8, 10, 11, 13, 14, 26


class StoreError(ArenaError):
    """The store is missing, from a newer arena, not an arena store, damaged, read-only, full or busy."""


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(str(path.absolute()))}?{query}"


def _writable(path: Path) -> bool:
    # access() honours read-only mounts and immutable files even for root (who ignores permission bits)
    return os.access(path, os.W_OK)


def _folder(path: Path) -> Path:
    return path.absolute().parent


def read_only_folder(path: Path) -> str:
    return (f"the folder {_folder(path)} of the store {path} is read-only (SQLite writes {path.name}-wal and "
            f"{path.name}-shm beside it); make the folder writable, or copy the store to a writable folder and "
            "pass --db COPY")


def preflight(path: Path, *, write: bool) -> None:
    """Checks an existing store file without opening it with SQLite: a regular file, an SQLite header, and (for
    ``write``) a writable file, ``-wal``/``-shm`` and folder.

    Raises:
        StoreError: one line naming the file, the problem and what to do.
    """
    if not path.is_file():
        raise StoreError(f"{path} is not a file; pass --db with the path of an arena store")
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(HEADER))
    except OSError as exc:
        raise StoreError(explain(exc, path)) from None
    if head != HEADER and not (head == b"" and write):  # an empty file becomes a new store (as SQLite treats it)
        what = "an empty file" if head == b"" else "not an SQLite database"
        raise StoreError(f"{path} is not an arena store ({what}); pass --db with an arena store, or move the file "
                         "away to start a new one")
    if not write:
        return
    if not _writable(path):
        raise StoreError(read_only(path))
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        if side.exists() and not _writable(side):
            raise StoreError(f"{side} (beside the store {path}) is read-only; make it writable, or copy the store "
                             "to a writable folder and pass --db COPY")
    if not _writable(_folder(path)):
        raise StoreError(read_only_folder(path))


def read_only(path: Path) -> str:
    return (f"the store {path} is read-only; make it writable (chmod u+w, or remount), or copy it and pass "
            "--db COPY")


def connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection that modifies nothing it can avoid (see the module docstring)."""
    if not Path(f"{path}-wal").exists() and not _writable(_folder(path)):
        uri = _uri(path, mode="ro", immutable="1")
    else:
        uri = _uri(path, mode="ro")
    return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)


def check(conn: sqlite3.Connection, path: Path) -> int | None:
    """Checks an open store: its structure (``PRAGMA quick_check``: every page of every b-tree, ~0.1 s per
    100 MB), its application id and its ``meta`` table.

    Returns:
        The schema version, or None for an empty database (no tables).

    Raises:
        StoreError: damaged, or not an arena store.
    """
    try:
        problems = [line for (row,) in conn.execute("PRAGMA quick_check(3)") for line in str(row).splitlines()
                    if not line.startswith("***")]  # ("*** in database main ***" heads SQLite's list)
        if problems != ["ok"]:
            raise StoreError(damaged(path, "; ".join(problems)))
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            return None
        if app_id not in (0, APPLICATION_ID) or "meta" not in tables:
            raise StoreError(f"{path} is an SQLite database but not an arena store; pass --db with an arena store")
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None or not str(row[0]).isdigit():
            raise StoreError(f"{path} is not an arena store (no schema version); pass --db with an arena store")
        return int(row[0])
    except sqlite3.Error as exc:
        raise StoreError(explain(exc, path)) from None


def damaged(path: Path, detail: str) -> str:
    return (f"the store {path} is damaged ({detail}); it was not changed: restore a backup, or recover it with "
            f"`sqlite3 {path} .recover | sqlite3 NEW.sqlite` and pass --db NEW.sqlite")


def _free(path: Path) -> str:
    try:
        free = shutil.disk_usage(_folder(path)).free
    except OSError:
        return "?"
    return f"{free / 1e6:.1f} MB" if free >= 100_000 else f"{free // 1000} kB"


def explain(exc: BaseException, path: Path) -> str:
    """One line for an SQLite or OS error on the store ``path``: the file, what is wrong, what to do."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    # OSError numbers for the same conditions (creating the store, its folder, or its lock file)
    number = exc.errno if isinstance(exc, OSError) else None
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if primary == _FULL or number in (errno.ENOSPC, errno.EDQUOT):
        return (f"the disk holding the store {path} is full ({_free(path)} free); what was stored is intact: free "
                "some space (or move the store and pass --db) and run the same command again (a league resumes)")
    if primary in (_READONLY, _CANTOPEN) or number in (errno.EROFS, errno.EACCES, errno.EPERM):
        if primary == _CANTOPEN and _writable(_folder(path)):
            return (f"cannot open the store {path} ({detail}); check that it and its folder exist and can be "
                    "read (and written, to play or submit)")
        if not _writable(_folder(path)):
            return read_only_folder(path)
        return read_only(path)
    if primary in (_CORRUPT, _NOTADB):
        return damaged(path, detail)
    if primary in (_BUSY, _LOCKED):
        return (f"the store {path} stayed locked by another process for {BUSY_TIMEOUT:.0f} s ({detail}); wait for "
                "it to finish, then run the command again")
    if primary in (_IOERR, _PERM) or number is not None:
        return f"cannot read or write the store {path} ({detail}); check its disk and permissions"
    return f"the store {path} failed ({type(exc).__name__}: {detail}); check the file or pass --db another store"
