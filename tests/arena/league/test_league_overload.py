"""A game abandoned because the machine was overloaded is neither stored nor forfeited: the run says so and the
next run plays it."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from arena.errors import MachineOverloadedError
from arena.league import backends, runner
from arena.league import task as task_module
from arena.league.config import parse_config
from arena.limits import Limits
from leaderboards.store import Store

CONFIG = {"name": "busy", "games": ["nim"], "games_per_pairing": 2, "seed": 3, "bots": ["random", "greedy"]}


def test_play_task_reports_an_overload_distinctly(monkeypatch: pytest.MonkeyPatch) -> None:
    def starved(*args: Any, **kwargs: Any) -> Any:
        raise MachineOverloadedError("machine overloaded: bot waited 2.1 s for a CPU during a 1 s move")
    monkeypatch.setattr(task_module, "_referee", lambda: starved)
    task = task_module.Task("k", "nim", 0, (1, 2), ("random", "greedy"), ("a", "b"), 1, Limits(), "lose")
    result = task_module.play_task(task)
    assert isinstance(result, task_module.TaskFailure)
    assert result.overloaded is True and "machine overloaded" in result.error
    assert task_module.decode_result(task_module.encode_result(result)) == result  # the wire keeps it typed


class OneOverload:
    """Plays tasks in this process; the first one comes back overloaded."""

    def __init__(self) -> None:
        self.first = True
        self.ready, self.columns = 0, {}  # (arena.league.backends.Backend: one result at a time, records only)

    def execute(self, tasks: Iterator[task_module.Task], tick: float | None = None
                ) -> Iterator[tuple[task_module.Task, task_module.TaskResult]]:  # (never waits: no ticks)
        for task in tasks:
            if self.first:
                self.first = False
                yield task, task_module.TaskFailure("MachineOverloadedError: machine overloaded", overloaded=True)
            else:
                yield task, task_module.play_task(task)

    def close(self) -> None:
        pass


def test_an_overloaded_game_is_not_stored_and_the_next_run_plays_it(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = parse_config(dict(CONFIG))
    db = tmp_path / "busy.sqlite"
    backend = OneOverload()  # one backend for both runs: only the very first game is overloaded
    monkeypatch.setattr(backends, "make_backend", lambda *args: backend)
    first = runner.run_league(config, db=db)
    assert len(first.overloaded) == 1 and not first.errors
    assert first.played == first.scheduled - 1
    with Store.open(db) as store:
        league = store.find_league("busy")
        stored = store.schedule_keys(league.id)
        assert len(stored) == first.scheduled - 1
        assert first.overloaded[0].split(":")[0] not in stored  # abandoned, not recorded as anyone's loss
    second = runner.run_league(config, db=db)
    assert second.played == 1 and not second.overloaded and second.already == first.scheduled - 1
