"""An uploaded bot (a ``.py`` file or a ``.zip`` of a folder bot) read into a
:class:`arena.snapshot.Snapshot`, in
memory: nothing of an upload is ever written to disk except the snapshot in the store.

A zip is hostile input. Each entry's name is checked before its bytes are read (no absolute path, drive or
backslash, no ``..`` or empty component, no symlink, device, FIFO or socket, no name twice (case-folded), no name
both a file and a folder, at most :data:`MAX_PATH` characters and ``MAX_DEPTH`` folders deep, at most
:data:`arena.snapshot.MAX_FILES` files and folders), and the bytes are counted as they are
decompressed, so a zip bomb stops at the league's ``max_bot_mb`` however small its headers say it is.
"""
from __future__ import annotations

import io
import re
import stat
import zipfile

from arena.errors import ArenaError, ConfigError
from arena.snapshot import DEFAULT_ENTRY, MAX_DEPTH, MAX_FILES, MB, Snapshot, make, single

MAX_PATH = 255
"""Characters of one path inside a zipped bot."""
CHUNK = 64 * 1024
_SAFE_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}\.py")


class UploadError(ArenaError):
    """An upload refused (one line: what is wrong with it)."""


class TooBig(UploadError):
    """An upload, or what it unpacks to, over the league's ``max_bot_mb`` (HTTP 413)."""


def _mb(n: int) -> str:
    return f"{n / MB:.3g} MB"


def entry_name(filename: str) -> str:
    """The name a one-file bot keeps (its tracebacks show it): the upload's own name when it is a plain module
    name, else ``bot.py``."""
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return base if _SAFE_FILE.fullmatch(base) else DEFAULT_ENTRY


def read_upload(filename: str, data: bytes, max_bytes: int, fmt: str = "arena") -> Snapshot:
    """The snapshot of an uploaded ``.py`` or ``.zip`` of at most ``max_bytes`` (upload and unpacked content).
    With ``fmt == "comp424"`` (the league's ``upload_format``) a zip is a COMP424 checkout, unpacked with the same
    checks, then taken as its ``student_agent`` (:func:`arena.adapters.comp424.agent_snapshot`), and a ``.py``
    that registers an agent (``register_agent``) is a hand-in, run with the course's skeleton supplied.

    Raises:
        UploadError: too big, not a .py or .zip, or a zip that is malformed or breaks a rule above.
    """
    if len(data) > max_bytes:
        raise TooBig(f"the upload is {_mb(len(data))}, over the league's max_bot_mb ({_mb(max_bytes)})")
    lower = filename.lower()
    if lower.endswith(".py"):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise UploadError("the .py file is not UTF-8 text") from None
        if fmt == "comp424" and b"register_agent" in data:  # a COMP424 hand-in (its student_agent.py alone)
            from arena.adapters.comp424 import agent_snapshot  # start-up: only COMP424 leagues pay its import
            name = entry_name(filename)
            try:
                return agent_snapshot({name: data}, name[:-3])
            except ConfigError as exc:
                raise UploadError(str(exc)) from None
        return single(entry_name(filename), data)
    if lower.endswith(".zip") and fmt == "comp424":
        from arena.adapters.comp424 import agent_snapshot  # start-up: only COMP424 leagues pay its import
        try:
            return agent_snapshot(read_zip(data, max_bytes, need=None), entry_name(filename[:-4] + ".py")[:-3])
        except ConfigError as exc:
            raise UploadError(str(exc)) from None
    if lower.endswith(".zip"):
        return make(DEFAULT_ENTRY, read_zip(data, max_bytes), name=entry_name(filename[:-4] + ".py")[:-3])
    raise UploadError("upload a .py file (a one-file bot) or a .zip of a folder bot (with bot.py at its top)")


def _checked_name(info: zipfile.ZipInfo) -> str:
    name = info.filename
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        what = "a symlink" if kind == stat.S_IFLNK else "a device, FIFO or socket"
        raise UploadError(f"the zip holds {what} ({name[:80]!r}); zip plain files only")
    if name.startswith("/") or "\\" in name or re.match(r"[A-Za-z]:", name) or "\0" in name:
        raise UploadError(f"the zip holds an absolute or non-portable path ({name[:80]!r}); zip relative paths only")
    parts = name.rstrip("/").split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise UploadError(f"the zip holds a path with '..' or an empty part ({name[:80]!r}); refused")
    if len(name) > MAX_PATH:
        raise UploadError(f"the zip holds a path of {len(name)} characters (at most {MAX_PATH})")
    if len(parts) > MAX_DEPTH:
        raise UploadError(f"the zip holds a path {len(parts)} folders deep (at most {MAX_DEPTH})")
    if info.flag_bits & 0x1:
        raise UploadError("the zip is encrypted; zip the bot without a password")
    return name


def read_zip(data: bytes, max_bytes: int, need: str | None = DEFAULT_ENTRY) -> dict[str, bytes]:
    """A zipped folder bot's files (one common top folder is taken off), checked as the module says; ``need``:
    the file that must be at the top (None: any)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise UploadError(f"not a readable zip ({str(exc)[:80]})") from None
    seen: set[str] = set()
    files: list[zipfile.ZipInfo] = []
    for info in infos:  # every name checked before any byte is unpacked
        name = _checked_name(info)
        key = name.rstrip("/").casefold()
        if key in seen:
            raise UploadError(f"the zip holds the name {name[:80]!r} twice; refused")
        seen.add(key)
        if not info.is_dir() and "__pycache__" not in name.split("/"):
            files.append(info)
    folders = {"/".join(parts[:i]).casefold() for f in files for parts in [f.filename.split("/")]
               for i in range(1, len(parts))}
    if len(files) + len(folders) > MAX_FILES:  # as a folder bot is taken: each folder is written for every game
        raise UploadError(f"the zip holds {len(files)} files in {len(folders)} folders (at most {MAX_FILES} files "
                          "and folders); ship fewer, larger files")
    both = next((f.filename for f in files if f.filename.casefold() in folders), None)
    if both is not None:  # no disk holds both: it was accepted here and failed where the bot was written out
        raise UploadError(f"the zip holds {both[:80]!r} as a file and as a folder; refused")
    tops = {f.filename.split("/", 1)[0] for f in files}
    strip = (len(tops) == 1 and all("/" in f.filename for f in files))  # a zipped folder: its files, not it
    out: dict[str, bytes] = {}
    total = 0
    for info in files:
        chunks = []
        try:
            with archive.open(info) as fh:
                while chunk := fh.read(CHUNK):
                    total += len(chunk)
                    if total > max_bytes:  # counted while unpacking: the headers' sizes are not trusted
                        raise TooBig(f"the bot unpacks to more than the league's max_bot_mb ({_mb(max_bytes)}); "
                                          "refused while unpacking")
                    chunks.append(chunk)
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise UploadError(f"not a readable zip ({str(exc)[:80]})") from None
        out[info.filename.split("/", 1)[1] if strip else info.filename] = b"".join(chunks)
    if need is not None and need not in out:
        raise UploadError(f"the zip has no {DEFAULT_ENTRY} at its top (or at the top of its one folder)")
    return out
