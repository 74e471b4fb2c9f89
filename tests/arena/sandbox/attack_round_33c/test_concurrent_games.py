"""Attack round 33c: two games played at once by one referee (threads, one fork server): a scanner in each, against
different opponents; neither finds the digest of any of the three other bots."""
from __future__ import annotations

import shutil
import threading

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import check, zygote
from arena.submissions.take import take
from tests.arena.sandbox.attack_round_33c.helpers import HERE_HOSTILE, KEY, report
from tests.arena.sandbox_helpers import FAST, HOSTILE

pytestmark = [pytest.mark.xdist_group("sandbox"), pytest.mark.slow,
              pytest.mark.skipif(bool(check.missing_mandatory()), reason="mandatory sandbox layers missing"),
              pytest.mark.skipif(not zygote.enabled(), reason="the fork server is off")]


def _copy(tmp_path, src, name: str) -> str:
    d = tmp_path / f"bot_{name}"
    d.mkdir()
    tmp_path.chmod(0o755)
    d.chmod(0o755)
    shutil.copy(src, d / "bot.py")
    with open(d / "bot.py", "a") as f:
        f.write(f"# {name}\n")
    return str(d / "bot.py")


def test_scanners_in_concurrent_games_find_no_other_bot(tmp_path, fresh_server):
    scanners = [_copy(tmp_path, HERE_HOSTILE / "mem_scan_all.py", f"scan{i}") for i in range(2)]
    others = [_copy(tmp_path, HOSTILE / "shill.py", f"shill{i}") for i in range(2)]
    digests = {p: take(p).digest for p in scanners + others}
    assert len(set(digests.values())) == 4
    records: dict[int, object] = {}

    def game(i: int) -> None:
        records[i] = play_game("nim", [scanners[i], others[i]], i + 1,
                               FAST.with_(first_move_time=40.0, memory_mb=400), chance_key=KEY)
    threads = [threading.Thread(target=game, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(records) == 2
    for i in range(2):
        found = report(records[i], 0, "SCAN")
        print(i, found)
        mine = digests[scanners[i]]
        assert mine[:12] in found["digests"]
        for p, d in digests.items():
            if p != scanners[i]:
                assert d[:12] not in found["digests"], f"scanner {i} found the digest of {p}"
