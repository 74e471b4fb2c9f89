"""The read-only runtime a bot sees, narrowed to what bots load, and held in the page cache.

Why (docs/sandbox.md, "Shared kernel state"): every bot reads the same runtime files, so their page-cache pages
are shared state. A sender that reads a page nobody had read makes it cached; a receiver that touches it sees a
minor fault instead of a major one (``ru_majflt``, or the time the read takes): one bit per uncached page. The
rule that closes the class: a bot can open only a small, fixed set of files (:func:`view`: the interpreter's
standard library, the packages bots use and the shared libraries they load, found by reading the ELF
``DT_NEEDED`` entries, instead of all of ``/usr/lib`` and every installed package), and every page of every
one of them is made resident and locked before the first bot of this process starts (:func:`pin`), so no
bot can turn a page from uncached to cached, nor evict one (locked pages are not reclaimed, and
``posix_fadvise(DONTNEED)`` skips them).
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import mmap
import os
import shutil
import stat
import struct
import sys
import sysconfig
import threading
from dataclasses import dataclass

BOT_PACKAGES = ("numpy", "open_spiel", "pyspiel", "rich")
"""Top-level names of installed packages bots may import (with what their distributions require): numpy
(docs/bot-authors.md), OpenSpiel's games and ``rich`` (imported by arena's boards)."""
_STDLIB_UNUSED = ("test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages",
                  "dist-packages")
"""Parts of the standard library's folder no bot needs (the tests, IDLE, Tk, wheels, the base site-packages)."""
MASK = ""
"""A bind whose source is this is an empty tmpfs mounted over the target: what lies below it is hidden."""


def _real(path: str) -> str:
    return os.path.realpath(path)


# -- shared libraries: the DT_NEEDED closure --------------------------------------------------------------
def _elf(path: str) -> tuple[str | None, list[str], list[str]]:
    """(PT_INTERP, DT_NEEDED names, DT_RPATH/DT_RUNPATH entries) of a 64-bit little-endian ELF file; empty
    when ``path`` is not one."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return None, [], []
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            loads, dynamic, interp = [], None, None
            for i in range(phnum):
                kind, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
                if kind == 1:
                    loads.append((vaddr, offset, filesz))
                elif kind == 2:
                    dynamic = (offset, filesz)
                elif kind == 3:
                    f.seek(offset)
                    interp = f.read(filesz).rstrip(b"\0").decode()
            if dynamic is None:
                return interp, [], []
            f.seek(dynamic[0])
            data = f.read(dynamic[1])
            entries = [struct.unpack_from("<qQ", data, i) for i in range(0, len(data) - 15, 16)]
            strtab = next((v for t, v in entries if t == 5), None)
            base = next((o + strtab - va for va, o, sz in loads if strtab is not None and va <= strtab < va + sz),
                        None)
            if base is None:
                return interp, [], []

            def string(at: int) -> str:
                f.seek(base + at)
                return f.read(4096).split(b"\0", 1)[0].decode(errors="replace")
            needed = [string(v) for t, v in entries if t == 1]
            paths = [p for t, v in entries if t in (15, 29) for p in string(v).split(":") if p]
            return interp, needed, paths
    except (OSError, struct.error, UnicodeDecodeError):
        return None, [], []


def _system_dirs() -> list[str]:
    arch = f"{os.uname().machine}-linux-gnu"
    return [f"/lib/{arch}", f"/usr/lib/{arch}", "/lib64", "/usr/lib64", "/lib", "/usr/lib"]


def libraries(objects: list[str]) -> dict[str, str]:
    """The shared libraries ``objects`` load, transitively: {path inside the sandbox: file on the host}.

    Each is found where the dynamic loader looks (the object's RPATH/RUNPATH, then the system folders) and
    shown at that folder under the name the loader asks for, so ``ld.so.cache``'s answer exists inside."""
    out: dict[str, str] = {}
    todo = list(objects)
    seen: set[str] = set()
    while todo:
        obj = todo.pop()
        if obj in seen:
            continue
        seen.add(obj)
        interp, needed, paths = _elf(obj)
        origin = os.path.dirname(obj)
        if interp:
            out[os.path.join(_real(os.path.dirname(interp)), os.path.basename(interp))] = _real(interp)
            todo.append(_real(interp))
        search = [p.replace("$ORIGIN", origin).replace("${ORIGIN}", origin) for p in paths] + _system_dirs()
        for name in needed:
            for d in ([""] if "/" in name else search):
                candidate = os.path.join(d, name)
                if os.path.isfile(candidate):
                    target = os.path.join(_real(os.path.dirname(candidate)), os.path.basename(candidate))
                    out.setdefault(target, _real(candidate))
                    todo.append(_real(candidate))
                    break
    return out


# -- the Python trees -------------------------------------------------------------------------------------
def _norm(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _bot_distributions() -> tuple[set[str], set[str]]:
    """(top-level names, normalized distribution names) of :data:`BOT_PACKAGES`, their distributions'
    requirements and every game installed through the ``arena.games`` entry point, transitively."""
    # start-up: only when the runtime's file list is computed (once per referee)
    from importlib import metadata
    tops = set(BOT_PACKAGES)
    try:
        tops.update(ep.value.split(":")[0].split(".")[0] for ep in metadata.entry_points(group="arena.games"))
        owners = metadata.packages_distributions()
    except Exception:  # noqa: BLE001 - broken metadata: the names alone
        return tops, {_norm(t) for t in tops}
    dists = {_norm(d) for t in tops for d in owners.get(t, [t])}
    todo = list(dists)
    while todo:
        try:
            requires = metadata.requires(todo.pop()) or []
        except metadata.PackageNotFoundError:
            continue
        for req in requires:
            if "extra ==" in req:
                continue
            name = _norm(req.split(";")[0].strip().split(" ")[0].split("[")[0].split("<")[0].split(">")[0]
                         .split("=")[0].split("!")[0].split("~")[0])
            if name and name not in dists:
                dists.add(name)
                todo.append(name)
    for top, owned in owners.items():
        if any(_norm(d) in dists for d in owned):
            tops.add(top)
    return tops, dists


def _kept(entry: str, tops: set[str], dists: set[str]) -> bool:
    """Whether a site-packages entry belongs to a bot package (module, package, ``.libs`` folder, dist-info)."""
    if entry.endswith((".dist-info", ".egg-info")):
        return _norm(entry.split("-", 1)[0]) in dists  # name-version.dist-info
    return entry.split(".", 1)[0] in tops


@dataclass(frozen=True)
class View:
    binds: tuple[tuple[str, str, bool], ...]
    """(source on the host or :data:`MASK`, path inside, is a directory), parents before children."""
    roots: tuple[str, ...]
    """The host paths whose files a bot can read (directories walked by :func:`files`, less the masked ones)."""
    masked: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def view(packages: tuple[str, ...], workdir: str = "") -> View:
    """What a bot sees: ``packages`` (arena's package folders), the interpreter's executable and standard
    library without its unused parts, the bot packages of site-packages, and the shared libraries all of
    these load (as hard links in a folder under ``workdir``, this process's private sandbox folder, where the
    file system allows)."""
    binds: dict[str, tuple[str, str, bool]] = {}
    masked: list[str] = []

    def mask(path: str) -> None:
        if os.path.isdir(path):
            binds[path] = (MASK, path, True)
            masked.append(path)

    def bind(path: str) -> None:
        if os.path.exists(path):
            binds[path] = (_real(path), path, os.path.isdir(path))

    # The interpreter: its executable at the path it is run by and at its real one, the venv's pyvenv.cfg
    # (which names the base prefix), the standard library less what no bot needs. Never a whole prefix: a
    # system Python's prefix is /usr.
    for exe in {os.path.abspath(sys.executable), _real(sys.executable)}:
        bind(exe)
    bind(os.path.join(sys.prefix, "pyvenv.cfg"))
    for p in packages:
        bind(_real(p))
    stdlib = _real(sysconfig.get_paths()["stdlib"])
    if stdlib == "/" or not os.path.isfile(os.path.join(stdlib, "os.py")):
        raise RuntimeError(f"no standard library at {stdlib!r}; arena cannot build a bot's read-only runtime")
    bind(stdlib)
    bind(_real(sysconfig.get_paths()["platstdlib"]))
    for name in _STDLIB_UNUSED:
        mask(os.path.join(stdlib, name))
    for name in os.listdir(stdlib):
        if name.startswith("config-"):
            mask(os.path.join(stdlib, name))
    tops, dists = _bot_distributions()
    # The site-packages folders on the bot host's sys.path (arena.sandbox.launcher.import_paths), each shown
    # as an empty folder with only the bot packages' entries in it.
    sites = {_real(p) for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)}
    for site in sorted(sites):
        mask(site)
        for entry in sorted(os.listdir(site)):
            path = os.path.join(site, entry)
            if _kept(entry, tops, dists):
                binds[path] = (path, path, os.path.isdir(path))
    roots = [b[1] for b in binds.values() if b[0] != MASK]
    objects = [_real(sys.executable)] + [f for f in _walk(roots, masked) if ".so" in os.path.basename(f)
                                          and not os.path.basename(f).startswith("_tkinter")]  # Tk/X11: no bot
    libs = {t: src for t, src in libraries(objects).items()
            if not any(t.startswith(r.rstrip("/") + "/") for r in roots)}
    # One folder of hard links per library folder where possible (one mount instead of one per library:
    # ~2 ms less per bot start); where a folder holds other binds, or links are impossible, a bind per file.
    alone = {t: src for t, src in libs.items()
             if not any(r.startswith(os.path.dirname(t).rstrip("/") + "/") for r in roots)}
    farm = _farm(alone, workdir) if workdir else None
    if farm:
        for folder in {os.path.dirname(t) for t in alone}:
            binds[folder] = (farm + folder, folder, True)
    for target, source in libs.items():
        if not farm or target not in alone:
            binds[target] = (source, target, False)
    for f in ("/etc/ld.so.cache", "/etc/localtime", "/usr/lib/locale/C.utf8"):  # C.UTF-8: BOT_ENV's locale
        bind(f)
    # Parents before children; drop a bind inside a bound folder unless a mask lies between them.
    ordered = sorted(binds.values(), key=lambda b: (len(b[1]), b[1]))
    kept: list[tuple[str, str, bool]] = []
    for b in ordered:
        above = [k for k in kept if k[2] and b[1].startswith(k[1].rstrip("/") + "/")]
        if above and max(above, key=lambda k: len(k[1]))[0] != MASK and b[0] != MASK:
            continue
        kept.append(b)
    return View(tuple(kept), tuple(sorted({b[1] for b in kept if b[0] != MASK})), tuple(sorted(masked)))


def _farm(libs: dict[str, str], workdir: str) -> str | None:
    """A folder under ``workdir`` holding, at each library's path inside the sandbox, a hard link to it (the
    same inode, so the same page-cache pages); named by the libraries' identities, built once and reused.
    None where a hard link is refused (another file system, ``protected_hardlinks`` without root)."""
    ids = sorted((t, src, os.stat(src).st_ino, os.stat(src).st_mtime_ns) for t, src in libs.items())
    farm = os.path.join(workdir, "libs-" + hashlib.sha256(repr(ids).encode()).hexdigest()[:16])
    if os.path.isdir(farm):
        return farm
    tmp = f"{farm}.{os.getpid()}.tmp"
    try:
        for target, source in libs.items():
            os.makedirs(tmp + os.path.dirname(target), mode=0o755, exist_ok=True)
            os.link(source, tmp + target)
        os.rename(tmp, farm)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return farm if os.path.isdir(farm) else None  # another process built it first, or no links here
    return farm


def _walk(roots: list[str], masked: list[str]) -> list[str]:
    """Every regular file under ``roots`` (files or folders), not below a folder masked *inside* its root,
    without following symbolic links out of the tree (a link inside one is reached through its own root or not
    at all). A mask above a root does not hide it: the root is bound over the mask (a bot package's folder
    inside the masked site-packages), so all of it is seen, its extension modules in subfolders included."""
    out: list[str] = []
    for root in roots:
        if os.path.isfile(root):
            out.append(root)
            continue
        hidden = tuple(m.rstrip("/") + "/" for m in masked if m.startswith(root.rstrip("/") + "/"))
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not (os.path.join(d, x) + "/").startswith(hidden)]
            out.extend(os.path.join(d, n) for n in names)
    return out


def files(v: View) -> dict[str, str]:
    """The regular files a bot can read: {path inside the sandbox: file on the host}."""
    masked = [b[1] for b in v.binds if b[0] == MASK]
    out: dict[str, str] = {}
    for source, target, is_dir in v.binds:
        if source == MASK:
            continue
        if not is_dir:
            out[target] = source
            continue
        hidden = tuple(m.rstrip("/") + "/" for m in masked if m.startswith(target.rstrip("/") + "/"))
        for f in _walk([source], []):
            inside = target + f[len(source):]
            if not inside.startswith(hidden) and os.path.isfile(f) and not os.path.islink(f):
                out[inside] = _real(f)
    return dict(sorted(out.items()))


# -- holding it in the page cache -------------------------------------------------------------------------
_MAP_POPULATE, _MAP_LOCKED = 0x8000, 0x2000
_pinned: dict[str, tuple[int, int, int]] = {}
"""path -> (device, inode, size) held: a file replaced under the same name (a rewritten .pyc) is held again."""
_pin_lock = threading.Lock()
_unlocked: list[str] = []
"""Files held without a lock (no right to lock them) or not held at all: the page cache gap stays open."""


@dataclass
class Pinned:
    files: int
    bytes: int
    locked: bool
    """True when every page is locked (root, or ``RLIMIT_MEMLOCK`` large enough): no reclaim can evict it."""
    failed: list[str]


def pin(paths: list[str]) -> Pinned:
    """Maps every page of ``paths`` into this process, read in and locked (``MAP_POPULATE | MAP_LOCKED``),
    and keeps the mappings for the process's life. Without the right to lock, the pages are read in only
    (resident now, reclaimable later: the documented gap). Idempotent: a file already held is skipped."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    failed: list[str] = []
    with _pin_lock:
        for path in paths:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
            except FileNotFoundError:  # gone since it was listed (a temporary file): nothing to read
                continue
            except OSError:
                failed.append(path)
                continue
            try:
                st = os.fstat(fd)
                if _pinned.get(path) == (st.st_dev, st.st_ino, st.st_size):
                    continue
                if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
                    continue
                flags = mmap.MAP_SHARED | _MAP_POPULATE
                addr = libc.mmap(None, st.st_size, mmap.PROT_READ, flags | _MAP_LOCKED, fd, 0)
                if addr in (None, ctypes.c_void_p(-1).value):  # no right to lock (EPERM/EAGAIN): read in only
                    _unlocked.append(path)
                    addr = libc.mmap(None, st.st_size, mmap.PROT_READ, flags, fd, 0)
                if addr in (None, ctypes.c_void_p(-1).value):
                    failed.append(path)
                    continue
                _pinned[path] = (st.st_dev, st.st_ino, st.st_size)
            finally:
                os.close(fd)
        _unlocked.extend(failed)
        return Pinned(len(_pinned), sum(v[2] for v in _pinned.values()), not _unlocked, failed)


_held: dict[View, Pinned] = {}
_watched: dict[View, dict[str, int]] = {}
"""Folders of arena's own packages (the only part of the runtime that changes while arena runs: .pyc files,
an editable checkout) and their modification times when last held."""


def hold(v: View, packages: tuple[str, ...] = ()) -> Pinned:
    """Pins every file of ``v`` once per process (the first bot's start pays ~0.3 s for ~200 MB), then, on
    each later call, only what changed in the folders of ``packages`` (a stat of each: ~0.1 ms). Called
    before every bot start, so every page a bot can reach is resident before any bot runs."""
    held = _held.get(v)
    if held is None:
        held = _held[v] = pin(sorted(set(files(v).values())))
        _watched[v] = {d: os.stat(d).st_mtime_ns for p in packages for d, _, _ in os.walk(_real(p))}
        return held
    watched = _watched[v]
    changed = []
    for d, mtime in list(watched.items()):
        try:
            now = os.stat(d).st_mtime_ns
        except OSError:
            del watched[d]
            continue
        if now != mtime:
            changed.append(d)
    for top in changed:
        fresh = []
        for d, _, names in os.walk(top):
            watched[d] = os.stat(d).st_mtime_ns
            fresh += [os.path.join(d, n) for n in names if os.path.isfile(os.path.join(d, n))
                      and not os.path.islink(os.path.join(d, n))]
        held = _held[v] = pin(fresh)
    return held
