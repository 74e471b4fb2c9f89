"""The referee's handle on a bot's process tree: its cgroup (freeze, kill, OOM), its uid slot, its exit.

It knows nothing of moves or frames: :class:`arena.sandbox.proxy.BotProcess` freezes and thaws it around each move,
and kills and closes it when the bot fails or the game ends.
"""
from __future__ import annotations

import subprocess
import time
from typing import Any

EXIT_WAIT = 0.05
"""Longest single wait for a killed bot's process to exit before the cgroups are looked at again."""


class ProcessHandle:
    """One bot's process (``proc``), its cgroup (``cg``, or None) and its uid slot (or None)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.cg: Any = None
        self.slot: Any = None
        self.alive = True
        self.frozen = False
        self._closed = False

    def freeze(self) -> bool:
        """Stops the bot (with a cgroup). False when it was frozen already (a move is charged once)."""
        if self.frozen:
            return False
        self.frozen = True
        if self.cg is not None:
            self.cg.freeze(True)
        return True

    def wait_frozen(self, cpu_allowance: float, timeout: float) -> str | None:
        """After ``freeze``: None once the kernel reports the bot frozen (or nothing can freeze it), else why not
        (:meth:`arena.sandbox.cgroups.BotCgroup.wait_frozen`)."""
        return self.cg.wait_frozen(cpu_allowance, timeout) if self.cg is not None else None

    def thaw(self) -> None:
        if self.cg is not None and self.frozen:
            self.cg.freeze(False)
        self.frozen = False

    def oom_killed(self) -> bool:
        return self.cg is not None and self.cg.oom_killed()

    def wait_exit(self, timeout: float) -> int | None:
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def begin_kill(self) -> None:
        """Sends the kill to the whole tree without waiting for it (``kill`` and ``close`` wait), so that the bots of
        a game die together; without a cgroup the process itself is killed."""
        if self._closed:
            return
        self.alive = False
        if self.cg is not None:
            self.cg.signal_kill()
        elif self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:
                pass

    def kill(self) -> None:
        """Kills the whole process tree (cgroup.kill where available) and waits for it."""
        self.alive = False
        if self.cg is not None:
            self.cg.kill(pause=self._pause)
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:
                pass
            self.wait_exit(2.0)

    def _pause(self, seconds: float) -> None:
        """The kill's wait between looks at the cgroups: on the process (the PID namespace's init, which exits once
        every process of the namespace is gone; or the bot itself), so it ends at the exit rather than at the next
        poll; a plain sleep once that process is reaped (a cgroup may still hold a straggler)."""
        if self.proc is not None and self.proc.returncode is None:
            self.wait_exit(EXIT_WAIT)
        else:
            time.sleep(seconds)

    def close(self) -> None:
        """Kills the tree, gives back the cgroups (emptied: pooled for the next bot or removed) and frees the uid
        slot (once)."""
        if self._closed:
            return
        self._closed = True
        self.kill()
        # Its uid may go to the next bot without a look through /proc only when its processes are known gone:
        # the process reaped (with a PID namespace, its init: the kernel ends the namespace with it) and the
        # cgroups emptied (and cleaned for the pool, or removed).
        gone = self.proc is None or self.proc.poll() is not None
        if self.cg is not None:
            gone = self.cg.release() and gone
        if self.slot is not None:
            self.slot.release(clean=gone)
