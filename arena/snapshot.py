"""Bot snapshots: what a bot *is* once it enters arena, and how its files reach a bot process safely.

A bot is a single ``.py`` file or a folder (a package of helper modules and data files with an entry file,
``bot.py`` by default). When it enters (``arena match``, a league run, ``arena submit``) :func:`take` copies
it into a :class:`Snapshot`: its entry and every file's relative path and bytes, under a size limit. The
snapshot's digest is the sha256 of one canonical encoding (:func:`encode`) of all of that, so it names the
bot's exact content; the store keeps the encoding, tasks carry the snapshot to workers, and a bot process
sees exactly those files and nothing else (the sandbox mounts the materialized copy read-only as ``/bot``).

:class:`BotRoot` writes snapshots for bot processes. Its directory is made with ``mkdtemp`` (a fresh name,
``O_EXCL`` semantics, owned by this process's user, mode 0700, 0711 for root whose bots run under other
uids) under a temp directory that nobody else can rename entries in, and every write goes through
directory descriptors opened with ``O_NOFOLLOW`` and files created with ``O_EXCL``: a symlink planted by
another user is never followed. Each written tree is read back and checked against its digest before it is
published (an atomic rename), and the directory is removed when the process that made it exits.
"""
from __future__ import annotations

import atexit
import errno
import hashlib
import os
import secrets
import shutil
import stat
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import psutil

from arena.errors import ArenaError, ConfigError

MB = 1 << 20
DEFAULT_ENTRY = "bot.py"
MAX_FILES = 10_000
"""Files and folders in one snapshot (a folder with more is refused; the size limit alone would allow millions, and
every folder is written again for each game)."""
MAX_DEPTH = 32
"""Folder levels in one snapshot (a deeper folder is refused in one line: the walk recursed once per level, and
1,500 levels ended `arena match`, `arena submit` and a league run in a RecursionError)."""
_MAGIC = b"arena-snapshot/1\n"
_SKIPPED_DIRS = ("__pycache__",)
_ROOT_PREFIX, _RUN_PREFIX = "arena-bots-", "arena-run-"
ENV_BASE = "ARENA_BOTS_TMPDIR"
"""Set by a league run for its worker processes: the private directory their bot roots go in (removed by the
run however its workers end)."""


class SnapshotError(ArenaError):
    """A snapshot failed its digest check (corrupted in transit or on disk): never run."""


@dataclass(frozen=True)
class Snapshot:
    """One bot's exact content. Build it with :func:`take`, :func:`single` or :func:`decode`."""

    entry: str
    """The file the sandbox loads (``class Bot`` lives there): a top-level ``.py`` file of ``files``."""
    files: dict[str, bytes] = field(repr=False)
    """Relative path (``/``-separated) -> content, for every file of the bot."""
    digest: str = ""
    """sha256 of :func:`encode` (hex): computed when built, checked again before the files are written."""
    name: str = field(default="", compare=False)
    """Where it came from, for display only (the file's or folder's name; not part of the digest)."""

    @property
    def size(self) -> int:
        """Bytes of content and of the files' relative paths (what the size limit counts: the store keeps both, and
        10,000 long random names of empty files were megabytes a "1 MB" limit never saw)."""
        return sum(len(path.encode()) + len(data) for path, data in self.files.items())

    def entry_text(self) -> str:
        """The entry file as text (for displays; undecodable bytes replaced)."""
        return self.files[self.entry].decode("utf-8", errors="replace")

    def verify(self) -> None:
        """Raises SnapshotError unless the content still hashes to ``digest``."""
        if _digest(encode(self)) != self.digest:
            raise SnapshotError(f"bot snapshot {self.digest[:12]} does not match its digest; refusing to run it")


def make(entry: str, files: dict[str, bytes], name: str = "") -> Snapshot:
    """A snapshot of ``files`` loaded through ``entry`` (paths checked, digest computed)."""
    for path in files:
        _check_relpath(path)
    _check_entry(entry, files)
    bare = Snapshot(entry, dict(sorted(files.items())))
    return Snapshot(bare.entry, bare.files, _digest(encode(bare)), name or entry)


def single(filename: str, source: str | bytes) -> Snapshot:
    """A one-file bot (``filename`` is also its entry)."""
    return make(filename, {filename: source.encode() if isinstance(source, str) else source})


def encode(snapshot: Snapshot) -> bytes:
    """The canonical bytes of a snapshot (entry, then each file in path order, each length-prefixed)."""
    parts = [_MAGIC, _field(snapshot.entry.encode()), str(len(snapshot.files)).encode() + b"\n"]
    for path in sorted(snapshot.files):
        parts += [_field(path.encode()), _field(snapshot.files[path])]
    return b"".join(parts)


def decode(data: bytes, digest: str | None = None) -> Snapshot:
    """The snapshot :func:`encode` made ``data`` from, checked against ``digest`` when given.

    Raises:
        SnapshotError: malformed bytes or a digest mismatch.
    """
    try:
        if not data.startswith(_MAGIC):
            raise ValueError("bad header")
        pos = len(_MAGIC)
        entry, pos = _read_field(data, pos)
        end = data.index(b"\n", pos)
        count = int(data[pos:end])
        pos = end + 1
        files: dict[str, bytes] = {}
        for _ in range(count):
            path, pos = _read_field(data, pos)
            files[path.decode()], pos = _read_field(data, pos)
        if pos != len(data):
            raise ValueError("trailing bytes")
        snapshot = make(entry.decode(), files)
    except (ValueError, UnicodeDecodeError, ConfigError) as exc:
        raise SnapshotError(f"a stored bot snapshot is malformed ({exc})") from None
    if digest is not None and snapshot.digest != digest:
        raise SnapshotError(f"bot snapshot {digest[:12]} does not match its digest; refusing to run it")
    return snapshot


def pack(snapshot: Snapshot) -> bytes:
    """:func:`encode`, compressed (what the store keeps)."""
    return zlib.compress(encode(snapshot), 6)


def unpack(blob: bytes, digest: str | None = None) -> Snapshot:
    """The inverse of :func:`pack` (checked like :func:`decode`)."""
    try:
        data = zlib.decompress(blob)
    except zlib.error as exc:
        raise SnapshotError(f"a stored bot snapshot is corrupt ({exc})") from None
    return decode(data, digest)


def _field(data: bytes) -> bytes:
    return str(len(data)).encode() + b"\n" + data


def _read_field(data: bytes, pos: int) -> tuple[bytes, int]:
    end = data.index(b"\n", pos)
    n = int(data[pos:end])
    start = end + 1
    if n < 0 or start + n > len(data):
        raise ValueError("truncated")
    return data[start:start + n], start + n


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _check_relpath(path: str) -> None:
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in path:
        raise ConfigError(f"bad file name {path!r} in a bot snapshot")


def _check_entry(entry: str, files: dict[str, bytes]) -> None:
    if "/" in entry or not entry.endswith(".py"):
        raise ConfigError(f"a bot's entry must be a .py file at the top of its folder, not {entry!r}")
    if entry not in files:
        raise ConfigError(f"the bot has no entry file {entry} (a folder bot needs {DEFAULT_ENTRY} or "
                          "entry = \"name.py\")")


# -- taking a snapshot ---------------------------------------------------------------------------------
def take(path: str | os.PathLike[str], entry: str | None = None, max_bytes: int = MB, *,
         setting: str = "--max-bot-mb") -> Snapshot:
    """Copies a bot file or folder into a snapshot, reading nothing beyond it.

    A file is a one-file bot. A folder is every regular file under it except hidden names (``.git``,
    ``.venv``, ...), ``__pycache__`` folders and ``.pyc`` files; its entry is ``entry`` or ``bot.py``.
    The path named is opened once without following a symlink (a symlink there is refused: it could name any
    file of the machine) and everything is read from that descriptor; symlinks inside a folder are refused too,
    and nothing is read past the size limit. Run as root, a bot that belongs to another user (the path, or a
    folder on the way to it, is theirs) is read by a child process with that user's rights (:func:`reader_uid`): a
    file they cannot read (a hard link to it included) is refused, never copied with root's.

    Args:
        path: the bot file or folder.
        entry: the entry file of a folder bot (default ``bot.py``); must be None or the file's name for a file.
        max_bytes: the largest total content accepted.
        setting: how the user raises the limit (named in the refusal).

    Raises:
        ConfigError: one line: missing or unreadable path, a symlink, no entry, a special file, too large.
    """
    where = os.fspath(path)
    uid = reader_uid(where)
    if uid is None:
        return _take(where, entry, max_bytes, setting)
    return _as_user(uid, lambda: _take(where, entry, max_bytes, setting), where)


def reader_uid(where: str) -> int | None:
    """Whose rights a bot at ``where`` is read with: None (this process's own) unless this process is root and a
    folder on the way to it, or the path itself, belongs to another user: then the deepest such owner's uid (the
    user whose folder holds the bot).

    Raises:
        ConfigError: run as root, the path passes through a symlink a user made (it could lead anywhere root
            can read; a system symlink, root's own, is followed).
    """
    if os.geteuid() != 0:
        return None  # a user reads with their own rights: nothing more than they could read anyway
    full = where if os.path.isabs(where) else os.path.join(os.getcwd(), where)
    owner, prefix = None, ""
    parts = [part for part in full.split(os.sep) if part not in ("", ".")]
    for i, part in enumerate(parts):  # each prefix as the kernel resolves it (no lexical normalization of "..")
        prefix += os.sep + part
        try:
            st = os.lstat(prefix)
        except OSError:
            break  # (a missing path is refused by _take, with its reason)
        if st.st_uid == 0:
            continue
        if stat.S_ISLNK(st.st_mode) and i < len(parts) - 1:  # (the bot's own path as a symlink: refused by _take)
            raise ConfigError(f"bot {where} is reached through {prefix}, a symlink of uid {st.st_uid}; pass the "
                              "real path")
        owner = st.st_uid
    return owner


def _as_user(uid: int, work: Callable[[], Snapshot], where: str) -> Snapshot:
    """``work()`` run in a forked child that dropped to ``uid`` (its own groups only): what that user could not read
    is refused there. The child's answer is data (its name, then :func:`encode`), decoded and checked here like
    any stored snapshot."""
    import pwd  # start-up: only for a root run reading a user's bot
    try:
        user = pwd.getpwuid(uid)
        gid, groups = user.pw_gid, os.getgrouplist(user.pw_name, user.pw_gid)
    except KeyError:  # a uid with no account: its own gid-less self, no groups
        gid, groups = uid, []
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # the child: drop, work, send b"ok\n" + bytes or b"no\n" + the refusal, and leave
        code = 0
        try:
            os.close(read_end)
            os.setgroups(groups)
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            try:
                taken = work()
                answer = b"ok\n" + taken.name.encode("utf-8", "surrogateescape") + b"\0" + encode(taken)
            except ConfigError as exc:
                answer = b"no\n" + str(exc).encode("utf-8", "backslashreplace")
            with os.fdopen(write_end, "wb") as out:
                out.write(answer)
        except BaseException:  # noqa: BLE001 - the parent reports a child that said nothing
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answers:
        data = answers.read()
    os.waitpid(pid, 0)
    if data.startswith(b"no\n"):  # (root read it as the user it belongs to: say so)
        raise ConfigError(f"{data[3:].decode('utf-8', 'replace')} (read with the rights of its owner, uid {uid})")
    if not data.startswith(b"ok\n"):
        raise ConfigError(f"cannot read bot {where} with its owner's rights (uid {uid}); check the path")
    name, _, encoded = data[3:].partition(b"\0")
    try:
        return replace(decode(encoded), name=name.decode("utf-8", "surrogateescape"))
    except SnapshotError as exc:
        raise ConfigError(f"bot {where}: {exc}") from None


def _take(where: str, entry: str | None, max_bytes: int, setting: str) -> Snapshot:
    """:func:`take` with this process's rights."""
    def too_big(size: int) -> ConfigError:
        return ConfigError(f"bot {where} is {_human(size)}, over the {_human(max_bytes, exact=True)} limit for a "
                           f"bot; raise it with {setting}")

    fd = _open_top(where)
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            name = os.path.basename(os.path.normpath(where))
            if entry not in (None, name):
                raise ConfigError(f"bot {where} is a file: 'entry' is only for a folder bot")
            if not name.endswith(".py"):
                raise ConfigError(f"a bot is a Python file defining class Bot (or a folder with bot.py); {where} "
                                  "does not end in .py")
            named = len(os.fsencode(name))
            if st.st_size + named > max_bytes:
                raise too_big(st.st_size + named)
            return make(name, {name: _read_regular(fd, where, max_bytes - named, lambda n: too_big(named + n))}, name)
        if not stat.S_ISDIR(st.st_mode):
            raise ConfigError(f"bot {where} is neither a file nor a folder")
        entry = entry or DEFAULT_ENTRY
        size = _tree_size(fd, where)
        if size > max_bytes:  # refused with its real size, before anything is read
            raise too_big(size)
        files: dict[str, bytes] = {}
        for rel, data in _read_tree(fd, where, max_bytes, too_big):
            if len(files) >= MAX_FILES:
                raise ConfigError(f"bot {where} has more than {MAX_FILES} files; ship fewer, larger files")
            files[rel] = data
    finally:
        os.close(fd)
    if "/" in entry or not entry.endswith(".py"):
        raise ConfigError(f"the entry of bot folder {where} must be a .py file at its top, not {entry!r}")
    if entry not in files:
        from arena.comp424_names import is_course_folder  # start-up: only for this error
        if is_course_folder(files):
            raise ConfigError(f"bot folder {where} is a COMP424 checkout (it has a student_agent.py), not an arena "
                              f"bot: play it as comp424:{where} (docs/comp424.md)")
        raise ConfigError(f"bot folder {where} has no {entry}: add it (it defines class Bot) or name the entry "
                          "file with entry = \"name.py\"")
    return make(entry, files, os.path.basename(os.path.normpath(os.path.abspath(where))))


def _open_top(where: str) -> int:
    """The bot's file or folder, opened once without following a symlink (everything is read from this
    descriptor: the path cannot be swapped between a check and a read). A special file is never opened."""
    try:
        st = os.lstat(where)
        if stat.S_ISLNK(st.st_mode):
            raise ConfigError(f"bot {where} is a symlink (to {os.readlink(where)!r}); arena reads a bot only from "
                              "the file or folder itself: pass its real path")
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise ConfigError(f"bot {where} is neither a file nor a folder")
        fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ConfigError(f"bot {where!r} does not exist; a BOT is a built-in spec, a .py file or a folder with "
                          "bot.py") from None
    except OSError as exc:
        what = "is a symlink" if exc.errno == errno.ELOOP else f"cannot be read ({exc.strerror})"
        raise ConfigError(f"bot {where} {what}") from None
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):  # swapped between the lstat and the open
        os.close(fd)
        raise ConfigError(f"bot {where} changed while it was being read; submit it again")
    return fd


def _human(size: int, exact: bool = False) -> str:
    if size >= MB // 10:
        return f"{size / MB:g} MB" if exact else f"{size / MB:.1f} MB"
    return f"{size / 1024:.1f} KB"


def _read_regular(fd: int, where: str, max_bytes: int, too_big: Callable[[int], ConfigError]) -> bytes:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{where} is not a regular file; a bot folder holds only files and folders")
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > max_bytes:  # the file grew after its stat: never read past the limit
            raise too_big(size)
        chunks.append(chunk)


def _walk(top: int, where: str) -> Iterator[tuple[str, str, int]]:
    """(relative path, name, directory descriptor) of every file a folder snapshot takes, walked from the folder's
    descriptor ``top`` (a folder swapped for a symlink meanwhile is not followed); symlinks inside are refused."""
    entries = 0  # files and folders: each costs the store (in every path under it) and every game's writing

    def count(n: int) -> None:
        nonlocal entries
        entries += n
        if entries > MAX_FILES:
            raise ConfigError(f"bot {where} has more than {MAX_FILES} files and folders; ship fewer, larger files")

    for dirpath, dirnames, filenames, dirfd in os.fwalk(".", follow_symlinks=False, dir_fd=top):
        rel_dir = os.path.normpath(dirpath)
        for name in list(dirnames):
            if name.startswith(".") or name in _SKIPPED_DIRS:
                dirnames.remove(name)
                continue
            if stat.S_ISLNK(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode):
                link = os.path.normpath(os.path.join(rel_dir, name))
                raise ConfigError(f"bot folder {where} contains a symlink {link}; copy the files it points to into "
                                  "the folder instead")
        depth = 0 if rel_dir == "." else rel_dir.count(os.sep) + 1
        if dirnames and depth >= MAX_DEPTH:  # refused before the walk goes (and recurses) any deeper
            raise ConfigError(f"bot folder {where} has folders more than {MAX_DEPTH} deep; ship a flatter folder")
        count(len(dirnames))
        dirnames.sort()
        for name in sorted(filenames):
            if name.startswith(".") or name.endswith(".pyc"):
                continue
            count(1)
            yield (name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")), name, dirfd


def _tree_size(top: int, where: str) -> int:
    """Bytes of the files a folder snapshot would take, with their relative paths (from their sizes: nothing is
    read): what :attr:`Snapshot.size` counts."""
    total = 0
    for rel, name, dirfd in _walk(top, where):
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode):
            total += st.st_size + len(os.fsencode(rel))
    return total


def _read_tree(top: int, where: str, max_bytes: int,
               too_big: Callable[[int], ConfigError]) -> Iterator[tuple[str, bytes]]:
    """(relative path, bytes) of every file :func:`_walk` finds, never reading past ``max_bytes`` in all."""
    total = 0
    for rel, name, dirfd in _walk(top, where):
        total += len(os.fsencode(rel))  # the path is stored too (Snapshot.size)
        if total > max_bytes:
            raise too_big(total)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dirfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ConfigError(f"bot folder {where} contains a symlink {rel}; copy the file it points to into "
                                  "the folder instead") from None
            raise ConfigError(f"cannot read {os.path.join(where, rel)}: {exc.strerror}") from None
        try:
            data = _read_regular(fd, os.path.join(where, rel), max_bytes - total,
                                 lambda n: too_big(total + n))  # noqa: B023 - called in this iteration
        finally:
            os.close(fd)
        total += len(data)
        yield rel, data


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
        self._written: dict[str, str] = {}
        self._lock = threading.Lock()
        _live[self.path] = self

    def materialize(self, snapshot: Snapshot) -> str:
        """The directory holding ``snapshot``'s files (written and checked on first use)."""
        with self._lock:
            if self.fd < 0:
                raise SnapshotError("the bot root is closed")
            done = self._written.get(snapshot.digest)
            if done is None:
                snapshot.verify()  # what travelled (a task, the store) is what was taken
                done = self._written[snapshot.digest] = os.path.join(self.path, self._write(snapshot))
            return done

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
