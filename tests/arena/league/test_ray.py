"""The Ray backend on a real two-node cluster (a head and a worker node started with ``ray start`` on this host,
each in its own temp dir, token authentication on, torn down by pid: :mod:`arena.league.ray_cluster`).

The league there equals the local run bit for bit (records, sandbox layers, ratings; the chance key is the
store's, shared), from a league directory holding a ``bots/`` folder; lost workers, a lost node and a killed
driver still give every game exactly once; a worker node with another arena build is refused; connection
failures are one line and write nothing; a league's bot snapshots leave every node's object store when it ends
(seen by a driver that stays connected)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.league.config import load_config
from arena.league.runner import run_league
from leaderboards.store import Store
from tests.leaderboards.support import RANDOM_BOT, write

ray = pytest.importorskip("ray", reason="ray is not installed: pip install 'arena[ray]' to run the Ray backend tests")

from arena.league.ray_cluster import LocalCluster  # noqa: E402 - needs ray

pytestmark = [pytest.mark.ray, pytest.mark.xdist_group("ray")]

ARENA = str(Path(sys.executable).parent / "arena")  # the console script: the cwd is not on the driver's sys.path
HOSTILE = Path(__file__).parents[1] / "hostile"

FILE_BOTS = """
[[bots]]
name = "file-bot"
file = "file_bot.py"
[[bots]]
name = "folder-bot"
file = "folder_bot"
entry = "main.py"
"""
"""A one-file bot and a folder bot (tests write file_bot.py and folder_bot/main.py)."""

LEAGUE = f"""
name = "ray"
games = ["nim", "doublestep(length=6)"]
games_per_pairing = 2
seed = 3
probation_after = 0  # snoop fails every game: it plays them all (probation would depend on finishing order)
probation_failures = 0
[[bots]]
spec = "random"
[[bots]]
spec = "mc(n=5)"
{FILE_BOTS}[[bots]]
name = "snoop"
file = "snoop.py"
[limits]
move_time = 2.0
first_move_time = 20.0
"""

BIG = """
name = "big"
games = ["nim"]
games_per_pairing = 6
seed = 5
bots = ["random", "greedy", "mc(n=5)", "mc(n=3)"]
[limits]
move_time = 2.0
first_move_time = 20.0
"""


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(nodes=2, cpus=1) as c:
        yield c


def driver(cwd: Path, cluster: LocalCluster, *args: str, env: dict[str, str] | None = None,
           **kw: object) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    """``arena ARGS`` in ``cwd`` with the cluster's token in the environment (not RAY_AUTH_MODE: arena turns
    token mode on by itself when it has a token)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    full.update(RAY_AUTH_TOKEN=cluster.token, **(env or {}))
    if kw.pop("background", False):
        return subprocess.Popen([ARENA, *args], cwd=cwd, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    return subprocess.run([ARENA, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=600)


def stored(path: Path, name: str) -> tuple[dict, dict]:
    with Store.open(path, readonly=True) as store:
        lg = store.find_league(name)
        games = {g.schedule_key: (g.game, g.seats, g.players, g.history, g.returns, g.terminations, g.failures,
                                  g.info["sandbox"], g.info["missing_layers"])
                 for g in store.games(lg.id)}
        uids = [u for g in store.games(lg.id) for u in g.info["bot_uids"]]
        ratings = {store.bot(b).name: (r.mu, r.sigma) for b, r in store.ratings(lg.id).items()}
    assert uids and 0 not in uids
    return games, ratings


def league_dir(tmp_path: Path, secret: str) -> Path:
    """A league directory as an organiser keeps it: the league file, its bots, and a ``bots/`` folder of
    submissions (one a package whose import would fail the run, one named like a module arena imports)."""
    here = tmp_path / "league"
    (here / "bots" / "victim").mkdir(parents=True)
    write(here / "bots" / "__init__.py", "raise ImportError('the league directory was imported by a worker')\n")
    write(here / "bots" / "victim" / "bot.py", f"class Bot:\n    pass\n# {secret}\n")
    write(here / "games.py", "raise ImportError('the league directory was imported by a worker')\n")
    write(here / "league.toml", LEAGUE)
    write(here / "file_bot.py", RANDOM_BOT)
    (here / "folder_bot").mkdir()
    write(here / "folder_bot" / "main.py", "from helper import Bot\n")
    write(here / "folder_bot" / "helper.py", RANDOM_BOT)
    targets = [str(here), str(here / "bots"), str(here / "bots" / "victim" / "bot.py"), "."]
    (here / "snoop.py").write_text((HOSTILE / "read_targets.py").read_text().replace("__TARGETS__", "|".join(targets)))
    for d in (tmp_path, *(p for p in here.rglob("*") if p.is_dir()), here):
        os.chmod(d, 0o755)
    for f in (p for p in here.rglob("*") if p.is_file()):
        os.chmod(f, 0o644)
    return here


@pytest.mark.slow
def test_a_league_on_a_two_node_cluster_equals_the_local_run(cluster, tmp_path):
    """Started from a league directory holding ``bots/`` (the driver's cwd goes on Ray workers' sys.path):
    same records, same sandbox layers (uid not 0), same ratings as locally; no bot sees that directory."""
    secret = f"CANARY-{uuid.uuid4()}"
    here = league_dir(tmp_path, secret)
    out = driver(here, cluster, "league", "run", "league.toml", "--backend", "ray", "--address", cluster.address,
                 "--db", "ray.sqlite", "-q")
    assert out.returncode == 0, out.stderr
    assert "40 games played" in out.stdout, out.stdout  # 5 bots: 10 pairings x 2 games x 2 game kinds
    with Store.open(here / "ray.sqlite") as store:  # the same league: the same secret chance key
        key = store.chance_key(store.find_league("ray").id)
    config = load_config(here / "league.toml")
    with Store.open(tmp_path / "local.sqlite", create=True) as store:
        league = store.ensure_league(config.name, config.to_dict())
        store.conn.execute("UPDATE leagues SET chance_key=? WHERE id=?", (key, league.id))
    local = run_league(config, db=tmp_path / "local.sqlite", backend="local", concurrency=2)
    assert local.errors == [] and local.played == 40
    games_ray, ratings_ray = stored(here / "ray.sqlite", "ray")
    games_local, ratings_local = stored(tmp_path / "local.sqlite", "ray")
    assert games_ray == games_local
    assert ratings_ray == ratings_local
    snooped = [f.detail for g in games_ray.values() for f in g[6]]
    assert snooped and all(secret not in d and "listed" not in d and "read b" not in d for d in snooped), snooped[:1]
    assert all(g[8] == [] and "uid" in g[7] for g in games_ray.values())


@pytest.mark.slow
def test_rayaddress_and_auto_connect_and_reuse_the_running_cluster(cluster, tmp_path):
    """RAY_ADDRESS alone (no num_cpus is passed to an existing cluster) and ``--address auto``."""
    write(tmp_path / "league.toml", BIG.replace("games_per_pairing = 6", "games_per_pairing = 2"))
    by_env = driver(tmp_path, cluster, "league", "run", "league.toml", "--backend", "ray", "--db", "env.sqlite", "-q",
                    env={"RAY_ADDRESS": cluster.address})
    assert by_env.returncode == 0 and "12 games played" in by_env.stdout, by_env.stderr
    auto = driver(tmp_path, cluster, "league", "run", "league.toml", "--backend", "ray", "--address", "auto",
                  "--db", "auto.sqlite", "-q")
    assert auto.returncode == 0 and "12 games played" in auto.stdout, auto.stderr


SNAPSHOTS = f"""
name = "snapshots"
games = ["nim"]
games_per_pairing = 2
seed = 7
[[bots]]
spec = "random"
{FILE_BOTS}[limits]
move_time = 2.0
first_move_time = 20.0
"""


def _object_stores() -> tuple[list[int], list[int], set[str]]:
    """Per alive node: the objects in its object store and how many are primary copies (the owner's); and the ids
    of the objects any driver or worker holds a reference to.

    Ray's public view of objects, ``ray.util.state.list_objects`` (a DeveloperAPI), needs the dashboard, which
    this cluster does not start (with it, Ray 2.60's two nodes here run 22 processes instead of 11, about 1.8 GB
    instead of 0.85), and it lists references only, not the copies a node's store keeps (a worker node's copy of
    a snapshot outlives the task that fetched it). So this asks each raylet itself, through Ray's PRIVATE
    ``ray._private.internal_api.node_stats`` (the raylet's GetNodeStats, the data of ``ray memory``)."""
    from ray._private.internal_api import node_stats  # private: no public API sees the stores without a dashboard
    objects, primary, held = [], [], set()
    for node in ray.nodes():
        if node["Alive"]:
            stats = node_stats(node["NodeManagerAddress"], node["NodeManagerPort"], include_memory_info=True)
            objects.append(stats.store_stats.num_local_objects)
            primary.append(stats.store_stats.num_object_store_primary_copies)
            held |= {ref.object_id.hex() for worker in stats.core_workers_stats for ref in worker.object_refs}
    return objects, primary, held


def _none_of(ids: set[str], objects: list[int], primary: list[int], held: set[str]) -> bool:
    """No object in any store, and none of ``ids`` referenced anywhere."""
    return not any(objects) and not ids & held


def _until(done: Callable[[], bool], seconds: float) -> float | None:
    """Seconds until ``done()`` held (polled every 0.1 s), or None after ``seconds``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if done():
            return time.monotonic() - t0
        time.sleep(0.1)
    return None


@pytest.fixture
def snapshot_spy(cluster, monkeypatch):
    """This test process as a long-lived driver of the cluster (connected once, like a Python user calling
    run_league again and again); every ray.put counted and, when a RayBackend closes, the ids of its snapshots
    and the object stores just before it drops them (the ids only: holding a ref would keep the object)."""
    from arena.league import ray_backend
    for name in ("RAY_ADDRESS", "RAY_AUTH_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN", cluster.token)
    assert ray_backend.connect(cluster.address)
    spy = {"puts": 0, "closed": []}
    put, close = ray.put, ray_backend.RayBackend.close

    def counted_put(value, **kw):
        spy["puts"] += 1
        return put(value, **kw)

    def spied_close(self):
        spy["closed"].append(({ref.hex() for ref in self.refs.values()}, _object_stores()))
        close(self)

    monkeypatch.setattr(ray, "put", counted_put)
    monkeypatch.setattr(ray_backend.RayBackend, "close", spied_close)
    try:
        empty = _until(lambda: not any(_object_stores()[0]), 30)  # a previous driver's objects may be on the way out
        assert empty is not None, f"the object stores hold {_object_stores()[0]} objects before the test"
        yield spy
    finally:
        ray.shutdown()
        # identity() is cached per process: the skew test below compares this process's with a driver it starts
        # later, so it must hash the tree as it is then (a shared working tree can change while tests run)
        ray_backend.identity.cache_clear()


def _released(spy: dict, snapshots: int) -> float:
    """Checks the one backend that closed: it put each of ``snapshots`` snapshots once, they were in the object
    store until it closed (positive evidence: the check below is not vacuous), and are gone from every node's
    store (and from every reference table) within a bounded wait while the driver stays connected. Returns the
    seconds that took."""
    assert len(spy["closed"]) == 1, f"{len(spy['closed'])} Ray backends for one league (each puts the snapshots)"
    [(ids, (objects, primary, held))] = spy["closed"]
    assert spy["puts"] == snapshots and len(ids) == snapshots, (spy["puts"], ids)
    assert ids <= held, f"snapshots not referenced while the league ran: {ids - held}"
    assert sum(primary) >= snapshots, (objects, primary)  # the driver's own copies (on its node)
    assert sum(objects) > sum(primary), (objects, primary)  # and a worker node's: its removal is checked too
    gone = _until(lambda: _none_of(ids, *_object_stores()), 30)
    after, _, still = _object_stores()
    assert gone is not None, f"30 s after the league: {after} objects in the stores, still held: {ids & still}"
    print(f"objects per node before the backend closed {objects} (primary {primary}), none {gone:.1f} s after")
    return gone


@pytest.mark.parametrize("schedule", ["full", "adaptive"])
@pytest.mark.slow
def test_a_leagues_snapshots_leave_the_object_store_when_it_ends(snapshot_spy, tmp_path, schedule):
    """A driver that stays connected (run_league from Python on a cluster it joined itself) runs a league with
    two file bots: each snapshot is put once and is in the object store while the league runs; when run_league
    returns they are gone from every node, the worker node's copies included. An adaptive league plays batch
    after batch on one backend: still one put per snapshot for the whole league."""
    # adaptive: the first batch plays one round (2 games) of every pairing, later ones one round of one pairing
    adaptive = 'schedule = "adaptive"\nstop = { top = 1, batch = 1, confidence = 0.9999 }\n'
    write(tmp_path / "league.toml", SNAPSHOTS.replace("seed = 7\n", "seed = 7\n" + adaptive).replace(
        "games_per_pairing = 2", "games_per_pairing = 4") if schedule == "adaptive" else SNAPSHOTS)
    write(tmp_path / "file_bot.py", RANDOM_BOT)
    (tmp_path / "folder_bot").mkdir()
    write(tmp_path / "folder_bot" / "main.py", RANDOM_BOT)
    summary = run_league(load_config(tmp_path / "league.toml"), db=tmp_path / "a.sqlite", backend="ray")
    if schedule == "full":
        assert summary.errors == [] and summary.played == 6  # 3 pairings x 2 games, every one with a file bot
    else:
        with Store.open(tmp_path / "a.sqlite", readonly=True) as store:
            batches = [d for d in store.decisions(store.find_league("snapshots").id) if d["pairs"]]
        assert summary.errors == [] and summary.played > 6 and len(batches) >= 2, batches  # several batches ran
    assert ray.is_initialized()  # (run_league did not connect, so it did not disconnect either)
    _released(snapshot_spy, 2)


@pytest.mark.slow
def test_a_kept_backends_snapshots_leave_the_object_store_when_it_closes(snapshot_spy):
    """The caller keeps its RayBackend after run_tasks (to read ``lost``, as the hung-game driver below does):
    closing it must drop the snapshots, not the backend's garbage collection."""
    from arena.league.backends import Backend, run_tasks
    from arena.league.ray_backend import RayBackend
    from arena.league.task import Task, TaskFailure
    from arena.limits import Limits
    from arena.submissions.snapshot import single
    one, two = single("bot.py", RANDOM_BOT), single("bot.py", RANDOM_BOT + "# another bot\n")
    limits = Limits(move_time=2.0, first_move_time=20.0)
    tasks = [Task(f"k{i}", "nim", 0, (1, 2), (f"file:{one.digest}", f"file:{two.digest}"), ("a", "b"), i, limits,
                  "lose", {one.digest: one, two.digest: two}) for i in range(4)]
    backend = RayBackend()  # (on this process's connection)
    assert isinstance(backend, Backend)  # everything the writer reads (mypy checks it too: backends.make_backend)
    done = run_tasks(tasks, backend)
    assert len(done) == 4 and not any(isinstance(r, TaskFailure) for _, r in done), done
    _released(snapshot_spy, 2)
    assert backend.lost == []  # (the backend is still alive here)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("how", ["--address", "RAY_ADDRESS"])
def test_a_connection_failure_is_one_line_and_writes_nothing(tmp_path, how):
    write(tmp_path / "league.toml", BIG)
    address = f"127.0.0.1:{_closed_port()}"
    args = ["--address", address] if how == "--address" else []
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    if how == "RAY_ADDRESS":
        env["RAY_ADDRESS"] = address
    t0 = time.monotonic()
    out = subprocess.run([ARENA, "league", "run", "league.toml", "--backend", "ray", *args], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"arena: cannot connect to Ray at {address}"), out.stderr
    assert "internal error" not in out.stderr
    assert time.monotonic() - t0 < 60
    assert sorted(p.name for p in tmp_path.iterdir()) == ["league.toml"]  # no store, no lock file


@pytest.mark.slow
def test_a_killed_driver_then_a_rerun_stores_every_game_once(cluster, tmp_path):
    write(tmp_path / "league.toml", BIG)
    run = driver(tmp_path, cluster, "league", "run", "league.toml", "--backend", "ray", "--address", cluster.address,
                 "--db", "big.sqlite", "-q", background=True)
    _wait_for_games(tmp_path / "big.sqlite", "big", 3, run)
    run.send_signal(signal.SIGKILL)
    run.wait()
    again = driver(tmp_path, cluster, "league", "run", "league.toml", "--backend", "ray", "--address", cluster.address,
                   "--db", "big.sqlite", "-q")
    assert again.returncode == 0, again.stderr
    _every_game_once(tmp_path / "big.sqlite", "big", 36)


@pytest.mark.slow
def test_a_worker_node_with_another_arena_build_is_refused(cluster, tmp_path):
    """A third node whose arena differs by one comment: the driver names both builds and writes nothing."""
    import arena
    copy = tmp_path / "other"
    copy.mkdir()
    root = Path(arena.__file__).parent.parent
    for package in ("arena", "games", "bots", "leaderboards"):
        shutil.copytree(root / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "arena" / "limits.py", "a") as f:
        f.write("# another build\n")
    node = cluster.add_node(env={"PYTHONPATH": str(copy)})
    try:
        write(tmp_path / "league.toml", BIG)
        out = driver(tmp_path, cluster, "league", "run", "league.toml", "--backend", "ray", "--address",
                     cluster.address, "--db", "skew.sqlite", "-q")
    finally:
        cluster.kill_node(node)
    from arena.league.ray_backend import identity
    version, build = identity()
    assert out.returncode == 1, out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("arena: Ray node") and f"the driver runs arena {version} build {build}" in line, line
    assert line.count(" build ") == 2 and "install the same arena on every node" in line, line
    assert not (tmp_path / "skew.sqlite").exists()


HUNG_DRIVER = """
import json, sys
from arena.limits import Limits
from arena.league.ray_backend import RayBackend
from arena.league.backends import run_tasks
from arena.league.task import Task, TaskFailure
# hex(size=3), at most 9 moves: a bound of 5 + 2 x (2 x 3 + 2 x 9 x 0.2) s. (A built-in game: the example
# tictactoe is installed only by tests/games/test_outside_game.py, which may not have run yet.)
limits = Limits(move_time=0.2, first_move_time=3.0)
tasks = [Task(f"k{i:02}", "hex(size=3)", 0, (1, 2), ("random", "random"), ("a", "b"), i, limits, "lose")
         for i in range(12)]
backend = RayBackend(address=sys.argv[1], start_slack=5.0)
done = run_tasks(tasks, backend)
print(json.dumps({"keys": sorted(t.key for t, r in done if not isinstance(r, TaskFailure)), "lost": backend.lost}))
"""


@pytest.mark.slow
def test_a_hung_game_is_stopped_by_its_time_bound_and_played_again(cluster, tmp_path):
    """A worker frozen mid-game (SIGSTOP: no error, no result): after its games' bound (first moves plus the
    longest game at the move time, plus a start-up slack) the task is cancelled and the game played again."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    run = subprocess.Popen([sys.executable, "-c", HUNG_DRIVER, cluster.address], cwd=tmp_path, text=True,
                           env=dict(full, RAY_AUTH_TOKEN=cluster.token), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    frozen = _busy_worker(cluster, cluster.nodes[1], run)
    os.kill(frozen, signal.SIGSTOP)
    try:
        out, err = run.communicate(timeout=300)
    finally:
        try:
            os.kill(frozen, signal.SIGKILL)  # (Ray's cancel killed it already)
        except ProcessLookupError:
            pass
    assert run.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["keys"] == [f"k{i:02}" for i in range(12)]
    assert len(result["lost"]) == 1 and result["lost"][0].startswith("no result after"), result["lost"]


@pytest.mark.slow
def test_a_lost_worker_and_a_lost_node_still_complete_the_league(cluster, tmp_path):
    """SIGKILL of a worker process running a game on the worker node, then of that node's raylet: the games are
    played again elsewhere, the run exits 0 and every game is stored once. (Last: the node stays dead.)"""
    write(tmp_path / "league.toml", BIG)
    node = cluster.nodes[1]
    run = driver(tmp_path, cluster, "league", "run", "league.toml", "--backend", "ray", "--address", cluster.address,
                 "--db", "big.sqlite", "-q", background=True)
    os.kill(_busy_worker(cluster, node, run), signal.SIGKILL)
    _busy_worker(cluster, node, run)  # the node works on
    os.kill(cluster.raylet(node), signal.SIGKILL)
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    assert "36 games played" in out, out
    _every_game_once(tmp_path / "big.sqlite", "big", 36)


def _busy_worker(cluster: LocalCluster, node: Path, run: subprocess.Popen[str]) -> int:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and run.poll() is None:
        busy = cluster.busy_workers(node)
        if busy:
            return busy[0]
        time.sleep(0.05)
    raise AssertionError(f"no game ran on {node.name} (driver exit {run.poll()}: "
                         f"{run.stderr.read()[-2000:] if run.poll() is not None and run.stderr else ''})")


def _wait_for_games(path: Path, name: str, n: int, run: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and run.poll() is None:
        if path.exists():
            try:
                with Store.open(path, readonly=True) as store:
                    lg = store.find_league(name)
                    if lg is not None and store.count_games(lg.id) >= n:
                        return
            except Exception:  # noqa: BLE001 - the store is being created
                pass
        time.sleep(0.1)
    raise AssertionError(f"{n} games were not stored (driver exit {run.poll()})")


def _every_game_once(path: Path, name: str, scheduled: int) -> None:
    with Store.open(path, readonly=True) as store:
        lg = store.find_league(name)
        keys = [g.schedule_key for g in store.games(lg.id)]
    assert len(keys) == len(set(keys)) == scheduled


def _file_task(tmp_path: Path):
    from arena.league.task import Task
    from arena.limits import Limits
    from arena.submissions.snapshot import pack, single
    snapshot = single("bot.py", RANDOM_BOT)
    task = Task("k", "nim", 0, (1, 2), (f"file:{snapshot.digest}", "random"), ("a", "b"), 1,
                Limits(move_time=2.0, first_move_time=20.0), "lose", {snapshot.digest: None})
    return task, snapshot.digest, pack(snapshot)


def test_a_worker_checks_each_snapshot_against_its_digest(tmp_path):
    """What reaches a worker through the object store is unpacked against the digest the task names: a blob of
    other content is refused before any bot runs; the right one plays."""
    import zlib

    from arena.league.ray_backend import _play_remote, identity
    from arena.league.task import decode_result
    from arena.results.records import GameRecord
    from arena.submissions.snapshot import SnapshotError
    task, digest, blob = _file_task(tmp_path)
    other = zlib.compress(zlib.decompress(blob).replace(b"self.rng", b"self.gen"))
    with pytest.raises(SnapshotError, match="does not match its digest"):
        _play_remote(identity(), [task], [digest], other)
    [result] = _play_remote(identity(), [task], [digest], blob)
    assert isinstance(decode_result(result), GameRecord)


def test_a_worker_of_another_build_refuses_the_driver(tmp_path):
    from arena.league.ray_backend import _play_remote, identity
    task, digest, blob = _file_task(tmp_path)
    version, build = identity()
    refusal = _play_remote((version, "0" * 16), [task], [digest], blob)
    assert isinstance(refusal, str) and f"runs arena {version} build {build}" in refusal
    assert f"the driver runs arena {version} build {'0' * 16}" in refusal


TOURNAMENT = """
name = "cup"
games = ["nim"]
format = "double_elimination"
games_per_pairing = 2
seed = 4
bots = ["random", "greedy", "mc(n=5)", "mc(n=10)", "mc(n=20)"]
"""


@pytest.mark.slow
def test_a_tournament_on_a_two_node_cluster_equals_the_local_run(cluster, tmp_path):
    """A double elimination plays round after round on Ray (the next round paired when the last one's games are
    stored), with the same games, bracket and places as locally."""
    write(tmp_path / "cup.toml", TOURNAMENT)
    os.chmod(tmp_path, 0o755)
    with Store.open(tmp_path / "ray.sqlite", create=True) as store:  # one league secret for both runs
        store.ensure_league("cup", {"seed": 4})
    shutil.copy(tmp_path / "ray.sqlite", tmp_path / "local.sqlite")
    out = driver(tmp_path, cluster, "league", "run", "cup.toml", "--backend", "ray", "--address", cluster.address,
                 "--db", "ray.sqlite", "-q")
    assert out.returncode == 0, out.stderr
    local = run_league(load_config(tmp_path / "cup.toml"), db=tmp_path / "local.sqlite", backend="local",
                       concurrency=2)
    assert local.errors == []
    brackets = []
    for db in ("ray.sqlite", "local.sqlite"):
        p = subprocess.run([ARENA, "bracket", "--db", db, "--json"], cwd=tmp_path, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        data = json.loads(p.stdout)
        assert data["finished"]
        brackets.append(([[(m["label"], m["bots"], m["score"], m["winner"]) for m in r] for r in data["rounds"]],
                         data["placings"]))
    assert brackets[0] == brackets[1]
    assert stored(tmp_path / "ray.sqlite", "cup")[0] == stored(tmp_path / "local.sqlite", "cup")[0]
