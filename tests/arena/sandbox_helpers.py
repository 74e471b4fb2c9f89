"""Shared helpers of the sandbox tests: place a hostile bot in its own directory, play it, look for leftovers."""
from __future__ import annotations

import os
import shutil
import time
from collections.abc import Collection, Iterator
from pathlib import Path

from arena.errors import MachineOverloadedError
from arena.limits import Limits
from arena.referee.sandboxed import play_game
from arena.results.records import GameRecord

HOSTILE = Path(__file__).parent / "hostile"
IS_ROOT = os.geteuid() == 0
# Short limits keep the suite fast; the first move is generous because process start is slow on a busy CI box.
FAST = Limits(move_time=0.5, first_move_time=0.5, memory_mb=200)


def place(name: str, tmp_path: Path, files: dict[str, str] | None = None) -> str:
    """Copies hostile/<name>.py into a fresh directory of its own; returns the file's path (a one-file bot).
    With extra ``files`` the bot is a folder bot (hostile/<name>.py as its ``bot.py``, the files beside it):
    returns the folder's path."""
    d = tmp_path / f"bot_{name}"
    d.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(d, 0o755)
    target = d / (f"{name}.py" if files is None else "bot.py")
    shutil.copy(HOSTILE / f"{name}.py", target)
    for fname, text in (files or {}).items():
        (d / fname).write_text(text)
    return str(target if files is None else d)


def processes_of(uids: set[int]) -> list[int]:
    """Pids of live processes owned by any of ``uids``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) in uids:
                            found.append(int(entry))
                        break
        except OSError:
            continue
    return found


def _live_parents() -> dict[int, int]:
    """pid -> parent pid of every live (not zombie) process."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if fields[0] != "Z":
                    parents[int(entry)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    return parents


def descendants_of(pid: int) -> list[int]:
    """Live processes below ``pid``, except this process's bot fork server (it outlives games by design;
    the bots it forked are still found below it)."""
    from arena.sandbox import zygote
    server = zygote._ZYGOTE.proc.pid if zygote._ZYGOTE is not None and zygote._ZYGOTE.proc is not None else None
    parents = _live_parents()
    out, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent:
                frontier.append(child)
                if child != server:
                    out.append(child)
    return out


def assert_nothing_left(record: GameRecord, before: Collection[int] = ()) -> None:
    """No process of the game's bots survives it (by uid when bots had their own uid, else by descent from this
    process, other than the ``before`` ones: without root, bots run under our uid)."""
    uids = {u for u in record.info.get("bot_uids", []) if u is not None and u != os.getuid()}
    deadline = time.monotonic() + 2.0
    while True:
        left = processes_of(uids) if uids else [p for p in descendants_of(os.getpid()) if p not in before]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not left, f"bot processes left after the game: {left}"
    from arena.sandbox import cgroups
    left = [g for g in cgroups.groups_of(os.getpid()) if g not in cgroups.pooled()]  # (pooled ones are empty)
    assert not left, f"cgroups left after the game: {left}"


# A hostile test is about the bot, not about a loaded machine: a game the referee abandoned because other work
# starved the bot (tests/arena/referee/test_time_fairness.py covers that rule) is played again, at most this many times.
OVERLOAD_ATTEMPTS = 3


def play(bot_path: str, limits: Limits = FAST, opponent: str = "random", game: str = "nim", seed: int = 1,
         **kw: object) -> GameRecord:
    """The hostile bot in seat 0 against a built-in opponent; checks that nothing is left afterwards."""
    before = set(descendants_of(os.getpid()))  # e.g. a test's own `sleep` child
    for attempt in range(OVERLOAD_ATTEMPTS):
        try:
            record = play_game(game, [bot_path, opponent], seed, limits, **kw)
            break
        except MachineOverloadedError as exc:  # the referee rightly judged no one: other work starved the bot
            if attempt == OVERLOAD_ATTEMPTS - 1:
                raise
            print(f"machine overloaded, the game is played again: {exc}")
    assert_nothing_left(record, before)
    if IS_ROOT:  # a green run must never come from root walking through a check
        assert all(u not in (0, None) for u in record.info["bot_uids"]), record.info["bot_uids"]
    return record


def alive(pid: int) -> bool:
    """Running: a zombie's /proc entry stays until its (new) parent reaps it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def proc_stats() -> Iterator[tuple[int, list[str]]]:
    """(pid, the fields of /proc/PID/stat after the command: state, ppid, pgrp, ...) of every process now."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            yield int(entry), fields


def child_states(pid: int) -> dict[int, str]:
    """The children of ``pid`` and their states (field 3 of /proc/PID/stat: "Z" for a zombie)."""
    return {child: fields[0] for child, fields in proc_stats() if int(fields[1]) == pid}
