"""The league writer's own work per game (issue 26): one commit per game or per group of games that finished together
(the game and the ratings it makes final in it), each bot snapshot sent to a worker once, and the same stored games
and ratings as before."""
from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterator
from typing import Any

import pytest

from arena.league import backends, runner, signals, workers, writer
from arena.league import task as task_module
from arena.league.config import parse_config
from arena.limits import Limits
from arena.results import records
from arena.submissions.snapshot import single
from leaderboards import ledger
from leaderboards.store import Store
from tests.leaderboards.support import RANDOM_BOT

CONFIG = {"name": "writer", "games": ["nim"], "games_per_pairing": 4, "seed": 3,
          "bots": [{"name": "random", "spec": "random"}, {"name": "greedy", "spec": "greedy"},
                   {"name": "random-b", "spec": "random"}]}
SCHEDULED = 3 * 4


class InProcess:
    """Plays tasks in this process and hands them back ``together`` at a time (``ready``: how many more of the
    group are waiting, as :class:`arena.league.workers.LocalBackend` says)."""

    def __init__(self, together: int = 1) -> None:
        self.together, self.ready = together, 0
        self.columns: dict[str, tuple[str, ...]] = {}  # (records only: the writer encodes them)

    def execute(self, tasks: Iterator[task_module.Task], tick: float | None = None
                ) -> Iterator[tuple[task_module.Task, task_module.TaskResult]]:  # (never waits: no ticks)
        group: list[tuple[task_module.Task, task_module.TaskResult]] = []
        for task in tasks:
            group.append((task, task_module.play_task(task)))
            if len(group) == self.together:
                yield from self._hand(group)
                group = []
        yield from self._hand(group)

    def _hand(self, group: list[tuple[task_module.Task, task_module.TaskResult]]) -> Iterator[Any]:
        for i, pair in enumerate(group):
            self.ready = len(group) - i - 1
            yield pair

    def close(self) -> None:
        pass


def _commits_between_progress(tmp_path, monkeypatch: pytest.MonkeyPatch, backend: InProcess
                              ) -> tuple[list[int], Any]:
    """Runs the league on ``backend``; the number of COMMITs the writer issued before each progress call."""
    commits = [0]
    opened = Store.open.__func__

    def traced(cls: type[Store], *args: Any, **kwargs: Any) -> Store:
        store = opened(cls, *args, **kwargs)
        store.conn.set_trace_callback(lambda sql: commits.__setitem__(0, commits[0] + (sql.strip() == "COMMIT")))
        return store

    monkeypatch.setattr(Store, "open", classmethod(traced))
    monkeypatch.setattr(backends, "make_backend", lambda *args: backend)
    seen: list[int] = []
    summary = runner.run_league(parse_config(dict(CONFIG)), db=tmp_path / "w.sqlite",
                                progress=lambda *args: seen.append(commits[0]))
    return [b - a for a, b in zip(seen, seen[1:])], summary


def test_a_game_read_alone_costs_one_commit_with_its_ratings(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    deltas, summary = _commits_between_progress(tmp_path, monkeypatch, InProcess(together=1))
    assert summary.played == SCHEDULED and not summary.errors
    assert deltas == [1] * (SCHEDULED - 1)  # the game, its failure counts and its ratings: one transaction


def test_games_that_finished_together_share_one_commit(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    deltas, summary = _commits_between_progress(tmp_path, monkeypatch, InProcess(together=3))
    assert summary.played == SCHEDULED
    assert deltas == [0, 0, 1] * (SCHEDULED // 3 - 1) + [0, 0]  # progress is told after the group's commit


@pytest.mark.parametrize("fold_every", [0.0, 3600.0])
def test_ratings_at_the_end_equal_a_recomputation(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                  fold_every: float) -> None:
    monkeypatch.setattr(writer, "FOLD_EVERY", fold_every)  # every game folded, or only the last one
    monkeypatch.setattr(backends, "make_backend", lambda *args: InProcess(together=2))
    summary = runner.run_league(parse_config(dict(CONFIG)), db=tmp_path / "r.sqlite")
    assert summary.played == SCHEDULED
    with Store.open(tmp_path / "r.sqlite") as store:
        league = store.find_league("writer")
        folded = store.ratings(league.id)
        unrated = store.conn.execute("SELECT count(*) FROM games WHERE rated=0").fetchone()[0]
        assert unrated == 0
        assert ledger.recompute_ratings(store, league.id) == folded
        assert sum(r.games for r in folded.values()) == 2 * SCHEDULED


LONG = 60.0


@pytest.mark.parametrize("gaps", [[LONG, 0.3], [LONG] + [0.1] * 7, [0.1] * 5 + [LONG], [0.5, 0.5, LONG]],
                         ids=["j2-pairs", "j8-bursts", "fast-then-long", "halves-then-long"])
def test_no_game_waits_unrated_through_a_long_game(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                   gaps: list[float]) -> None:
    """Results paced by ``gaps`` (seconds before each, cycled; a clock the writer reads, moved by the backend):
    a game stored within FOLD_EVERY of the last fold stayed unrated until the next result, a whole long game later
    (the leaderboard a game behind). The backend wakes the writer every FOLD_EVERY without a result, and a fold
    put off is made then: at the end of every long gap nothing stored is unrated."""
    now = [0.0]
    monkeypatch.setattr(writer, "_clock", lambda: now[0])
    db = tmp_path / "p.sqlite"
    behind: list[int] = []  # unrated games at the end of each long gap

    def unrated() -> int:
        with Store.open(db, readonly=True) as store:
            return int(store.conn.execute("SELECT count(*) FROM games WHERE rated=0").fetchone()[0])

    class Paced(InProcess):
        def execute(self, tasks: Iterator[task_module.Task], tick: float | None = None) -> Iterator[Any]:
            for i, pair in enumerate(super().execute(tasks)):
                gap = gaps[i % len(gaps)]
                while tick is not None and gap > tick:  # no result for ``tick`` seconds: the writer is woken
                    now[0] += tick
                    gap -= tick
                    yield None
                now[0] += gap
                if gaps[i % len(gaps)] == LONG and db.exists():
                    behind.append(unrated())
                yield pair

    monkeypatch.setattr(backends, "make_backend", lambda *args: Paced())
    summary = runner.run_league(parse_config(dict(CONFIG)), db=db)
    assert summary.played == SCHEDULED
    assert behind and behind == [0] * len(behind), behind


def test_results_that_come_often_are_folded_together(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten results a second: folded about once a second, not per game (the fold is the writer's biggest cost)."""
    now = [0.0]
    monkeypatch.setattr(writer, "_clock", lambda: now[0])
    db = tmp_path / "f.sqlite"

    class Fast(InProcess):
        def execute(self, tasks: Iterator[task_module.Task], tick: float | None = None) -> Iterator[Any]:
            for pair in super().execute(tasks):
                now[0] += 0.1
                yield pair

    seen: list[int] = []

    def progress(*args: Any) -> None:
        with Store.open(db, readonly=True) as store:
            seen.append(store.conn.execute("SELECT count(*) FROM games WHERE rated=0").fetchone()[0])
    monkeypatch.setattr(backends, "make_backend", lambda *args: Fast())
    summary = runner.run_league(parse_config(dict(CONFIG)), db=db, progress=progress)
    assert summary.played == SCHEDULED and seen[-1] == 0 and max(seen) >= 5, seen



def test_the_fold_policy_folds_a_moved_frontier_once_it_is_old_enough_and_the_last_game_at_once() -> None:
    now = [0.0]
    policy = writer.FoldPolicy(every=1.0, clock=lambda: now[0])
    assert policy.owed("k1") and policy.now("k1")  # the first fold: nothing folded yet
    assert not policy.owed("k1") and not policy.now("k1")  # the frontier did not move
    now[0] = 0.5
    assert policy.owed("k3") and not policy.now("k3")  # moved, but the last fold is 0.5 s old: put off
    assert policy.owed("k3")  # (still owed: the backend's tick makes it later)
    now[0] = 1.0
    assert policy.now("k3") and not policy.owed("k3")
    now[0] = 1.1
    assert policy.now(None)  # nothing outstanding: the run's last games are folded at once
    assert not policy.now(None)


SLOW_BOT = """import time


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        time.sleep(0.3)
        return state.legal_actions()[0]
"""


@pytest.mark.slow
def test_the_local_backend_wakes_the_writer_while_no_game_ends() -> None:
    """Real workers: with ``tick``, the backend yields None every ``tick`` seconds without a result (the writer
    then makes a fold it put off), and the game's result after them."""
    backend = workers.LocalBackend(1)
    try:
        items = list(backend.execute(iter([_file_task("slow", 1, single("bot.py", SLOW_BOT))]), tick=0.1))
    finally:
        backend.close()
    assert items[-1] is not None and items[-1][0].key == "slow" and not isinstance(items[-1][1],
                                                                                  task_module.TaskFailure), items
    assert items[:-1] and all(item is None for item in items[:-1]), items  # the game took >= 0.3 s per own move


def test_a_stop_between_games_that_finished_together_stores_none_of_them(tmp_path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    class StopMidGroup(InProcess):
        def _hand(self, group: list[Any]) -> Iterator[Any]:
            for i, pair in enumerate(group):
                if self.handed == 5:  # the second game of the third group: its first is in the open transaction
                    raise signals.Interrupted(2)
                self.handed += 1
                self.ready = len(group) - i - 1
                yield pair

    backend = StopMidGroup(together=2)
    backend.handed = 0
    monkeypatch.setattr(backends, "make_backend", lambda *args: backend)
    summary = runner.run_league(parse_config(dict(CONFIG)), db=tmp_path / "s.sqlite")
    assert summary.interrupted == "SIGINT" and summary.played == 4
    with Store.open(tmp_path / "s.sqlite") as store:
        assert store.count_games(store.find_league("writer").id) == 4


# -- snapshots travel to a worker once -----------------------------------------------------------------------------
BIG = 300_000


def _file_task(key: str, seed: int, snapshot: Any) -> task_module.Task:
    return task_module.Task(key, "nim", 0, (1, 2), (f"file:{snapshot.digest}", "random"), ("big", "random"), seed,
                       Limits(move_time=5.0, first_move_time=20.0), "lose", {snapshot.digest: snapshot})


def _big_bot(tag: str) -> Any:
    return single("bot.py", RANDOM_BOT + f"\n# {tag} " + "x" * BIG + "\n")


def _sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sizes: list[int] = []
    write = workers._write_frame

    def measured(fd: int, obj: Any) -> None:
        sizes.append(len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)))
        write(fd, obj)

    monkeypatch.setattr(workers, "_write_frame", measured)
    return sizes


def test_a_bot_snapshot_is_sent_to_a_worker_once(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = _sizes(monkeypatch)
    bot = _big_bot("a")
    results = backends.run_tasks([_file_task(f"k{i}", i, bot) for i in range(3)], workers.LocalBackend(1))
    assert [type(r).__name__ for _, r in results] == ["GameRecord"] * 3
    assert all(r.terminations == ["normal", "normal"] for _, r in results)  # played from the worker's copy
    assert sizes[0] > BIG and max(sizes[1:]) < 10_000, sizes


def test_a_worker_over_its_snapshot_budget_is_sent_them_again(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = _sizes(monkeypatch)
    monkeypatch.setattr(workers, "SNAPSHOT_CACHE_BYTES", BIG + BIG // 2)  # room for one of the two bots
    a, b = _big_bot("a"), _big_bot("b")
    tasks = [_file_task("k0", 0, a), _file_task("k1", 1, b), _file_task("k2", 2, a), _file_task("k3", 3, a)]
    results = backends.run_tasks(tasks, workers.LocalBackend(1))
    assert all(r.terminations == ["normal", "normal"] for _, r in results), results
    # a, then b (a dropped), then a again (b dropped), then a from the worker's copy
    assert [s > BIG for s in sizes] == [True, True, True, False], sizes


def test_the_snapshot_cache_drops_the_least_recently_used_but_never_the_task_s_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "SNAPSHOT_CACHE_BYTES", 2 * BIG + 1000)
    cache = workers._SnapshotCache()
    a, b, c = _big_bot("a"), _big_bot("b"), _big_bot("c")
    two = dataclasses.replace(_file_task("k", 0, a), files={a.digest: a, b.digest: b})
    stripped, new, drop = cache.frame(two)
    assert stripped.files == {} and set(new) == {a.digest, b.digest} and drop == []
    assert cache.frame(_file_task("k", 0, a))[1:] == ({}, [])  # a is now the most recently used
    _, new, drop = cache.frame(_file_task("k", 0, c))
    assert set(new) == {c.digest} and drop == [b.digest]
    monkeypatch.setattr(workers, "SNAPSHOT_CACHE_BYTES", 1)
    _, new, drop = cache.frame(_file_task("k", 0, c))
    assert new == {} and drop == [a.digest] and list(cache.held) == [c.digest]


# -- a record's plain data -------------------------------------------------------------------------------------------
def _asdict_reference(record: records.GameRecord) -> dict[str, Any]:
    """What to_dict returned when it was dataclasses.asdict (the shape every store and worker relies on)."""
    data = dataclasses.asdict(record)
    data["terminations"] = [str(t) for t in record.terminations]
    for failure in data["failures"]:
        failure["reason"] = str(failure["reason"])
    data["schema"] = records.RECORD_SCHEMA
    return data


def test_to_dict_is_asdict_s_plain_copy() -> None:
    record = records.GameRecord(
        "nim", 7, ["a", "b"], [1, 2, 3], [1.0, -1.0], [records.NORMAL, records.TIMEOUT], [0, 1, 0], [0.1, 0.2, 0.3],
        [0.01, 0.02, 0.03], [records.Failure(1, records.TIMEOUT, 2, "slow", None)], 1.5,
        {"limits": {"move_time": 2.0, "nested": [1, {"x": (1, 2)}]}, "sandbox": ["seccomp"], "n": None,
         "limits_obj": Limits(move_time=3.0)})
    data = record.to_dict()
    assert data == _asdict_reference(record)
    assert list(data) == list(_asdict_reference(record))  # the same key order: the same JSON text
    assert type(data["terminations"][1]) is str and type(data["failures"][0]["reason"]) is str
    data["info"]["limits"]["nested"][1]["x"] = None  # a copy: the record is not changed through it
    data["history"].append(9)
    data["failures"][0]["detail"] = "changed"
    assert record.info["limits"]["nested"][1]["x"] == (1, 2) and record.history == [1, 2, 3]
    assert record.failures[0].detail == "slow"
    plain = dataclasses.replace(record, info={"limits": {"move_time": 2.0}, "uids": [1, 2]})
    assert records.GameRecord.from_dict(plain.to_dict()) == plain


# -- the record's JSON columns, encoded by the worker that played it -------------------------------------------------
GAME_COLUMNS = ("game, seed, seats, players, history, returns, terminations, move_seats, wall_times, cpu_times, "
                "failures, duration, info")


def test_the_writer_inserts_the_columns_its_workers_encoded_and_encodes_no_record(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[str] = []
    to_dict = records.GameRecord.to_dict

    def counted(self: records.GameRecord) -> dict[str, Any]:
        encoded.append(self.game)
        return to_dict(self)

    monkeypatch.setattr(records.GameRecord, "to_dict", counted)  # this process only: the workers are others
    summary = runner.run_league(parse_config(dict(CONFIG)), db=tmp_path / "w.sqlite", concurrency=1)
    assert summary.played == SCHEDULED and not summary.errors
    assert encoded == []  # the writer turned none of the records into data again: the workers' text went in
    with Store.open(tmp_path / "w.sqlite") as store:
        for game in store.games(store.find_league("writer").id):
            assert game.returns in ([1.0, -1.0], [-1.0, 1.0]) and game.history


def test_a_game_stored_from_its_worker_s_columns_is_the_row_the_writer_would_have_made(tmp_path) -> None:
    record = records.GameRecord(
        "nim", 7, ["a", "</script>\u2028é"], [1, 2, 3], [1, -1], [records.NORMAL, records.TIMEOUT], [0, 1, 0],
        [0.1, 0.2, 0.3], [0.01, 0.02, 0.03], [records.Failure(1, records.TIMEOUT, 2, "slow\x00", None)], 1.5,
        {"limits": {"move_time": 2.0, "nested": [1, {"x": (1, 2)}]}, "n": None})
    sent = pickle.loads(pickle.dumps(task_module.encode_result(record, columns=True)))  # through a worker's pipe
    columns = task_module.stored_columns(sent)
    assert columns is not None and len(columns) == len(records.STORED_JSON)
    rows = []
    for name, given in (("writer", None), ("worker", columns)):
        with ledger.open_store(tmp_path / f"{name}.sqlite", create=True) as store:
            league = store.ensure_league("l", {})
            seats = [store.upsert_bot(league.id, bot, origin="config", spec="random")[0].id for bot in "ab"]
            ledger.record_game(store, league.id, "k", "nim", 0, seats, task_module.decode_result(sent),
                               columns=given)
            rows.append((store.conn.execute(f"SELECT {GAME_COLUMNS} FROM games").fetchall(),
                         store.conn.execute("SELECT * FROM game_seats ORDER BY seat").fetchall()))
            stored = store.games(league.id)[0]
    assert rows[0] == rows[1]
    assert rows[0][0][0][5] == "[1.0, -1.0]"  # returns stored as floats, as before
    assert stored.players == record.players and stored.failures[0].detail == "slow\x00"


@pytest.mark.parametrize("columns", [None, ["[]"] * len(records.STORED_JSON), ("[]",), ("[]",) * 8 + (1,)])
def test_columns_not_of_the_expected_shape_are_not_used(columns: Any) -> None:
    data = task_module.encode_result(records.GameRecord("nim", 1, ["a", "b"]))
    assert task_module.stored_columns({**data, "columns": columns}) is None  # the writer encodes the record itself
