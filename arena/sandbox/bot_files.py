"""Bot files on disk for bot processes: a snapshot written under a private root that only this process's user can
write into, read back against its digest, and shown to the sandbox (mounted read-only as ``/bot``).

:class:`BotRoot`'s directory is made with ``mkdtemp`` (a fresh name, ``O_EXCL`` semantics, owned by this process's
user, mode 0700, 0711 for root whose bots run under other uids) under a temp directory that nobody else can rename
entries in, and every write goes through directory descriptors opened with ``O_NOFOLLOW`` and files created with
``O_EXCL``: a symlink planted by another user is never followed. Each written tree is read back and checked against
its digest before it is published (an atomic rename), and the directory is removed when the process that made it
exits.
"""
from __future__ import annotations

import atexit
import os
import secrets
import shutil
import stat
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

import psutil

from arena.errors import ConfigError
from arena.submissions.snapshot import Snapshot, SnapshotError, make

_ROOT_PREFIX, _RUN_PREFIX = "arena-bots-", "arena-run-"
KEEP_FILES = 50_000
"""Files of written snapshots one root keeps on disk; past it (or :data:`KEEP_BYTES`) the least recently used
snapshots are removed. A long-lived process (``arena serve``'s validation worker writes every submission) kept
them all: 10,000 files a submission, ten an hour per account, until /tmp ran out of inodes for every game."""
KEEP_BYTES = 512 << 20
KEEP_LAST = 8
"""Snapshots never removed however big: the most recently used, among them the bots of the game being set up."""
ENV_BASE = "ARENA_BOTS_TMPDIR"
"""Set by a league run for its worker processes: the private directory their bot roots go in (removed by the
run however its workers end)."""


# -- writing snapshots for bot processes ---------------------------------------------------------------
class BotRoot:
    """A private directory this process writes bot snapshots into (``<digest>/`` each), removed on close."""

    def __init__(self, base: str | None = None) -> None:
        base = base or os.environ.get(ENV_BASE) or tempfile.gettempdir()
        _check_base(base)
        _remove_stale(base)
        self.owner = os.getpid()
        self.path = tempfile.mkdtemp(prefix=f"{_ROOT_PREFIX}{os.geteuid()}-{self.owner}-", dir=base)
        self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        st = os.fstat(self.fd)
        if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            os.close(self.fd)
            raise SnapshotError(f"{self.path} is not a private directory of this user; refusing to write bots there")
        # Root's bots run under their own uids: with a mount namespace they reach their snapshot through the
        # bind mount only, without one they must traverse this directory (never list it).
        os.fchmod(self.fd, 0o711 if os.geteuid() == 0 else 0o700)
        self._written: OrderedDict[str, str] = OrderedDict()
        self._sizes: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()
        _live[self.path] = self

    def materialize(self, snapshot: Snapshot) -> str:
        """The directory holding ``snapshot``'s files (written and checked on first use)."""
        with self._lock:
            if self.fd < 0:
                raise SnapshotError("the bot root is closed")
            done = self._written.get(snapshot.digest)
            if done is not None:
                self._written.move_to_end(snapshot.digest)
                return done
            snapshot.verify()  # what travelled (a task, the store) is what was taken
            done = self._written[snapshot.digest] = os.path.join(self.path, self._write(snapshot))
            self._sizes[snapshot.digest] = (len(snapshot.files), snapshot.size)
            self._forget_old()
            return done

    def _forget_old(self) -> None:
        """Removes the least recently used snapshots while over :data:`KEEP_FILES` or :data:`KEEP_BYTES`."""
        files = sum(f for f, _ in self._sizes.values())
        size = sum(b for _, b in self._sizes.values())
        while len(self._written) > KEEP_LAST and (files > KEEP_FILES or size > KEEP_BYTES):
            digest, path = self._written.popitem(last=False)
            f, b = self._sizes.pop(digest)
            files, size = files - f, size - b
            _remove_at(self.fd, os.path.basename(path))

    def _write(self, snapshot: Snapshot) -> str:
        name = snapshot.digest
        staging = f".tmp-{secrets.token_hex(8)}"
        os.mkdir(staging, 0o700, dir_fd=self.fd)
        try:
            top = os.open(staging, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.fd)
            try:
                for rel, data in snapshot.files.items():
                    _write_file(top, rel, data)
                on_disk = make(snapshot.entry, dict(_read_back(top)))
                if on_disk.digest != snapshot.digest:
                    raise SnapshotError(f"bot snapshot {name[:12]} read back differently from what was written")
                _open_up(top)
            finally:
                os.close(top)
            os.rename(staging, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            _remove_at(self.fd, staging)
            raise
        return name

    def close(self) -> None:
        """Removes everything this root wrote (only in the process that made it)."""
        with self._lock:
            if self.fd < 0 or os.getpid() != self.owner:
                return
            os.close(self.fd)
            self.fd = -1
            _live.pop(self.path, None)
            shutil.rmtree(self.path, ignore_errors=True)  # rmtree by descriptor: follows no symlink

    def __enter__(self) -> BotRoot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def private_dir(path: str) -> str:
    """``path`` as a directory of this user that no one else can write into: made (0700) when missing, and
    refused when it is a symlink or belongs to someone else (planted by another local user).

    Raises:
        ConfigError: says what is wrong with the existing path.
    """
    _check_base(os.path.dirname(path))
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise ConfigError(f"{path} is not a private directory of this user (a symlink, or another user's); "
                          "remove it or set TMPDIR to a private directory")
    return path


def _check_base(base: str) -> None:
    """The parent of bot roots must not let other users rename our directory away (sticky or private)."""
    st = os.stat(base)
    if not stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"temporary directory {base} is not a directory; set TMPDIR to one")
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        raise ConfigError(f"temporary directory {base} is writable by other users and not sticky; set TMPDIR "
                          "to a private directory")
    if st.st_uid not in (0, os.geteuid()):
        raise ConfigError(f"temporary directory {base} belongs to another user; set TMPDIR to your own")


def _remove_stale(base: str) -> None:
    """Roots (and run directories) left by processes of this user that were killed before they could clean up."""
    prefixes = tuple(f"{p}{os.geteuid()}-" for p in (_ROOT_PREFIX, _RUN_PREFIX))
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        prefix = next((p for p in prefixes if name.startswith(p)), None)
        if prefix is None:
            continue
        try:
            pid = int(name[len(prefix):].split("-", 1)[0])
            st = os.lstat(os.path.join(base, name))
        except (ValueError, OSError):
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or psutil.pid_exists(pid):
            continue
        shutil.rmtree(os.path.join(base, name), ignore_errors=True)


def _open_dir(parent: int, name: str, create: bool) -> int:
    if create:
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
        except FileExistsError:
            pass
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)


def _write_file(top: int, rel: str, data: bytes) -> None:
    *dirs, name = rel.split("/")
    fds = [top]
    try:
        for d in dirs:
            fds.append(_open_dir(fds[-1], d, create=True))
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fds[-1])
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, 0o644)
        finally:
            os.close(fd)
    finally:
        for fd in fds[1:]:
            os.close(fd)


def _read_back(top: int, prefix: str = "") -> Iterator[tuple[str, bytes]]:
    for entry in sorted(os.listdir(top)):
        st = os.stat(entry, dir_fd=top, follow_symlinks=False)
        rel = prefix + entry
        if stat.S_ISDIR(st.st_mode):
            sub = _open_dir(top, entry, create=False)
            try:
                yield from _read_back(sub, rel + "/")
            finally:
                os.close(sub)
        elif stat.S_ISREG(st.st_mode):
            fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=top)
            try:
                chunks = []
                while chunk := os.read(fd, 1 << 20):
                    chunks.append(chunk)
            finally:
                os.close(fd)
            yield rel, b"".join(chunks)
        else:
            raise SnapshotError(f"unexpected {rel} in a bot snapshot being written")


def _open_up(top: int) -> None:
    """Directories of a finished snapshot become 0755: the bot's uid reads them (files are already 0644)."""
    os.fchmod(top, 0o755)
    for entry in os.listdir(top):
        if stat.S_ISDIR(os.stat(entry, dir_fd=top, follow_symlinks=False).st_mode):
            sub = _open_dir(top, entry, create=False)
            try:
                _open_up(sub)
            finally:
                os.close(sub)


def _remove_at(dir_fd: int, name: str) -> None:
    try:
        shutil.rmtree(name, dir_fd=dir_fd)
    except OSError:
        pass


_live: dict[str, BotRoot] = {}
"""Open roots of this process by path (what :func:`is_materialized` accepts)."""
_default: BotRoot | None = None
_default_lock = threading.Lock()


def default_root() -> BotRoot:
    """This process's bot root (made on first use, removed when the process exits)."""
    global _default
    with _default_lock:
        # a forked child makes its own; so does a process whose root was removed under it (a finished run's)
        root = _default
        if root is None or root.owner != os.getpid() or root.fd < 0 or os.fstat(root.fd).st_nlink == 0:
            root = _default = BotRoot()
            atexit.register(root.close)
        return root


@contextmanager
def scoped_root() -> Iterator[BotRoot]:
    """A bot root for what runs inside the block (one Ray task), removed at its end."""
    global _default
    with BotRoot() as root:
        with _default_lock:
            previous, _default = _default, root
        try:
            yield root
        finally:
            with _default_lock:
                _default = previous


@contextmanager
def worker_files() -> Iterator[str]:
    """A private directory for the bot roots of the worker processes started inside the block (they find it in
    ``$ARENA_BOTS_TMPDIR``); removed at the end of the block, however the workers ended (``os._exit``, SIGKILL)."""
    base = os.environ.get(ENV_BASE) or tempfile.gettempdir()
    _check_base(base)
    _remove_stale(base)
    path = tempfile.mkdtemp(prefix=f"{_RUN_PREFIX}{os.geteuid()}-{os.getpid()}-", dir=base)
    os.chmod(path, 0o711 if os.geteuid() == 0 else 0o700)  # as BotRoot: root's bots traverse, never list
    previous = os.environ.get(ENV_BASE)
    os.environ[ENV_BASE] = path
    try:
        yield path
    finally:
        if previous is None:
            os.environ.pop(ENV_BASE, None)
        else:
            os.environ[ENV_BASE] = previous
        shutil.rmtree(path, ignore_errors=True)


def materialize(snapshot: Snapshot, root: BotRoot | None = None) -> str:
    """The path of ``snapshot``'s entry file, written (once per process) under ``root`` or this process's root."""
    return os.path.join((root or default_root()).materialize(snapshot), snapshot.entry)


def is_materialized(directory: str) -> bool:
    """Whether ``directory`` is a snapshot this process wrote (the only directories a bot may be shown)."""
    root = _live.get(os.path.dirname(directory))
    return root is not None and root.owner == os.getpid() and directory in root._written.values()
