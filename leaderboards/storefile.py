"""Opening a store file safely: checked read-only before anyone writes, and every failure explained.

A store file is data, not code: SQLite would run a trigger, a view or a column default stored in a file
someone handed over. :func:`check` accepts only the exact schema arena itself wrote for the file's schema version
(every table, index and nothing else: no trigger, view or other object; see :func:`known_schemas`), and every
connection runs with ``trusted_schema=OFF``.

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
import functools
import os
import re
import shutil
import sqlite3
from pathlib import Path
from urllib.parse import quote

from arena.errors import ArenaError, ConfigError
from leaderboards import schema

HEADER = b"SQLite format 3\x00"
APPLICATION_ID = 0x4172454E
"""``PRAGMA application_id`` of arena stores ("ArEN"); 0 in stores made before it was set (then the ``meta``
table decides)."""
BUSY_TIMEOUT = 30.0

# primary SQLite result codes (sqlite3.h)
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 3, 5, 6, 8, 10, 11, 13, 14, 26


class StoreError(ArenaError):
    """The store is missing, from a newer arena, not an arena store, damaged, read-only, full or busy."""


class NotAStoreError(StoreError, ConfigError):
    """The file given as a store is not one arena wrote (not SQLite, another schema, a trigger or view in it): the
    user passed the wrong file (exit status 2, like any bad argument); it is never opened for writing."""


def not_a_store(path: Path, what: str) -> NotAStoreError:
    return NotAStoreError(f"{path} is not an arena store ({what}); it was not changed: pass --db with an arena "
                          "store, or move the file away to start a new one")


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
        raise not_a_store(path, "an empty file" if head == b"" else "not an SQLite database")
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
    return _untrusting(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None))


def connect_writer(path: Path) -> sqlite3.Connection:
    """The writer's connection (after :func:`check` passed on a read-only one)."""
    return _untrusting(sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None))


def settled(conn: sqlite3.Connection) -> bool:
    """Whether a connection kept for reuse (a web thread's) reads the store as it is now. A read statement left
    pending (a cursor that a generator or a traceback still holds) or a transaction left open (an exception between
    a BEGIN and its COMMIT) pins the snapshot it started in, and every later read would see that old store.

    A pending statement: an interrupt is cleared when the next statement starts only if no other statement is
    running, so ``SELECT 1`` fails after one. An open transaction: an empty transaction's BEGIN fails. (An empty
    BEGIN/COMMIT alone does not see a pending read: SQLite commits around it.)"""
    conn.interrupt()
    try:
        conn.execute("SELECT 1").fetchone()
        conn.execute("BEGIN")
        conn.execute("COMMIT")
    except sqlite3.Error:
        return False
    return True


def _untrusting(conn: sqlite3.Connection) -> sqlite3.Connection:
    # Defence in depth behind check(): functions with side effects never run from the file's own schema.
    conn.execute("PRAGMA trusted_schema=OFF")
    return conn


def check(conn: sqlite3.Connection, path: Path) -> int | None:
    """Checks an open store: its structure (``PRAGMA quick_check``: every page of every b-tree, ~0.1 s per
    100 MB), its application id and user version, its ``meta`` table, and that its schema is exactly one arena
    wrote for that schema version (:func:`known_schemas`).

    Returns:
        The schema version, or None for an empty database (no schema object at all).

    Raises:
        StoreError: damaged, or written by a newer arena.
        NotAStoreError: not an arena store (another program's database, or an arena store with objects added,
            removed or changed: a trigger, a view, a table).
    """
    try:
        problems = [line for (row,) in conn.execute("PRAGMA quick_check(3)") for line in str(row).splitlines()
                    if not line.startswith("***")]  # ("*** in database main ***" heads SQLite's list)
        if problems != ["ok"]:
            raise StoreError(damaged(path, "; ".join(problems)))
        found = _objects(conn)
        if not found:
            return None
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        user_version = conn.execute("PRAGMA user_version").fetchone()[0]
        if app_id not in (0, APPLICATION_ID):
            raise not_a_store(path, f"an SQLite database with application_id {app_id:#x}")
        if user_version != 0:
            raise not_a_store(path, f"an SQLite database with user_version {user_version}")
        if ("table", "meta") not in {(kind, name) for kind, name, _, _ in found}:
            raise not_a_store(path, f"an SQLite database of {_listed(sorted((k, n) for k, n, _, _ in found))}, "
                                    "without arena's meta table")
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None or not str(row[0]).isdigit() or int(row[0]) < 1:
            raise not_a_store(path, "no schema version")
        version = int(row[0])
        if version > schema.SCHEMA_VERSION:
            raise StoreError(newer(path, version))
        known = known_schemas()[version]
        if found not in known:
            raise not_a_store(path, f"{_difference(found, known)}, not arena's schema {version}")
        return version
    except sqlite3.Error as exc:
        raise StoreError(explain(exc, path)) from None


def newer(path: Path, version: int) -> str:
    return (f"{path} was written by a newer arena (schema {version}, this arena reads up to {schema.SCHEMA_VERSION}); "
            "upgrade arena")


_Objects = frozenset[tuple[str, str, str, str | None]]


def _objects(conn: sqlite3.Connection) -> _Objects:
    """Every object of the file's schema: (type, name, table, its SQL with whitespace normalized)."""
    return frozenset((str(kind), str(name), str(table), _normalized(sql)) for kind, name, table, sql in
                     conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))


def _normalized(sql: str | None) -> str | None:
    if sql is None:
        return None
    return re.sub(r" ?([(),]) ?", r"\1", re.sub(r"\s+", " ", str(sql))).strip()


def _difference(found: _Objects, known: list[_Objects]) -> str:
    """What ``found`` has that the closest of arena's own schemas does not (and what it lacks), named."""
    closest = min(known, key=lambda objects: len(found ^ objects))
    extra = {(kind, name) for kind, name, _, _ in found - closest}
    missing = {(kind, name) for kind, name, _, _ in closest - found}
    parts = [f"{kind} {name[:60]!r} defined differently" if (kind, name) in missing else f"a {kind} {name[:60]!r}"
             for kind, name in sorted(extra)]
    parts += [f"no {kind} {name!r}" for kind, name in sorted(missing - extra)]
    return f"its schema has {_shown(parts)}"


def _listed(objects: list[tuple[str, str]]) -> str:
    return _shown([f"{kind} {name[:60]!r}" for kind, name in objects])


def _shown(parts: list[str]) -> str:
    return ", ".join(parts[:4]) + (f" and {len(parts) - 4} more" if len(parts) > 4 else "")


_ADD_COLUMN = re.compile(r"ALTER TABLE (\w+) ADD COLUMN (.+)", re.S | re.I)


def _migration(version: int) -> str:
    """The statements that took a store from ``version - 1`` to ``version``."""
    return getattr(schema, f"MIGRATE_{version - 1}_TO_{version}")


def _undo(ddl: str, migration: str) -> str:
    """The creation DDL of the version before ``migration``: each column it added taken out of its table, each
    table or index it created taken out of the script."""
    for statement in (s.strip() for s in migration.split(";") if s.strip()):
        added = _ADD_COLUMN.fullmatch(statement)
        if added is None:
            if statement + ";" not in ddl:
                raise RuntimeError(f"cannot derive the previous schema: {statement[:60]!r} is not in SCHEMA")
            ddl = ddl.replace(statement + ";", "", 1)
            continue
        table, column = added.groups()
        start = ddl.index(f"CREATE TABLE IF NOT EXISTS {table} (")
        end = ddl.index("\n);", start)
        lines = ddl[start:end].split("\n")
        at = [i for i, line in enumerate(lines) if line.strip().rstrip(",") == column.strip()]
        if len(at) != 1:
            raise RuntimeError(f"cannot derive the previous schema: column {column!r} of {table} not found once")
        if not lines[at[0]].rstrip().endswith(","):  # it was the last line: the one before loses its comma
            lines[at[0] - 1] = lines[at[0] - 1].rstrip().removesuffix(",")
        del lines[at[0]]
        ddl = ddl[:start] + "\n".join(lines) + ddl[end:]
    return ddl


@functools.cache
def known_schemas() -> dict[int, list[_Objects]]:
    """Per schema version, every schema arena can have written: a store created at that version, or created at an
    earlier one and migrated (an added column sits elsewhere in its table's SQL). The creation script of each
    earlier version is today's :data:`leaderboards.schema.SCHEMA` with the later migrations undone (and
    tests/leaderboards/test_store_schema.py checks the result against version 1 as it shipped)."""
    created = {schema.SCHEMA_VERSION: schema.SCHEMA}
    for version in range(schema.SCHEMA_VERSION, 1, -1):
        created[version - 1] = _undo(created[version], _migration(version))
    known: dict[int, list[_Objects]] = {v: [] for v in created}
    for first in sorted(created):
        conn = sqlite3.connect(":memory:")
        try:
            schema.script(conn, created[first])
            known[first].append(_objects(conn))
            for version in range(first + 1, schema.SCHEMA_VERSION + 1):
                schema.script(conn, _migration(version))
                known[version].append(_objects(conn))
        finally:
            conn.close()
    for variants in known.values():  # each with and without arena's optional tables
        for table in schema.OPTIONAL_TABLES:
            conn = sqlite3.connect(":memory:")
            try:
                conn.execute(table)
                added = _objects(conn)
            finally:
                conn.close()
            variants += [objects | added for objects in variants]
    return known


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
