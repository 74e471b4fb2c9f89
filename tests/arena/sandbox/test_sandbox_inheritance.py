"""The fork server reveals nothing about the opponent (issue 22 §5): a bot forked by the fork server inherits the
same process whoever its opponents are and whatever games the referee played before (modules, environment,
argv, descriptors, the server's own bookkeeping). Before, the server imported each built-in opponent's modules
on demand: ``bots._mc`` in ``sys.modules`` told a bot it played ``mc``."""
from __future__ import annotations

import json
import os
import re

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import check, zygote
from arena.submissions.take import take
from tests.arena.sandbox_helpers import FAST, assert_nothing_left, descendants_of, place

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(bool(check.missing_mandatory()),
                                 reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}"),
              pytest.mark.skipif(not zygote.enabled(), reason="the fork server is off (ARENA_SANDBOX_ZYGOTE=0)")]
KEY = bytes(32)  # one chance key: the probe gets the same seed in every game


@pytest.fixture
def fresh_server(monkeypatch):
    """A fork server of this test's own, so no earlier test's games have shaped it; stopped afterwards. Yields
    the processes that were already below this one (the earlier server: not a leftover of this test's games)."""
    before = set(descendants_of(os.getpid()))  # leaves out the current server itself: added here
    if zygote._ZYGOTE is not None and zygote._ZYGOTE.proc is not None:
        before.add(zygote._ZYGOTE.proc.pid)
    monkeypatch.setattr(zygote, "_ZYGOTE", None)
    yield before
    server = zygote._ZYGOTE
    if server is not None and server.proc is not None:
        server.proc.kill()
        server.proc.wait()


def inherited(record) -> dict:
    failure = next((f for f in record.failures if f.seat == 0), None)
    assert failure is not None, record.failures
    match = re.search(r"INHERITED (\{.*\})", failure.detail)
    assert match, failure.detail
    return json.loads(match[1])


@pytest.mark.parametrize("game", ["nim", "hex"])
def test_a_bot_inherits_the_same_process_whoever_its_opponent_is(tmp_path, fresh_server, game):
    probe = place("inheritance_probe", tmp_path)
    opponents = ["random", "mc", "uct", "random", "hmc", "random"]
    seen = []
    for opponent in opponents:
        record = play_game(game, [probe, opponent], 3, FAST.with_(first_move_time=5.0), chance_key=KEY)
        assert_nothing_left(record, fresh_server)
        seen.append(inherited(record))
    print(f"{game}: the probe sees {seen[0]}")
    for opponent, view in zip(opponents, seen):
        assert view == seen[0], f"against {opponent} the probe sees {view}, against random {seen[0]}"
    # /dev/null, the stderr pipe twice, the two protocol pipes: nothing of the server's (its pidfd leaked into
    # every bot forked without root, where the bot's init watches a relay instead)
    assert [fd.split(":")[1] for fd in seen[0]["fds"]] == ["c", "p", "p", "p", "p"], seen[0]["fds"]


@pytest.mark.slow
def test_a_later_games_bot_inherits_nothing_of_the_earlier_game(tmp_path, fresh_server):
    probe = place("inheritance_probe", tmp_path)
    first = inherited(play_game("nim", [probe, "random"], 3, FAST.with_(first_move_time=5.0), chance_key=KEY))
    play_game("hex", ["uct", "mc"], 4, FAST)  # another game between built-in bots, in the same referee
    play_game("sorry", ["determinized", "random", "random", "random"], 4, FAST)
    later = inherited(play_game("nim", [probe, "random"], 3, FAST.with_(first_move_time=5.0), chance_key=KEY))
    assert later == first, f"after other games the probe sees {later}, before {first}"


@pytest.mark.xfail(os.geteuid() != 0, strict=False, reason=(
    "attack found (without root; predates issue 33): the fork server decodes every bot's launch plan and no buffer is "
    "zeroed, so a bot whose init was forked on demand after its opponent's plan was decoded (every bot without root: "
    "no stock) can find the opponent's snapshot digest in freed memory it inherited (a clean-clone CI run as nobody, "
    "game 1). As root the bots start from inits forked before the game's plans came. The fix to make: the fork server "
    "never sees a bot's own plan (it answers with the waiting init's socket and the referee sends the plan there)"))
def test_a_bot_finds_no_other_bots_snapshot_in_the_memory_it_inherits(tmp_path, fresh_server):
    """A bot scanning the heap and arenas it inherited from the fork server (which decodes every bot's launch plan:
    its snapshot folder, named by its digest) finds its own snapshot's digest and never its opponent's: in a fresh
    server's first game (its init forked after the opponent's plan was decoded) and in a later one (an init forked
    ahead). The scan does find a plan the server keeps alive (checked by hand: a list of past plans in the server)."""
    probe = place("heap_scan", tmp_path)
    other = place("shill", tmp_path)
    mine, theirs = take(probe).digest, take(other).digest
    for seed in (1, 2, 3):
        record = play_game("nim", [other, probe], seed, FAST.with_(first_move_time=20.0), chance_key=KEY)
        failure = next((f for f in record.failures if f.seat == 1), None)
        assert failure is not None, record.failures
        match = re.search(r"HEAP (\[.*\])", failure.detail)
        assert match, failure.detail
        found = json.loads(match[1])
        assert mine in found, f"the scan did not find the probe's own plan (it would miss any): {found}"
        assert theirs not in found, f"game {seed}: the probe found its opponent's snapshot digest in its memory"
