"""Bot snapshots: what a bot *is* once it enters arena, and its one encoding (digest, store, tasks).

A bot is a single ``.py`` file or a folder (a package of helper modules and data files with an entry file,
``bot.py`` by default). When it enters (``arena match``, a league run, ``arena submit``) :func:`take` copies
it into a :class:`Snapshot`: its entry and every file's relative path and bytes, under a size limit. The
snapshot's digest is the sha256 of one canonical encoding (:func:`encode`) of all of that, so it names the
bot's exact content; the store keeps the encoding, tasks carry the snapshot to workers, and a bot process
sees exactly those files and nothing else (the sandbox mounts the materialized copy read-only as ``/bot``).
Taking one from disk is :mod:`arena.submissions.take`; writing one for a bot process is
:mod:`arena.sandbox.bot_files`.
"""
from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass, field

from arena.errors import ArenaError, ConfigError

MB = 1 << 20
DEFAULT_ENTRY = "bot.py"
MAX_FILES = 10_000
"""Files and folders in one snapshot (a folder with more is refused; the size limit alone would allow millions, and
every folder is written again for each game)."""
MAX_DEPTH = 32
"""Folder levels in one snapshot (a deeper folder is refused in one line: the walk recurses once per level, so a
folder some thousand levels deep would end `arena match`, `arena submit` or a league run in a RecursionError)."""
_MAGIC = b"arena-snapshot/1\n"
SKIPPED_DIRS = ("__pycache__",)


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
        thousands of long names of empty files would otherwise be megabytes a "1 MB" limit never sees)."""
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
        check_relpath(path)
    check_entry(entry, files)
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


def files_digest(snapshot: Snapshot) -> str:
    """A fingerprint of the snapshot's file contents, whatever the files are called (``alice.py`` and ``bob.py``
    with one text have different digests, since a digest covers the names, and one fingerprint). The store keeps
    it beside each bot and submission (``files_hash``), so byte-identical bots are found by an indexed lookup."""
    return hashlib.sha256(b"".join(sorted(hashlib.sha256(data).digest() for data in snapshot.files.values()))
                          ).hexdigest()


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


def check_relpath(path: str) -> None:
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in path:
        raise ConfigError(f"bad file name {path!r} in a bot snapshot")


def check_entry(entry: str, files: dict[str, bytes]) -> None:
    if "/" in entry or not entry.endswith(".py"):
        raise ConfigError(f"a bot's entry must be a .py file at the top of its folder, not {entry!r}")
    if entry not in files:
        raise ConfigError(f"the bot has no entry file {entry} (a folder bot needs {DEFAULT_ENTRY} or "
                          "entry = \"name.py\")")
