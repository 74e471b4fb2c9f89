"""The bots' read-only runtime, mounted once per fork server and copied for each bot.

A bot's new root is ~100 read-only bind mounts (:func:`arena.sandbox.spawn.build_root`); made by every bot's
start it would be the largest part of the start (~100 ``mount``s and ~120 ``mkdir``s from Python, and the tmpfs
torn down at the bot's exit). Here the fork server (root only) mounts it once, in a mount namespace of its own
held by a descriptor (:class:`Template`): each bot's start enters that namespace and ``unshare``s a copy of it (one
system call that copies the mount tree in the kernel), then mounts only its own ``/bot`` before ``pivot_root``.

A bot sees the mounts a root of its own would have, made read-only in its own copy. The template's tmpfs is one
file system shared by the copies; nothing writes to it once it is built (each copy is read-only before any bot
code runs), so it carries nothing from one bot to the next. The namespace is a snapshot of the host's mounts
when it was built: the fork server watches the host's mount table (``/proc/self/mounts`` is readable with
``POLLPRI`` when it changes) and builds it again on any change, so a bot never misses a file system mounted since.
Without root (a user namespace per bot) every bot builds its root itself.
"""
from __future__ import annotations

import json
import os
import select
from typing import Any

from arena.sandbox import _sys, spawn


class Template:
    """The fork server's template namespace (built lazily, per runtime: a changed view builds a new one)."""

    def __init__(self) -> None:
        self.fd = -1
        self.key = ""
        self._mounts = -1
        self._poll: Any = None
        self.failed = False
        """Set when building failed once (no right to mount, an odd host): bots build their roots themselves."""
        self.generation = 0
        """How many times it was built: inits that copied an earlier build are not used (:mod:`arena.sandbox.stock`)."""

    def for_plan(self, plan: Any) -> int:
        """The namespace descriptor for ``plan`` (built or rebuilt as needed), or -1 when the bot must build its
        root itself (not root, building failed)."""
        if self.failed or plan.mode != "root" or not plan.mount_ns or not plan.new_root:
            return -1
        key = json.dumps([plan.new_root, [b for b in plan.binds if b[1] != spawn.BOT_INSIDE], plan.symlinks])
        if self.fd >= 0 and (key != self.key or self._host_mounts_changed()):
            self.close()
        if self.fd < 0:
            try:
                self._watch_host_mounts()
                self.fd = _build(plan.new_root, [b for b in plan.binds if b[1] != spawn.BOT_INSIDE], plan.symlinks)
                self.key = key
                self.generation += 1
            except OSError:
                self.failed = True
                return -1
        return self.fd

    def _watch_host_mounts(self) -> None:
        if self._mounts < 0:
            self._mounts = os.open("/proc/self/mounts", os.O_RDONLY | os.O_CLOEXEC)
            self._poll = select.poll()
            self._poll.register(self._mounts, select.POLLPRI)
        self._host_mounts_changed()  # (reading clears what happened before this build)

    def _host_mounts_changed(self) -> bool:
        if self._poll is None:
            return False
        changed = bool(self._poll.poll(0))
        if changed:  # the event stays until the file is read again
            os.lseek(self._mounts, 0, os.SEEK_SET)
            while os.read(self._mounts, 1 << 16):
                pass
        return changed

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.fd, self.key = -1, ""


def _build(root: str, binds: list[Any], symlinks: list[Any]) -> int:
    """Mounts the runtime at ``root`` in a new mount namespace (a short-lived child's) and returns a descriptor
    that keeps the namespace after the child exits."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # (the fork server's child: only system calls and the build, then exit)
        code = 1
        try:
            os.close(ready_r)
            _sys.unshare(_sys.CLONE_NEWNS)
            _sys.mount(None, "/", None, _sys.MS_REC | _sys.MS_PRIVATE)  # nothing mounted here reaches the host
            spawn.build_root(root, [tuple(b) for b in binds], [tuple(s) for s in symlinks])
            os.write(ready_w, b"1")
            select.select([], [], [], 5.0)  # the parent opens our namespace, then kills us
            code = 0
        finally:
            os._exit(code)
    os.close(ready_w)
    try:
        if os.read(ready_r, 1) != b"1":
            raise OSError("the runtime template could not be mounted")
        return os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(ready_r)
        try:
            os.kill(pid, 9)
        except OSError:
            pass
        os.waitpid(pid, 0)
