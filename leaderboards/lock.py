"""One league runner per store: an OS lock (``flock``) on ``<store>.lock`` beside the store.

The kernel drops a ``flock`` when the process holding it dies, SIGKILL included, so a killed runner never
blocks the next one; no stale-lock guessing. The file also holds the holder's pid, host and start time as
text, only to name it in the refusal. It is never deleted (unlinking a lock file lets two processes lock two
different files of the same name). Opened with ``O_NOFOLLOW`` and checked to be a regular file owned by us
with one link before it is written: a symlink or hard link planted at that name cannot make a runner
overwrite another file.

Only ``arena league run`` (and ``arena demo``, which runs a league) take it. ``arena submit`` does not: its
one transaction is serialized with the runner's by SQLite's own write lock, and the bot it enters is played
by the next run (see docs/leagues.md, "Running").
"""
from __future__ import annotations

import errno
import fcntl
import os
import socket
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from leaderboards.storefile import StoreError, explain

T = TypeVar("T")


class StoreBusy(StoreError):
    """Another league runner holds the store."""


def lock_path(db: str | os.PathLike[str]) -> Path:
    db = Path(db)
    return db.with_name(db.name + ".lock")


def _open(path: Path, flags: int) -> int:
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0), 0o644)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_nlink != 1:
        os.close(fd)
        raise StoreError(f"{path} is not a lock file of this user (a {stat.filemode(st.st_mode)} file of uid "
                         f"{st.st_uid} with {st.st_nlink} links); remove it, then run the command again")
    return fd


def _holder_text(fd: int) -> str:
    try:
        text = os.pread(fd, 512, 0).decode("utf-8", "replace")
    except OSError:
        text = ""
    first, _, rest = text.partition("\n")
    fields = dict(part.split("=", 1) for part in first.split() if "=" in part)
    if "pid" not in fields:
        return "another process"
    started = fields.get("started", "")
    since = time.strftime(" since %Y-%m-%d %H:%M:%S", time.localtime(float(started))) if \
        started.replace(".", "", 1).isdigit() else ""
    what = rest.partition("\n")[0]
    what = what[len(HELD_BY):].strip() if what.startswith(HELD_BY) else ""
    return f"{what + ': ' if what else ''}pid {fields['pid']} on host {fields.get('host', '?')}{since}"


HELD_BY = "held by "
"""The lock file's second line: what holds the lock, in words (``arena serve``), named in the refusal."""


class RunnerLock:
    """The held lock; :meth:`release` (or the process ending) frees it."""

    def __init__(self, db: Path, fd: int) -> None:
        self.db = db
        self.fd = fd

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing the only descriptor drops the flock
            self.fd = -1

    def __enter__(self) -> RunnerLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def acquire(db: str | os.PathLike[str], holder: str = "") -> RunnerLock:
    """Takes the runner lock of the store ``db`` without waiting (creating its folder and lock file if needed);
    ``holder`` says what holds it (``arena serve``), for the refusal another runner gets.

    Raises:
        StoreBusy: another runner holds it (the message names its pid, host and start time).
        StoreError: the lock file cannot be made (read-only folder, full disk) or is not ours.
    """
    db = Path(db)
    path = lock_path(db)
    try:
        path.absolute().parent.mkdir(parents=True, exist_ok=True)
        fd = _open(path, os.O_RDWR | os.O_CREAT)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink planted at the lock's name
            raise StoreError(f"{path} is a symbolic link, not a lock file; remove it, then run the command again") \
                from None
        raise StoreError(explain(exc, db)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        who = _holder_text(fd)
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise StoreError(f"cannot lock {path} ({exc.strerror}); check its folder, then run again") from None
        raise StoreBusy(f"the store {db} is in use by another league runner ({who}); wait for it to finish or "
                        "stop it, then run the same command again (it resumes)") from None
    try:
        text = (f"pid={os.getpid()} host={socket.gethostname()} started={time.time():.0f} "
                f"command={os.path.basename(sys.argv[0]) or 'python'}\n"
                + (f"{HELD_BY}{' '.join(holder.split())[:200]}\n" if holder else "")).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, text, 0)
    except OSError as exc:  # a full disk: the lock is held, but say so rather than run without the text
        os.close(fd)
        raise StoreError(explain(exc, db)) from None
    return RunnerLock(db, fd)


NOTE_AT = 512
"""Where the holder's progress note starts in the lock file (the holder text is read from the bytes before)."""


def write_note(db: str | os.PathLike[str], text: str) -> None:
    """The lock holder's note for readers (the league run's progress, read by ``arena tui``): written into the
    lock file after the holder text, so it needs no file of its own (no new page on a full disk, nothing to
    clean up). Errors are ignored: a note is a courtesy."""
    data = text.encode("utf-8")[:2048]

    def put(fd: int) -> None:
        os.pwrite(fd, data, NOTE_AT)
        os.ftruncate(fd, NOTE_AT + len(data))
    _with_lock_file(db, os.O_WRONLY, put)


def clear_note(db: str | os.PathLike[str]) -> None:
    """Drops the note (the run is over)."""
    def drop(fd: int) -> None:
        if os.fstat(fd).st_size > NOTE_AT:
            os.ftruncate(fd, NOTE_AT)
    _with_lock_file(db, os.O_WRONLY, drop)


def read_note(db: str | os.PathLike[str]) -> str:
    """The holder's note ("" without one)."""
    note = _with_lock_file(db, os.O_RDONLY, lambda fd: os.pread(fd, 4096, NOTE_AT).decode("utf-8", "replace"))
    return note or ""


def _with_lock_file(db: str | os.PathLike[str], flags: int, use: Callable[[int], T]) -> T | None:
    """``use(fd)`` on the store's lock file, opened safely; None when it is missing or unusable (notes are a
    courtesy: a reader or writer of one never fails a run)."""
    try:
        fd = _open(lock_path(db), flags)
    except (OSError, StoreError):
        return None
    try:
        return use(fd)
    except OSError:
        return None
    finally:
        os.close(fd)


def holder(db: str | os.PathLike[str]) -> str | None:
    """Who holds the runner lock of ``db`` ("pid N on host H since ..."), or None when no runner does."""
    path = lock_path(db)
    try:
        fd = _open(path, os.O_RDONLY)
    except (OSError, StoreError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return _holder_text(fd)
    finally:
        os.close(fd)
    return None
