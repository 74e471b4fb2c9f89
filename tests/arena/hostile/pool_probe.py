"""Issue 33 attack round: a bot that looks for what the previous occupant of its pooled cgroup, or another bot
through the shared runtime template, left behind, and a bot that tries to leave something.

``role.txt`` beside it (a folder bot) holds one word:
  probe     at its first move, measures what it can see and ends the game with ``RuntimeError("FACTS <json>")``:
            mount ids (``statx`` ``STATX_MNT_ID`` and ``STATX_MNT_ID_UNIQUE``) of its root, ``/bot``, the standard
            library and ``/dev/null``; ``stat``/``statvfs`` of ``/`` (device, inode, times, links, free blocks and
            inodes); its open descriptors; its CPUs; how many threads it can start (the pids limit's headroom);
            how much memory it can charge before its group reclaims (``MADV_FREE`` pages that the kernel empties
            instead of killing the bot: their survivors measure the group's headroom without an OOM kill).
  threads   starts as many threads as it can at its first move (each parked in a sleep), then plays on.
  statter   150,000 ``stat``s of missing names at its first move (negative dentries charged to its group).
  hog       charges ~90% of its memory limit at its first move and keeps it, then plays on.
  madv      like hog, but half of it as ``MADV_FREE`` pages (lazy-free pages still charged when it dies).
  vmasN     maps N one-page regions that cannot merge (N VMAs, kernel memory charged to its group), then plays on.
  plain     plays on (the first legal action).
"""
import ctypes
import json
import mmap
import os
import threading
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROLE = open(os.path.join(HERE, "role.txt")).read().split()
LIBC = ctypes.CDLL(None, use_errno=True)
PAGE = 4096
STATX_MNT_ID, STATX_MNT_ID_UNIQUE = 0x1000, 0x4000
AT_FDCWD = -100


def statx_mnt(path: str) -> list:
    """(mask, mnt_id) for ``path``; the id is the unique 64-bit one when the mask has STATX_MNT_ID_UNIQUE."""
    buf = ctypes.create_string_buffer(256)
    rc = LIBC.statx(AT_FDCWD, path.encode(), 0, STATX_MNT_ID | STATX_MNT_ID_UNIQUE, buf)
    if rc != 0:
        return [None, ctypes.get_errno()]
    raw = buf.raw
    return [int.from_bytes(raw[0:4], "little"), int.from_bytes(raw[144:152], "little")]


def thread_headroom(cap: int = 600) -> tuple[int, str | None]:
    stop = threading.Event()
    started = []
    error = None
    for _ in range(cap):
        t = threading.Thread(target=stop.wait, daemon=True)
        try:
            t.start()
        except Exception as exc:  # noqa: BLE001
            error = type(exc).__name__
            break
        started.append(t)
    stop.set()
    for t in started:
        t.join()
    return len(started), error


def memory_headroom(limit_mb: int) -> int:
    """Bytes of MADV_FREE pages still holding their data after 2x the limit was written through them."""
    chunk = 4 << 20
    maps = []
    for _ in range((2 * limit_mb << 20) // chunk):
        m = mmap.mmap(-1, chunk, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        for off in range(0, chunk, PAGE):
            m[off] = 1
        m.madvise(mmap.MADV_FREE)
        maps.append(m)
    alive = 0
    for m in maps:
        for off in range(0, chunk, PAGE):
            if m[off]:
                alive += PAGE
    for m in maps:
        m.close()
    return alive


def facts(limit_mb: int) -> dict:
    out: dict[str, Any] = {}
    out["mnt"] = [statx_mnt(p)[1] for p in ("/", "/bot", os.path.dirname(os.__file__), "/dev/null")]
    st = os.stat("/")
    out["root"] = [st.st_dev, st.st_ino, st.st_mtime_ns // 10**9, st.st_nlink]
    vfs = os.statvfs("/")
    out["vfs"] = [vfs.f_bfree, vfs.f_ffree, vfs.f_fsid]
    fds = []
    for fd in range(0, 256):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            pass
    out["fds"] = fds
    out["cpus"] = sorted(os.sched_getaffinity(0))
    out["threads"] = thread_headroom()
    time.sleep(0.05)
    out["mem_alive"] = memory_headroom(limit_mb)
    return out


class Bot:
    def __init__(self, game: Any, seat: int, seed: int) -> None:
        self.game = game
        self.first = True
        self.keep: list[Any] = []

    def step(self, state: Any, limit: Any) -> int:
        if self.first:
            self.first = False
            role = ROLE[0]
            if role == "probe":
                raise RuntimeError("FACTS " + json.dumps(facts(limit.memory_mb), separators=(",", ":")))
            if role == "threads":
                stop = threading.Event()
                self.keep.append(stop)
                for _ in range(4096):
                    try:
                        threading.Thread(target=stop.wait, daemon=True).start()
                    except Exception:  # noqa: BLE001
                        break
            elif role.startswith("vmas"):  # vmasN: N one-page mappings that cannot merge
                n = int(role[4:] or 4000)
                for i in range(n):
                    m = mmap.mmap(-1, PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                                  prot=mmap.PROT_READ if i % 2 else mmap.PROT_READ | mmap.PROT_WRITE)
                    self.keep.append(m)
            elif role == "statter":
                for i in range(150_000):
                    try:
                        os.stat(f"/usr/no-such-{i}")
                    except OSError:
                        pass
            elif role in ("hog", "madv"):
                total = (limit.memory_mb << 20) * 9 // 10 - (40 << 20)
                m = mmap.mmap(-1, total, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
                for off in range(0, total, PAGE):
                    m[off] = 1
                if role == "madv":
                    m.madvise(mmap.MADV_FREE, 0, total // 2)
                self.keep.append(m)
        return state.legal_actions()[0]
