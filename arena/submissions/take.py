"""Taking a bot into arena: its file or folder copied into a :class:`~arena.submissions.snapshot.Snapshot`, reading
nothing beyond it (no symlink followed, nothing past the size limit), with its owner's rights when run as root.
"""
from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import replace

from arena.errors import ConfigError
from arena.submissions.snapshot import (
    DEFAULT_ENTRY,
    MAX_DEPTH,
    MAX_FILES,
    MB,
    SKIPPED_DIRS,
    Snapshot,
    SnapshotError,
    decode,
    encode,
    make,
)


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
        from arena.adapters.comp424_names import is_course_folder  # start-up: only for this error
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
            if name.startswith(".") or name in SKIPPED_DIRS:
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


