"""The Ray backend: each game is a Ray task; results stream back to the one writer (:mod:`arena.runner`).

A task carries everything its game needs (game spec, seed, limits, built-in specs and the *snapshot* of
any file bot: every file of a file or folder bot, with its digest), so it can run on any node of a cluster:
the worker checks each snapshot against its digest, writes it safely into a private directory of the task
(:mod:`arena.snapshot`) and plays the game through the same referee (and sandbox) as the local backend. The
same league file and seeds therefore give the same games on both backends.

``ray`` is an optional extra: ``pip install "arena[ray]"``. Every node needs arena installed.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from arena.errors import ConfigError
from arena.task import Task, TaskFailure, TaskResult, decode_result, encode_result, play_task


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError('the ray backend needs Ray: pip install "arena[ray]" (or "ray[default]")') from None
    return ray


class RayBackend:
    """Keeps ``concurrency`` games in flight as Ray tasks (one CPU each)."""

    def __init__(self, concurrency: int | None = None, address: str | None = None) -> None:
        ray = _ray()
        self.ray = ray
        self.started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "ignore_reinit_error": True}
            if address:
                kwargs["address"] = address
            elif concurrency:
                kwargs["num_cpus"] = concurrency
            ray.init(**kwargs)
            self.started = True
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.concurrency = concurrency or cpus
        self.remote = ray.remote(num_cpus=1, max_retries=0)(_play_remote)

    def execute(self, tasks: Iterator[Task]) -> Iterator[tuple[Task, TaskResult]]:
        running: dict[Any, Task] = {}
        exhausted = False
        while True:
            while not exhausted and len(running) < self.concurrency:
                task = next(tasks, None)
                if task is None:
                    exhausted = True
                    break
                running[self.remote.remote(task)] = task
            if not running:
                return
            ready, _ = self.ray.wait(list(running), num_returns=1)
            for ref in ready:
                task = running.pop(ref)
                try:
                    result: TaskResult = decode_result(self.ray.get(ref))
                except Exception as exc:  # noqa: BLE001 - a lost worker: the game is retried next run
                    result = TaskFailure(f"ray task failed: {type(exc).__name__}: {str(exc).splitlines()[0]}")
                yield task, result

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


def _play_remote(task: Task) -> dict[str, Any]:
    """One game on a Ray worker. Its bot snapshots are checked against their digests and written into a private
    directory of this task (never a path derived from the worker's or the driver's directory), removed when the
    game ends: a long-lived Ray worker keeps nothing."""
    from arena.snapshot import scoped_root
    with scoped_root():
        return encode_result(play_task(task))
