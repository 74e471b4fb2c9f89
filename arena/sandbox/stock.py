"""Bot inits forked ahead of their bots: the fork server's stock of half-started bot processes.

A bot's start splits in two. The first part does not depend on which bot will run: the fork from the fork server
(~3 ms on this project's 2-core machine: the page tables of a large interpreter are copied) and the new namespaces
(a copy of the runtime template, a network namespace: ~0.8 ms). The second part does: the bot's cgroups, its
``/bot``, the ``pivot_root``, the bot's own fork, the uid drop and the limits, then the host. The fork server
(:mod:`arena.sandbox.zygote`) keeps :data:`STOCK` processes that did the first part, each waiting on a socket for
its plan and pipes (sent by the referee, never seen by the fork server), so a start pays only the second part, and
the first is done while the game before is played.

Fair to the game being played: a waiting init is forked only once the referee has been quiet for :data:`QUIET`, and
does its first part at nice :data:`BACKGROUND_NICE` (a small share of a busy CPU; the game's bots and referee come
first); it and its bot turn back to nice 0 when a spawn request comes (every waiting init then, not only the one
handed out: see :func:`background`). Never ``SCHED_IDLE``: an idle-class task starved inside ``fork`` holds the
kernel's cgroup fork lock, and every bot's join of its cgroups waits for it (an attack round measured spawns of up
to 3.9 s next to busy loops). Safe: it is the fork server's own code in a fresh
fork, holding nothing of an earlier bot; it is used only when its namespaces were made for the same shape of plan
(mode, root, runtime template) as the bot it gets, else it is killed and the bot is forked as before. Only the
root path with a runtime template has a stock (docs/sandbox.md, "How a bot starts").
"""
from __future__ import annotations

import os
import select
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.sandbox import _sys

STOCK = 2
"""Waiting inits the fork server keeps by default: one per seat of a two-player game, so both bots of the next game
start without a fork from the server. ``ARENA_SANDBOX_STOCK=N`` in the referee's environment keeps N (0: none, every
init is forked when its bot is asked for, as before issue 33: :func:`size`)."""


def size() -> int:
    """The stock the referee asks its fork server for (``ARENA_SANDBOX_STOCK``, else :data:`STOCK`; at most 8)."""
    text = os.environ.get("ARENA_SANDBOX_STOCK", "")
    return min(int(text), 8) if text.isdigit() else STOCK


QUIET = 0.0015
"""Seconds without a request from the referee before an init is forked ahead: the bots of one game are asked for
within a fraction of a millisecond of each other, and the second must not wait for a fork."""


BACKGROUND_NICE = 10
"""The nice value of a waiting init's first part: ~10% of a CPU's time against one task at nice 0, so it finishes
within tens of milliseconds on a busy CPU (never starved: a fork holds a lock every cgroup join waits for)."""


def background() -> None:
    """This process (and what it forks) runs at nice :data:`BACKGROUND_NICE` from now on."""
    os.setpriority(os.PRIO_PROCESS, 0, BACKGROUND_NICE)


def normal(pid: int = 0) -> None:
    """Back to the normal policy and nice 0, for process ``pid`` (0: this one; root may lower a nice value)."""
    try:
        os.sched_setscheduler(pid, os.SCHED_OTHER, os.sched_param(0))
        os.setpriority(os.PRIO_PROCESS, pid, 0)
    except OSError:  # (an init that died: its bot start fails on its own)
        pass


@dataclass(frozen=True)
class Shape:
    """What a waiting init's first part depends on: the plan's mode, namespaces and root (never anything of a
    bot's own: its uid, cgroups, ``/bot``, limits) and the runtime template it copied."""

    plan: Any
    """A :class:`arena.sandbox.spawn.Plan` with only those fields set."""
    template_fd: int
    """The template namespace it enters (-1: none, the bot's init builds its root itself)."""
    generation: int
    """The template's build (a rebuilt template makes the inits of the old one useless)."""

    FIELDS = ("mode", "mount_ns", "net_ns", "pid_ns", "new_root")

    @classmethod
    def of(cls, plan: Any, template_fd: int, generation: int) -> Shape:
        # start-up: loaded by the fork server already
        from arena.sandbox import spawn
        return cls(spawn.Plan(**{name: getattr(plan, name) for name in cls.FIELDS}), template_fd, generation)

    @property
    def key(self) -> tuple[Any, ...]:
        return tuple(getattr(self.plan, name) for name in self.FIELDS) + (self.template_fd >= 0, self.generation)

    def fits(self, plan: Any) -> bool:
        """Whether ``plan`` is of this shape."""
        return all(getattr(plan, name) == getattr(self.plan, name) for name in self.FIELDS)

    @property
    def stocked(self) -> bool:
        """Whether inits of this shape are forked ahead: only on the root path with a template (where the first part
        is most of a start); any other bot's init is forked when it is asked for."""
        return self.template_fd >= 0 and self.plan.pid_ns


@dataclass
class Waiting:
    """One waiting init, on the fork server's side."""

    pid: int
    sock: socket.socket
    """The fork server's end of the socket the init waits on for its plan and pipes (handed to the referee, which
    sends them)."""
    key: tuple[Any, ...]


class Stock:
    """The fork server's waiting inits, all of one shape (a plan of another shape drops them)."""

    def __init__(self) -> None:
        self.waiting: list[Waiting] = []
        self.dropped: set[int] = set()
        """Pids of inits killed unused: the fork server reaps them without keeping a status."""
        self.wanted: Shape | None = None
        """The shape to fork inits of, and how many: :data:`STOCK` ahead, or one a spawn request waits for."""
        self.count = 0
        self.ahead = False
        self.paused = False
        """A game's bots are starting (a spawn request said hold): nothing is forked ahead till the referee says fill
        (``zygote.serve``)."""
        self.held: dict[str, Any] | None = None
        """A spawn request waiting for the init forked for it (``zygote.serve``)."""

    def want_now(self, shape: Shape) -> None:
        """Fork one init of ``shape`` now, at the normal policy: a request waits for it."""
        self.wanted, self.ahead, self.count, self.paused = shape, False, 1, False

    def want_ahead(self, shape: Shape, count: int) -> None:
        """Keep ``count`` inits of ``shape`` ahead of need, in the background, where the shape is stocked (none
        where it is not)."""
        self.wanted, self.ahead, self.count = shape, True, count if shape.stocked else 0

    def take(self, shape: Shape) -> Waiting | None:
        """The oldest live waiting init of ``shape``, or None (those of another shape are killed)."""
        while self.waiting:
            init = self.waiting.pop(0)
            # (an init never writes to its socket: readable is its end of file, it died waiting)
            if init.key == shape.key and not select.select([init.sock], [], [], 0)[0]:
                return init
            self.drop(init)
        return None

    def drop(self, init: Waiting) -> None:
        init.sock.close()  # (its end of file ends the init should the kill miss it)
        try:
            os.kill(init.pid, signal.SIGKILL)
        except OSError:
            pass
        self.dropped.add(init.pid)

    def short(self) -> bool:
        """Whether fewer inits of the wanted shape wait than are wanted."""
        return self.wanted is not None and len(self.waiting) < self.count

    def fill(self, fork: Callable[[int], int], most: int = STOCK) -> None:
        """Forks up to ``most`` inits of the wanted shape, not more than are wanted: ``fork(fd)`` forks one whose end of
        its socket is ``fd`` and returns its pid (``zygote.serve``). The fork server forks at its own (normal) policy:
        a fork is ~3 ms, and a starved one would hold up every bot's cgroup join."""
        shape = self.wanted
        if shape is None or not self.short():
            return
        for _ in range(min(most, self.count - len(self.waiting))):
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                self.waiting.append(Waiting(fork(theirs.fileno()), ours, shape.key))
            except BaseException:
                ours.close()
                raise
            finally:
                theirs.close()

    def hurry(self) -> None:
        """Every waiting init (and the bot it forks) back to nice 0: a spawn request came, and one still doing its
        first part must not hold up the started bot's cgroup join for long."""
        for init in self.waiting:
            normal(init.pid)

    def forget(self) -> None:
        """In a forked child: nothing of the server's inits or requests (their descriptors are closed apart)."""
        self.waiting = []
        self.held = None
        self.dropped = set()


def wait_parent(parent_fd: int) -> None:
    """Dies with the fork server (``PR_SET_PDEATHSIG``), and exits now when it is gone already (``parent_fd``, its
    pidfd, is readable: it died before the death signal was set)."""
    _sys.prctl(_sys.PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent_fd >= 0 and select.select([parent_fd], [], [], 0)[0]:
        os._exit(1)
