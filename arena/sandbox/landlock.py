"""Landlock: a read-only filesystem allow-list, no TCP, and scoped signals/abstract sockets.

Applied by the bot host to itself (after start-up imports, before bot code), on top of the mount
namespace: even a bot that found a way around the mounts reads only the listed trees, writes nowhere
(except ``/dev/null``), cannot bind or connect TCP (ABI >= 4), and cannot signal or reach abstract
unix sockets outside its own domain (ABI >= 6).
"""
from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable

from arena.sandbox import _sys

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ABI1_ALL = (1 << 13) - 1
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | _TRUNCATE | _IOCTL_DEV
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1, 2
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    try:
        return _sys.syscall("landlock_create_ruleset", None, ctypes.c_size_t(0),
                            ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, KeyError):
        return 0


def _handled_fs(abi: int) -> int:
    mask = _ABI1_ALL
    if abi >= 2:
        mask |= _REFER
    if abi >= 3:
        mask |= _TRUNCATE
    if abi >= 5:
        mask |= _IOCTL_DEV
    return mask


def restrict(read_paths: Iterable[str], write_files: Iterable[str] = ("/dev/null",)) -> int:
    """Restricts the calling process (and its future threads) to reading ``read_paths``.

    Returns the ABI version used. Paths that do not exist are skipped.

    Raises:
        OSError: Landlock is unavailable or refused the ruleset.
    """
    abi = abi_version()
    if abi < 1:
        raise OSError("Landlock is not available in this kernel")
    handled = _handled_fs(abi)
    attr = _RulesetAttr(handled, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = _sys.syscall("landlock_create_ruleset", ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        rules: dict[str, int] = {p: EXECUTE | READ_FILE | READ_DIR for p in read_paths}
        for p in write_files:
            rules[p] = rules.get(p, 0) | READ_FILE | WRITE_FILE
        for path, access in rules.items():
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    access &= _FILE_ONLY
                rule = _PathBeneath(access & handled, fd)
                _sys.syscall("landlock_add_rule", ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                             ctypes.byref(rule), ctypes.c_uint32(0))
            finally:
                os.close(fd)
        _sys.prctl(_sys.PR_SET_NO_NEW_PRIVS, 1)
        _sys.syscall("landlock_restrict_self", ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return abi
