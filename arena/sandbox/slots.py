"""Dedicated uids for running bots: slot ``s`` runs as uid/gid ``20000 + s``.

A slot is held by an exclusive ``flock`` on ``<lock dir>/slot-<s>.lock`` for the bot's whole life.
``flock`` locks belong to open file descriptions, so two games in one runner (threads) and two
runners (processes) never get the same slot, and a crashed runner's slots free themselves.
RLIMIT_NPROC counts per uid, so a unique uid per bot is what makes the process limit per bot.

A uid is handed out only while no process of it exists: the lock file says ``clean`` when the last holder
saw its bot's processes gone (``release(clean=True)``); any other content (a holder that died, a bot that
could not be confirmed dead) makes the next taker look through ``/proc`` first and skip the slot if a
process of that uid, even a zombie, is still there.
"""
from __future__ import annotations

import fcntl
import os
import tempfile

BASE_UID = 20000
MAX_SLOTS = 1024
CLEAN = b"clean"
IN_USE = b"inuse"


def lock_dir() -> str:
    """Where slot locks live (root: /run/arena-sandbox; otherwise a private temp directory)."""
    base = "/run/arena-sandbox" if os.geteuid() == 0 and os.path.isdir("/run") else \
        os.path.join(tempfile.gettempdir(), f"arena-sandbox-{os.geteuid()}")
    os.makedirs(base, mode=0o755, exist_ok=True)
    return base


class Slot:
    """One held slot; ``release()`` (or garbage collection of the process) frees it."""

    def __init__(self, index: int, fd: int) -> None:
        self.index = index
        self.uid = BASE_UID + index
        self._fd = fd

    def release(self, clean: bool = False) -> None:
        """Frees the slot; ``clean``: the holder saw every process of its bot gone (the next taker may skip
        the look through ``/proc``)."""
        if self._fd >= 0:
            if clean:
                try:
                    os.pwrite(self._fd, CLEAN, 0)
                except OSError:
                    pass
            os.close(self._fd)  # closing the description drops the flock
            self._fd = -1

    def __repr__(self) -> str:
        return f"Slot({self.index}, uid={self.uid})"


def uid_in_use(uid: int) -> bool:
    """True when any process (zombies included: they still count against the uid's process limit) has ``uid``."""
    prefix = b"Uid:"
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as f:
                for line in f:
                    if line.startswith(prefix):
                        if uid in {int(x) for x in line.split()[1:]}:
                            return True
                        break
        except (OSError, ValueError):
            continue
    return False


def acquire(start: int = 0) -> Slot:
    """Takes the first free slot at or after ``start`` (wrapping around).

    Raises:
        RuntimeError: all MAX_SLOTS slots are taken.
    """
    directory = os.path.join(lock_dir(), "slots")
    os.makedirs(directory, mode=0o700, exist_ok=True)
    for k in range(MAX_SLOTS):
        index = 1 + (start + k) % MAX_SLOTS
        fd = os.open(os.path.join(directory, f"slot-{index}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.pread(fd, len(CLEAN), 0) != CLEAN and uid_in_use(BASE_UID + index):
                raise BlockingIOError  # a process of this uid outlived its holder: never share its uid
            os.pwrite(fd, IN_USE, 0)  # until a clean release says otherwise
        except OSError:
            os.close(fd)
            continue
        return Slot(index, fd)
    raise RuntimeError(f"all {MAX_SLOTS} sandbox slots are in use")
