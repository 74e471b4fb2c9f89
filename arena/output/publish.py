"""Writing a generated set of files (``arena report``'s pages) into a folder the user chose, safely and again.

The folder (``--out DIR``) may already hold an earlier report and files of the user's own, and anything in it may be
a planted symbolic link. The rules:

- Only files this writer wrote earlier are ever removed: each run records the names it wrote in ``DIR/`` +
  :data:`MANIFEST`, and the next run deletes the names of that list it did not write again (a page of a bot that
  is gone). Why a list and not "swap a fresh folder in atomically": DIR is the user's folder and may hold their
  own files, so it cannot be replaced as a whole; and a list read back is checked against the shape of names we
  write (one optional subfolder of ours, plain names), so a forged list cannot name ``../x`` or a user's file
  elsewhere.
- Nothing in DIR is followed: files are first written into a fresh private folder inside DIR (``mkdtemp``, same
  file system), then moved into place with ``rename`` through folder descriptors opened ``O_NOFOLLOW``. A rename
  replaces a planted link rather than writing through it; a subfolder (``bots``, ``data``) that is a link is
  refused with one line before anything is moved.
- A failure while the report is generated (the slow part) leaves the earlier report untouched: nothing in DIR
  changes until every file is written. Only the renames themselves could be interrupted; the list is written
  first as old + new names, so the next run still removes whatever is stale.

The folder DIR itself is the user's to choose (a link given as ``--out`` is followed, as any path argument).
"""
from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from types import TracebackType

from arena.errors import ConfigError

MANIFEST = ".arena-report-files.json"
"""The list of the files the last run wrote, relative to DIR."""
STAGING = ".arena-report-staging-"
"""Prefix of the private folder a run writes into before moving files into place."""
_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}")
"""A file or folder name we write: plain, never hidden, never ``..``."""


class FolderWriter:
    """Files written into ``out`` at :meth:`commit` only, removing what an earlier run wrote and this one did not.

    ``subfolders`` are the only folders (one level) a name may be in; use as a context manager so a failure
    removes the private staging folder and leaves ``out`` as it was.
    """

    def __init__(self, out: Path, subfolders: tuple[str, ...]) -> None:
        self.out = out
        self.subfolders = subfolders
        self.written: set[str] = set()
        out.mkdir(parents=True, exist_ok=True)
        _sweep_staging(out)
        self.staging = Path(tempfile.mkdtemp(prefix=STAGING, dir=out))  # 0700, a fresh name: nothing planted
        for sub in subfolders:
            (self.staging / sub).mkdir()

    def __enter__(self) -> FolderWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)

    def valid(self, name: str) -> bool:
        """Whether ``name`` has the shape of a file this writer writes (``index.html``, ``bots/bot-3.html``)."""
        parts = name.split("/")
        return (len(parts) == 1 or (len(parts) == 2 and parts[0] in self.subfolders)) and all(
            _PART.fullmatch(p) for p in parts)

    def write(self, name: str, text: str) -> None:
        """Stages ``text`` as ``name`` (relative to ``out``); nothing in ``out`` changes until :meth:`commit`."""
        if not self.valid(name):
            raise ValueError(f"not a name this writer writes: {name!r}")
        (self.staging / name).write_text(text, encoding="utf-8")
        self.written.add(name)

    def commit(self) -> None:
        """Moves the staged files into ``out``, then removes the files of the earlier run not written again.

        Raises:
            ConfigError: a subfolder of ``out`` is a link or not a folder, or a name is taken by a folder.
        """
        top = os.open(self.out, os.O_RDONLY | os.O_DIRECTORY)
        folders: dict[str, int] = {}
        try:
            folders[""] = top
            for sub in self.subfolders:  # checked before anything moves: a refusal leaves the old report whole
                folders[sub] = _subfolder(top, sub, self.out)
            for name in self.written:
                where, base = _split(name)
                if _is_folder(folders[where], base):
                    raise ConfigError(f"{self.out / name} is a folder; the report writes a file there: move it away "
                                      "or choose another --out")
            earlier = {n for n in _read_list(top) if self.valid(n)}
            self._write_list(top, earlier | self.written)  # first: an interrupted move still leaves a true list
            staged = {sub: os.open(self.staging / sub if sub else self.staging, os.O_RDONLY | os.O_DIRECTORY)
                      for sub in folders}
            try:
                for name in sorted(self.written):
                    where, base = _split(name)
                    os.replace(base, base, src_dir_fd=staged[where], dst_dir_fd=folders[where])  # never follows
            finally:
                for fd in staged.values():
                    os.close(fd)
            for name in earlier - self.written:
                where, base = _split(name)
                try:
                    os.unlink(base, dir_fd=folders[where])  # a link is removed itself, never its target
                except (FileNotFoundError, IsADirectoryError, PermissionError):
                    pass  # gone already, or a folder someone put there: not ours to remove
            self._write_list(top, self.written)
        finally:
            for fd in folders.values():
                os.close(fd)

    def _write_list(self, top: int, names: set[str]) -> None:
        (self.staging / MANIFEST).write_text(json.dumps({"files": sorted(names)}, indent=1), encoding="utf-8")
        staged = os.open(self.staging, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.replace(MANIFEST, MANIFEST, src_dir_fd=staged, dst_dir_fd=top)
        finally:
            os.close(staged)


def _split(name: str) -> tuple[str, str]:
    where, _, base = name.rpartition("/")
    return where, base


def _is_folder(folder: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return False


def _subfolder(top: int, sub: str, out: Path) -> int:
    """A descriptor of ``out/sub`` (created if missing), refusing a link or a file there."""
    try:
        os.mkdir(sub, 0o755, dir_fd=top)
    except FileExistsError:
        pass
    try:
        return os.open(sub, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            kind = "a symbolic link" if os.path.islink(out / sub) else "not a folder"
            raise ConfigError(f"{out / sub} is {kind}; the report writes only into real folders of --out: remove it "
                              "or choose another --out") from None
        raise


def _read_list(top: int) -> list[str]:
    """The names the last run wrote; none if the list is missing, a link (never followed) or not ours."""
    try:
        fd = os.open(MANIFEST, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=top)
    except OSError:
        return []
    try:
        with os.fdopen(fd, encoding="utf-8") as f:
            files = json.load(f).get("files", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [n for n in files if isinstance(n, str)] if isinstance(files, list) else []


def _sweep_staging(out: Path) -> None:
    """Removes staging folders a killed run left behind (real folders of our prefix only; links are left)."""
    for entry in os.scandir(out):
        if entry.name.startswith(STAGING) and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)  # rmtree never follows links inside
