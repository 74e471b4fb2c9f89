"""League workers are pinned to one CPU each only when there are at least as many workers as CPUs."""
from __future__ import annotations

import os

import pytest

from arena.league import workers

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity on this platform")


def test_pinning_policy(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.delenv("ARENA_PIN_WORKERS", raising=False)
    assert workers.worker_cpus(2) == [0, 1]
    assert workers.worker_cpus(3) == [0, 1]
    assert workers.worker_cpus(1) is None  # fewer workers than CPUs: a game may use them all
    monkeypatch.setenv("ARENA_PIN_WORKERS", "0")
    assert workers.worker_cpus(2) is None
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    monkeypatch.delenv("ARENA_PIN_WORKERS")
    assert workers.worker_cpus(4) is None  # one CPU: nothing to choose


def test_workers_take_cpus_in_turn(monkeypatch):
    pinned = []
    monkeypatch.setattr(os, "sched_setaffinity", lambda pid, cpus: pinned.append(cpus))
    monkeypatch.setattr("arena.sandbox.launcher.warm_up", lambda: None)
    monkeypatch.setattr(os, "getppid", lambda: 2)  # not orphaned
    import ctypes

    class NoPrctl:  # the test process keeps its own death signal
        def __init__(self, *a, **k):
            self.prctl = lambda *a: 0
    monkeypatch.setattr(ctypes, "CDLL", NoPrctl)
    import signal
    monkeypatch.setattr(signal, "signal", lambda *a: None)
    for index in range(3):  # the writer numbers its workers (no shared counter: nothing for a resource tracker)
        workers.worker_init([4, 7], index)
    assert pinned == [{4}, {7}, {4}]
