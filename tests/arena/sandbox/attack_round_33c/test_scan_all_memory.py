"""Attack round 33c: a bot scanning ALL the memory it can read (every mapping, its init's too, every process it
sees) for its opponent's snapshot digest, its folder's name, other bots' cgroup names and uids; in a fresh fork
server's first game and later ones, in both seats."""
from __future__ import annotations

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import check, zygote
from arena.submissions.take import take
from tests.arena.sandbox.attack_round_33c.helpers import KEY, PlanSpy, place_own, report
from tests.arena.sandbox_helpers import FAST, assert_nothing_left, place

pytestmark = [pytest.mark.xdist_group("sandbox"), pytest.mark.slow,
              pytest.mark.skipif(bool(check.missing_mandatory()), reason="mandatory sandbox layers missing"),
              pytest.mark.skipif(not zygote.enabled(), reason="the fork server is off")]


def _check(found: dict, mine: str, theirs: str, other_name: str, spy: PlanSpy | None = None) -> None:
    print({k: v for k, v in found.items() if k != "digests"}, len(found["digests"]))
    assert mine[:12] in found["digests"], f"the scan missed the probe's own plan: {found}"
    assert theirs[:12] not in found["digests"], "the probe found its opponent's snapshot digest"
    assert other_name not in found["dirs"], f"the probe found its opponent's folder name: {found['dirs']}"
    assert set(found["live"]) <= {1, -1, found["me"][0]}, f"other processes answer signals: {found['live']}"
    if spy is not None and found["me"][1] in spy.plans:
        names, uids = spy.others(found["me"][1])
        assert not set(found["cgroups"]) & names, f"other bots' cgroups seen: {found['cgroups']} (others: {names})"
        assert not set(found["uids"]) & uids, f"other bots' uids seen: {found['uids']}"
    assert [fd.split(":")[1] for fd in found["fds"]] == ["chr", "fifo", "fifo", "fifo", "fifo"], found["fds"]


@pytest.mark.parametrize("probe_seat", [0, 1])
def test_a_bot_scanning_all_its_memory_finds_nothing_of_its_opponent(tmp_path, fresh_server, probe_seat, monkeypatch):
    spy = PlanSpy(monkeypatch)
    probe = place_own("mem_scan_all", tmp_path)
    other = place("shill", tmp_path)
    mine, theirs = take(probe).digest, take(other).digest
    for seed in (1, 2):
        seats = [other, probe] if probe_seat == 1 else [probe, other]
        record = play_game("nim", seats, seed, FAST.with_(first_move_time=20.0, memory_mb=400), chance_key=KEY)
        assert_nothing_left(record, fresh_server)
        _check(report(record, probe_seat, "SCAN"), mine, theirs, "shill", spy)
