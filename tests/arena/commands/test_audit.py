"""``arena audit``: a pair that shakes hands through the clock is flagged, the same league with an honest partner is
not (issue 31 §5). Real bots in a real league: boss (tests/arena/hostile/boss.py) signs its first moves in its
think time; shill plays perfect Nim against everyone but throws its games once it reads that signature; greedy is
the other perfect player, random the weak one."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from arena.sandbox import check
from tests.leaderboards.support import arena
from tests.league_files import league_toml
from tests.server.support import Client, Server, accounts

HOSTILE = Path(__file__).resolve().parents[1] / "hostile"
pytestmark = [pytest.mark.xdist_group("audit"),
              pytest.mark.skipif(bool(check.missing_mandatory()),
                                 reason=f"bot files need the mandatory sandbox layers: {check.missing_mandatory()}")]
BOTS = [{"name": "boss", "file": "boss.py"}, {"name": "shill", "file": "shill.py"}, {"spec": "greedy"},
        {"spec": "random"}]


def played(tmp_path: Path, *, throw: bool) -> Path:
    """A league of boss, shill, greedy and random on Nim, 12 games a pairing, played through `arena league run`."""
    tmp_path.chmod(0o755)
    shutil.copy(HOSTILE / "boss.py", tmp_path / "boss.py")
    shill = (HOSTILE / "shill.py").read_text()
    assert "\nTHROW = True\n" in shill
    (tmp_path / "shill.py").write_text(shill if throw else shill.replace("\nTHROW = True\n", "\nTHROW = False\n"))
    league = tmp_path / "l.toml"  # (the name tests/server/support.py's Server serves)
    league.write_text(league_toml("nim-audit", seed=5, database="nim.sqlite", games_per_pairing=12, bots=BOTS))
    # one game at a time: on a loaded machine a bot that waits over 1 s for a CPU to stop in is a timeout
    run = arena(tmp_path, "league", "run", str(league), "-j", "1")
    assert run.returncode == 0, run.stderr
    return league


def audit_json(tmp_path: Path, league: Path) -> dict:
    done = arena(tmp_path, "audit", "--league", str(league), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_pair_that_throws_games_to_its_partner_is_flagged(tmp_path):
    league = played(tmp_path, throw=True)
    board = json.loads(arena(tmp_path, "leaderboard", "--league", str(league), "--json", "--h2h").stdout)
    h2h = {(c["bot"], c["opponent"]): c for c in board["head_to_head"]}
    assert h2h[("boss", "shill")]["wins"] >= 11, h2h[("boss", "shill")]  # the handshake worked: shill threw
    print({k: v["win_rate"] for k, v in h2h.items()})
    found = audit_json(tmp_path, league)
    print(found)
    assert [f["bots"] for f in found["flagged"]] == [["boss", "shill"]], found
    flag = found["flagged"][0]
    assert flag["games"] == 12 and flag["score"] >= 11 and abs(flag["expected"] - 6) < 1, flag
    assert flag["p"] <= 0.05 and flag["p"] >= flag["p_raw"], flag  # corrected for the pairs looked at
    text = arena(tmp_path, "audit", "--league", str(league))
    assert text.returncode == 0, text.stderr
    assert "1 pair flagged, worst first (1 pair tested" in text.stdout, text.stdout
    assert "boss" in text.stdout and "shill" in text.stdout, text.stdout
    # the same finding in the report and on the organiser's page
    done = arena(tmp_path, "report", "--league", str(league), "--out", "report")
    assert done.returncode == 0, done.stderr
    assert flagged_rows((tmp_path / "report" / "index.html").read_text()) == [["boss", "shill", "12"]]
    tokens = accounts(tmp_path, "org", organiser=True)
    server = Server(tmp_path).start()
    try:
        client = Client(server.base)
        assert client.login("org", tokens["org"]) == 303
        code, _, page = client.get("/admin")
        assert code == 200, page
        assert flagged_rows(page) == [["boss", "shill", "12"]], page
    finally:
        server.stop()


def flagged_rows(page: str) -> list[list[str]]:
    """The first three cells (bot, against, games) of each row of the page's table of flagged pairs."""
    table = re.search(r'<table id="audit-flags">(.*?)</table>', page, re.S)
    assert table, page[-2000:]
    rows = re.findall(r"<tr>(.*?)</tr>", table[1], re.S)
    return [re.findall(r"<td>(.*?)</td>", row)[:3] for row in rows if "<td>" in row and "colspan" not in row]


@pytest.mark.slow
def test_the_same_league_with_an_honest_partner_flags_nothing(tmp_path):
    league = played(tmp_path, throw=False)
    found = audit_json(tmp_path, league)
    print(found)
    assert found["flagged"] == [], found
    assert found["tested"] >= 1, found  # the perfect players were compared, not left out
    text = arena(tmp_path, "audit", "--league", str(league))
    assert "no pair flagged" in text.stdout, text.stdout


def test_an_unknown_league_is_one_line(tmp_path):
    done = arena(tmp_path, "audit", "--league", "nowhere")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no store" in done.stderr, done.stderr
