"""No channel between bots through shared kernel state (issue 22 §2): a sender bot encodes a 64-bit secret in
kernel state both bots can reach (locks, directory notifications, futex keys, machine-wide counters, access
times) and a receiver bot, in the same game or in a later one, reports what it decoded. Each game is played
twice, with a secret and with its complement: a bit the receiver decodes differently, and right both times, is
a bit that crossed. docs/sandbox.md states the bound per piece of state; here every bound is 0 bits."""
from __future__ import annotations

import ctypes
import mmap
import os
import random
import re
import stat

import pytest

from arena.referee import play_game
from arena.sandbox import check
from tests.arena.sandbox_helpers import FAST, assert_nothing_left, place

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(bool(check.missing_mandatory()),
                                 reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}")]
GAME = "nim(n=200,k=1)"  # long enough for every chunk of the secret; the first legal action is always legal
MASK = (1 << 64) - 1
LIMITS = FAST.with_(move_time=2.0, first_move_time=5.0)


def covert(tmp_path, name: str, role: str) -> str:
    (tmp_path / name).mkdir()
    return place("covert", tmp_path / name, files={"role.txt": role})


def decoded(record, seat: int) -> tuple[str, str]:
    """The receiver's decoded bits and its notes (the errors its calls met)."""
    failure = next((f for f in record.failures if f.seat == seat), None)
    assert failure is not None, f"the receiver never reported: {record.terminations} {record.failures}"
    match = re.search(r"DECODED ([01?]{64}) NOTES (.*)", failure.detail)
    assert match, failure.detail
    return match[1], match[2]


def crossed(secret: int, runs: list[str]) -> int:
    """Bits decoded right in both runs (secret, then its complement) and so told apart by the receiver."""
    first, second = runs
    return sum(1 for i in range(64) if first[i] != "?" and second[i] != "?" and first[i] != second[i]
               and int(first[i]) == secret >> i & 1)


def large_files(count: int = 16) -> list[str]:
    """The largest files of the runtime every bot sees (/usr/lib): many of their pages are never read."""
    sizes = []
    for root, _, files in os.walk("/usr/lib"):
        for name in files:
            path = os.path.join(root, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_mode & 0o004:
                sizes.append((st.st_size, path))
    return [path for _, path in sorted(sizes, reverse=True)[:count]]


def cold_pages(path: str, apart: int = 1 << 18) -> list[int]:
    """Offsets of pages of ``path`` that are not in the page cache, at least ``apart`` bytes from each other
    (read-ahead around one never reaches the next): the pages two colluding bots would agree on. Found with
    mincore here, in the test; a bot cannot call it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        vec = ctypes.create_string_buffer((size + mmap.PAGESIZE - 1) // mmap.PAGESIZE)
        assert libc.mincore(addr, size, vec) == 0, os.strerror(ctypes.get_errno())
        libc.munmap(addr, size)
    finally:
        os.close(fd)
    step = apart // mmap.PAGESIZE
    return [page * mmap.PAGESIZE for page in range(0, len(vec.raw), step) if not vec.raw[page] & 1]


def transfer(tmp_path, method: str, later_game: bool = False) -> tuple[int, list[str]]:
    secret = random.getrandbits(64) | 1
    runs, notes = [], []
    for n, value in enumerate((secret, ~secret & MASK)):
        where = ""
        if method == "pagecache":  # pages no earlier run has read
            pages = [f"{path}@{offset}" for path in large_files() for offset in cold_pages(path)]
            if len(pages) < 64:  # the channel is open all the same: only this run cannot measure it
                pytest.xfail("open, not measured here: fewer than 64 uncached pages in /usr/lib's largest files")
            where = " " + " ".join(random.sample(pages, 64))
        d = tmp_path / f"run{n}"
        d.mkdir()
        d.chmod(0o755)
        sender = covert(d, "s", f"sender {method} {value:016x}{where}")
        receiver = covert(d, "r", f"{'later' if later_game else 'receiver'} {method} -{where}")
        if later_game:  # the sender's game ends before the receiver's starts
            first = play_game(GAME, [sender, "random"], 7, LIMITS)
            assert_nothing_left(first)
            assert not first.failures, first.failures
            record = play_game(GAME, ["random", receiver], 7, LIMITS)
        else:
            record = play_game(GAME, [sender, receiver], 7, LIMITS)
        assert_nothing_left(record)
        assert not [f for f in record.failures if f.seat == 0], record.failures  # the sender ran to the end
        bits, note = decoded(record, 1)
        runs.append(bits)
        notes.append(note)
    return crossed(secret, runs), notes


# Page cache residency is still open (docs/sandbox.md, "Shared kernel state"): a page the sender read is cached
# for the receiver, in the same game or a later one. Strict: the day it is closed, this says so.
OPEN = pytest.mark.xfail(strict=True, reason="open: page cache residency of runtime files (docs/sandbox.md)")
SAME_GAME = ["posix", "ofd", "flock", "notify", "futex", "sysinfo", pytest.param("pagecache", marks=OPEN)]
LATER_GAME = ["atime", "posix", pytest.param("pagecache", marks=OPEN)]


@pytest.mark.parametrize("method", SAME_GAME)
def test_two_bots_of_one_game_share_no_kernel_state(tmp_path, method):
    bits, notes = transfer(tmp_path, method)
    print(f"{method}: {bits} bits crossed; the receiver's notes: {notes}")
    assert bits == 0, f"{method}: the receiver decoded {bits} bits of the sender's secret ({notes})"


@pytest.mark.parametrize("method", LATER_GAME)
def test_a_bot_leaves_nothing_for_a_later_games_bot(tmp_path, method):
    bits, notes = transfer(tmp_path, method, later_game=True)
    print(f"{method} (a later game): {bits} bits crossed; the receiver's notes: {notes}")
    assert bits == 0, f"{method}: a later game's bot decoded {bits} bits of the secret ({notes})"
