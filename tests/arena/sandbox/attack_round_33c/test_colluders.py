"""Attack round 33c: two colluding scanners (different files, so different digests) play each other in a fresh
fork server's games, both seats; each scans all its memory and its whole visible filesystem for the other's
digest, folder name, cgroups and uid."""
from __future__ import annotations

import shutil

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import check, zygote
from arena.submissions.take import take
from tests.arena.sandbox.attack_round_33c.helpers import HERE_HOSTILE, KEY, PlanSpy, report
from tests.arena.sandbox.attack_round_33c.test_scan_all_memory import _check
from tests.arena.sandbox_helpers import FAST, assert_nothing_left

pytestmark = [pytest.mark.xdist_group("sandbox"), pytest.mark.slow,
              pytest.mark.skipif(bool(check.missing_mandatory()), reason="mandatory sandbox layers missing"),
              pytest.mark.skipif(not zygote.enabled(), reason="the fork server is off")]


def _variant(tmp_path, name: str) -> str:
    d = tmp_path / f"bot_{name}"
    d.mkdir()
    tmp_path.chmod(0o755)
    d.chmod(0o755)
    shutil.copy(HERE_HOSTILE / "mem_scan_all.py", d / "scan.py")
    with open(d / "scan.py", "a") as f:
        f.write(f"# {name}\n")
    return str(d / "scan.py")


@pytest.mark.parametrize("order", ["alpha_first", "beta_first"])
def test_two_colluding_scanners_find_nothing_of_each_other(tmp_path, fresh_server, monkeypatch, order):
    """One game each (a fresh server's first: the scanner in seat 0 reports, the game ends at its failure)."""
    spy = PlanSpy(monkeypatch)
    a, b = _variant(tmp_path, "alpha"), _variant(tmp_path, "beta")
    da, db = take(a).digest, take(b).digest
    assert da != db
    for seed, seats in ((1, [a, b]) if order == "alpha_first" else (2, [b, a]),):
        record = play_game("nim", seats, seed, FAST.with_(first_move_time=30.0, memory_mb=400), chance_key=KEY)
        assert_nothing_left(record, fresh_server)
        for seat in (0, 1):
            failure = next((f for f in record.failures if f.seat == seat), None)
            if failure is None or "SCAN" not in failure.detail:
                continue  # (the game ended at the other's failure before this one moved)
            mine, theirs = (da, db) if seats[seat] == a else (db, da)
            _check(report(record, seat, "SCAN"), mine, theirs, "beta" if seats[seat] == a else "alpha", spy)
