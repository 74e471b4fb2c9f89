"""Resume after SIGKILL at random moments: the complete schedule, no duplicates, and ratings identical to an
uninterrupted run with the same seeds (the real runner, worker pool and sandboxed referee)."""
from __future__ import annotations

import random
import shutil
import subprocess
import sys
import time

import psutil
import pytest

from leaderboards import ledger
from leaderboards.store import Store
from tests.leaderboards.support import arena, descendants, write
from tests.league_files import league_toml


def resume_league(database: str) -> str:
    """Two games, three bots (greedy plays only Nim), 8 games a pairing, the league's default limits."""
    bots = [{"spec": "random"}, {"spec": "greedy", "games": ["nim"]}, {"spec": "mc(n=5)"}]
    return league_toml("resume", seed=5, database=database, games=["nim", "doublestep(length=6)"], games_per_pairing=8,
                       limits=None, bots=bots)


SCHEDULED = 3 * 8 + 1 * 8  # nim: 3 pairings, doublestep: random vs mc; 8 games each


def _running(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _count(path):
    """Games stored so far (a reader beside the running writer; 0 before the store exists)."""
    if not path.exists():
        return 0
    try:
        with Store.open(path, readonly=True) as store:
            return store.conn.execute("SELECT count(*) FROM games").fetchone()[0]
    except Exception:  # noqa: BLE001 - the writer is still creating the schema
        return 0


def _snapshot(path):
    with Store.open(path) as store:
        lg = store.find_league("resume")
        games = {g.schedule_key: (g.seats, g.seed, g.history, g.returns) for g in store.games(lg.id)}
        ratings = {store.bot(b).name: (r.mu, r.sigma, r.games) for b, r in store.ratings(lg.id).items()}
        per_scope = {s: {b: (r.mu, r.sigma) for b, r in store.ratings(lg.id, s).items()} for s in store.scopes(lg.id)}
        recomputed = {store.bot(b).name: (r.mu, r.sigma, r.games)
                      for b, r in ledger.recompute_ratings(store, lg.id).items()}
        count = store.conn.execute("SELECT count(*), count(DISTINCT schedule_key) FROM games").fetchone()
    return games, ratings, per_scope, recomputed, tuple(count)


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_equals_an_uninterrupted_run(tmp_path):
    write(tmp_path / "killed.toml", resume_league("killed.sqlite"))
    write(tmp_path / "clean.toml", resume_league("clean.sqlite"))
    with Store.open(tmp_path / "killed.sqlite", create=True) as store:  # one league secret (chance key) for
        store.ensure_league("resume", {"seed": 5})  # both runs: it keys the bots' seeds as the seed does
    shutil.copy(tmp_path / "killed.sqlite", tmp_path / "clean.sqlite")
    rng = random.Random(20261122)
    stored_at_kill = []
    for _ in range(3):
        before = _count(tmp_path / "killed.sqlite")
        proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "league", "run", "killed.toml", "-q", "-j", "2"],
                                cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        # A random moment after it made progress (1-4 more games stored): other games are in flight then.
        target = before + rng.randint(1, 4)
        while _count(tmp_path / "killed.sqlite") < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.05))
        tree = descendants(proc.pid)  # workers and sandboxed bots
        proc.kill()  # SIGKILL: no cleanup code runs
        proc.wait()
        stored_at_kill.append(_count(tmp_path / "killed.sqlite"))
        _, alive = psutil.wait_procs(tree, timeout=10)
        assert not [p for p in alive if _running(p)], "workers or bots outlived the runner"
    print(f"games stored when the runner was killed: {stored_at_kill} of {SCHEDULED}")
    assert 0 < stored_at_kill[0] and stored_at_kill[-1] < SCHEDULED  # the kills really interrupted the league
    resumed = arena(tmp_path, "league", "run", "killed.toml", "-q", "-j", "2")
    assert resumed.returncode == 0, resumed.stderr
    clean = arena(tmp_path, "league", "run", "clean.toml", "-q", "-j", "1")
    assert clean.returncode == 0, clean.stderr

    games_k, ratings_k, scopes_k, recomputed_k, count_k = _snapshot(tmp_path / "killed.sqlite")
    games_c, ratings_c, scopes_c, _, _ = _snapshot(tmp_path / "clean.sqlite")
    assert count_k == (SCHEDULED, SCHEDULED)  # complete, no duplicates
    assert games_k == games_c  # the same games, seat for seat and move for move
    assert ratings_k == ratings_c  # bit-identical, whatever order games finished in
    assert scopes_k == scopes_c
    assert recomputed_k == ratings_k
    again = arena(tmp_path, "league", "run", "killed.toml", "-q")
    assert "0 games played" in again.stdout
