"""Where a league's games are played: the :class:`Backend` protocol the writer (:mod:`arena.league.writer`) reads
results through, and the backend of a name: ``local`` (worker processes, :mod:`arena.league.workers`) or ``ray``
(Ray tasks, :mod:`arena.league.ray_backend`).

Every attribute the writer reads from a backend is declared here: :func:`make_backend` returns both backends as a
:class:`Backend`, so mypy checks that each of them has all of it (tests/arena/league/test_backends.py checks that
the writer reads nothing else).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol, runtime_checkable

from arena.league import workers
from arena.league.task import Task, TaskResult

BACKENDS = ("local", "ray")


@runtime_checkable
class Backend(Protocol):
    ready: int
    """Results already known to be waiting after the one just yielded: the writer stores them in the same
    transaction (one commit for games that finished together); 0 when the backend cannot tell."""
    columns: dict[str, tuple[str, ...]]
    """Schedule key -> the store's JSON text of the record just yielded, as the process that played it encoded it
    (the writer pops it and inserts it as it is); empty when the backend sends records only."""

    def execute(self, tasks: Iterator[Task], tick: float | None = None) -> Iterator[tuple[Task, TaskResult] | None]:
        """Runs tasks (pulled lazily, as slots free up) and yields (task, result) as games finish; with ``tick``,
        also None after every ``tick`` seconds without a result (the writer's chance to make a fold it put off)."""
        ...

    def close(self) -> None:
        """Stops the backend; games still in flight are abandoned (their results are never yielded)."""
        ...


def make_backend(name: str, concurrency: int, address: str | None) -> Backend:
    """The backend called ``name`` (one of :data:`BACKENDS`), playing ``concurrency`` games at once (``ray``: 0 for
    the cluster's CPUs) on the Ray cluster at ``address`` (``ray``; None: the one already connected, else a local
    instance)."""
    if name == "ray":
        from arena.league.ray_backend import RayBackend  # optional: ray
        return RayBackend(concurrency=concurrency or None, address=address)
    return workers.LocalBackend(concurrency)


def run_tasks(tasks: Iterable[Task], backend: Backend) -> list[tuple[Task, TaskResult]]:
    """Plays tasks without a store (benchmarks, tests), then closes ``backend``."""
    try:
        return [item for item in backend.execute(iter(tasks)) if item is not None]  # (no tick: never None)
    finally:
        backend.close()
