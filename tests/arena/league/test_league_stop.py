"""Stopping a league runner: a second runner on the same store is refused, a SIGKILLed one does not block the
resume, Ctrl-C (SIGINT to the process group) and SIGTERM stop it within seconds with its summary, leaving no
worker or bot behind, and the next run plays exactly the abandoned games. Real `arena league run` processes.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from leaderboards.store import Store
from tests.leaderboards.support import RANDOM_BOT, arena, descendants, write

# Hex 7x7 between two thinking bots: each game takes seconds, so games are in flight whenever we look.
LEAGUE = """
name = "stop"
games = ["hex(size=7)"]
games_per_pairing = 4
seed = 2
database = "stop.sqlite"
[limits]
move_time = 0.3
first_move_time = 20.0
[[bots]]
spec = "uct"
[[bots]]
spec = "mc"
[[bots]]
spec = "random"
"""
SCHEDULED = 3 * 4
STOP_WITHIN = 3.0  # seconds from the signal to the runner's exit (the bound)


def _start(d: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "arena.cli", "league", "run", "league.toml", "-q", "-j", "2",
                             *extra], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _stored(db: Path) -> tuple[int, int]:
    """(games, distinct schedule keys) in the store; (0, 0) while it does not exist yet."""
    if not db.exists():
        return 0, 0
    try:
        with Store.open(db, readonly=True) as store:
            return tuple(store.conn.execute("SELECT count(*), count(DISTINCT schedule_key) FROM games").fetchone())
    except Exception:  # noqa: BLE001 - the runner is still creating it
        return 0, 0


def _wait_for(predicate, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _alive(processes: list[psutil.Process]) -> list[str]:
    left = []
    for p in processes:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{p.pid} uid {p.uids().real} {' '.join(p.cmdline())[:80]}")
        except psutil.NoSuchProcess:
            pass
    return left


def _bots_in_flight(pid: int) -> list[psutil.Process]:
    """The runner's process tree once at least one bot process (a uid of its own, 20000+) is running."""
    if os.geteuid() != 0:
        pytest.skip("bots get uids of their own (20000+) only when the runner is root")
    found: list[psutil.Process] = []

    def look() -> bool:
        found[:] = descendants(pid)
        for p in found:
            try:
                if p.uids().real >= 20000:
                    return True
            except psutil.NoSuchProcess:
                pass
        return False
    _wait_for(look)
    return found


@pytest.fixture
def league(tmp_path: Path) -> Path:
    write(tmp_path / "league.toml", LEAGUE)
    return tmp_path


@pytest.mark.slow
def test_a_second_runner_is_refused_and_names_the_first(league: Path):
    first = _start(league)
    try:
        _wait_for(lambda: _stored(league / "stop.sqlite")[0] >= 1)
        # Held still (its lock kept, its workers' games going on) while the second runner and `league status` look
        # at it: on a loaded machine the first could finish its schedule before they started (seen once).
        os.kill(first.pid, signal.SIGSTOP)
        try:
            second = arena(league, "league", "run", "league.toml", "-q", "-j", "1", timeout=60)
            status = arena(league, "league", "status", "league.toml", timeout=60)
        finally:
            os.kill(first.pid, signal.SIGCONT)
        assert second.returncode == 1, second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert f"pid {first.pid}" in lines[0] and socket.gethostname() in lines[0], lines[0]
        assert "stop.sqlite" in lines[0] and "in use" in lines[0], lines[0]
        assert second.stdout == ""  # no summary claiming games
        assert status.returncode == 0 and f"playing this store now (pid {first.pid} on host" in status.stdout, status
        # arena submit takes no lock: its one transaction waits for SQLite's write lock like any writer
        write(league / "late.py", RANDOM_BOT)
        late = arena(league, "submit", "late.py", "--league", "stop", "--db", "stop.sqlite", timeout=120)
        assert late.returncode == 0, late.stderr
        out, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, err
    assert f"{SCHEDULED} games played" in out, out  # the running league played the schedule it started with
    assert _stored(league / "stop.sqlite") == (SCHEDULED, SCHEDULED)
    again = arena(league, "league", "run", "league.toml", "-q", "-j", "2")  # the next run plays the entrant
    assert again.returncode == 0, again.stderr
    assert f"{3 * 4} games played" in again.stdout and f"{6 * 4} scheduled" in again.stdout, again.stdout


@pytest.mark.slow
def test_a_sigkilled_runner_does_not_block_the_resume_and_leaves_no_warnings(league: Path):
    first = _start(league)
    _wait_for(lambda: _stored(league / "stop.sqlite")[0] >= 1)
    tree = _bots_in_flight(first.pid)
    first.kill()  # SIGKILL: no cleanup code of the runner runs
    first.wait()
    # End of file on stderr comes once every process that holds it has exited, multiprocessing's resource tracker
    # (handed stderr to print its warnings after its parent died) included: nothing is left to say after it.
    _, err = first.communicate(timeout=60)
    assert "leaked" not in err and "resource_tracker" not in err, err
    psutil.wait_procs(tree, timeout=10)
    assert not _alive(tree), _alive(tree)
    stored, _ = _stored(league / "stop.sqlite")
    assert 0 < stored < SCHEDULED
    resumed = arena(league, "league", "run", "league.toml", "-q", "-j", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{SCHEDULED - stored} games played" in resumed.stdout, resumed.stdout
    assert _stored(league / "stop.sqlite") == (SCHEDULED, SCHEDULED)


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.slow
def test_a_signal_stops_the_run_within_seconds_and_the_next_run_plays_what_was_abandoned(league: Path, sig, status):
    runner = _start(league)
    _wait_for(lambda: _stored(league / "stop.sqlite")[0] >= 1)
    tree = _bots_in_flight(runner.pid)  # games are being played right now
    started = time.monotonic()
    os.killpg(runner.pid, sig)  # what a Ctrl-C at a terminal does (SIGINT to the whole foreground group)
    try:
        out, err = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    took = time.monotonic() - started
    print(f"{signal.Signals(sig).name}: the runner exited {took:.2f} s after the signal")
    assert runner.returncode == status, (runner.returncode, err)
    assert took < STOP_WITHIN, took
    played = int(out.split(" games played")[0].rsplit(" ", 1)[-1])  # the summary is printed
    err_lines = err.strip().splitlines()
    assert len(err_lines) == 1 and signal.Signals(sig).name in err_lines[0] and "abandoned" in err_lines[0], err
    assert "Traceback" not in err
    psutil.wait_procs(tree, timeout=2)
    assert not _alive(tree), _alive(tree)  # workers, fork servers and every bot are gone
    stored, distinct = _stored(league / "stop.sqlite")
    assert stored == distinct == played < SCHEDULED  # the abandoned games were neither stored nor counted
    resumed = arena(league, "league", "run", "league.toml", "-q", "-j", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{SCHEDULED - stored} games played" in resumed.stdout, resumed.stdout
    assert _stored(league / "stop.sqlite") == (SCHEDULED, SCHEDULED)


def test_a_backend_closed_from_another_thread_while_a_game_ends_there_stops_its_workers():
    """`arena serve` stops its validator's and scrimmages' backends from the main thread while their own threads may
    be storing a result (``busy`` changes under ``close``): a race that made the server exit 1 ("dictionary changed
    size during iteration") instead of stopping. Here a game ends exactly while ``close`` signals the workers."""
    from arena.league.workers import LocalBackend

    backend = LocalBackend(0)
    signalled: list[int] = []

    class Proc:
        def __init__(self, fd: int) -> None:
            self.fd = fd

        def send_signal(self, signum: int) -> None:
            signalled.append(self.fd)
            backend.busy.pop(2, None)  # the executing thread reads worker 2's result meanwhile

    class Worker:
        def __init__(self, fd: int) -> None:
            self.proc = Proc(fd)

    backend.busy = {fd: (Worker(fd), None) for fd in (1, 2, 3)}  # type: ignore[misc]
    backend.close()
    assert signalled == [1, 2, 3] and backend.busy == {}  # every worker busy when close began was told to stop
