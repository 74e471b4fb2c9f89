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
from tests.arena.sandbox_helpers import FAST, assert_nothing_left, place

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(bool(check.missing_mandatory()),
                                 reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}"),
              pytest.mark.skipif(not zygote.enabled(), reason="the fork server is off (ARENA_SANDBOX_ZYGOTE=0)")]
KEY = bytes(32)  # one chance key: the probe gets the same seed in every game


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


def test_a_bot_finds_no_other_bots_snapshot_in_the_memory_it_inherits(tmp_path, fresh_server):
    """A bot scanning the heap and arenas it inherited from the fork server finds its own snapshot's digest (its own
    plan, decoded by its init) and never its opponent's: in a fresh server's first game and in later ones. Before,
    the server decoded every bot's launch plan (its snapshot folder, named by its digest) and a clean-clone CI run as
    nobody found the opponent's digest in game 1, where the probe's init was forked on demand after the opponent's
    plan was decoded. The scan does find a plan the server keeps alive (checked by hand: a list of past plans)."""
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


def _memory_holds(pid: int, needles: list[bytes]) -> set[bytes]:
    """Which of ``needles`` occur anywhere in the readable memory of process ``pid`` (its heap, pymalloc's arenas,
    its stacks: every mapping /proc/PID/mem lets this process read)."""
    found: set[bytes] = set()
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("r") or line.rstrip().endswith(("[vvar]", "[vsyscall]", "[vvar_vclock]")):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            found.update(n for n in needles if n in data)
    return found


def test_the_fork_server_never_holds_a_bots_snapshot_name(tmp_path, fresh_server):
    """The class of hole behind the heap scan above: whatever the fork server decoded, a later bot may find in the
    memory it inherits, zeroed or not. So the server must never be told what names a bot (its snapshot folder, named
    by the snapshot's digest, its cgroups, its uid): after games between two bot files, none of their digests is
    anywhere in the server's memory."""
    first, second = place("shill", tmp_path), place("heap_scan", tmp_path)
    digests = [take(first).digest.encode(), take(second).digest.encode()]
    for seed in (1, 2):
        play_game("nim", [first, second] if seed == 1 else [second, first], seed, FAST.with_(first_move_time=20.0),
                  chance_key=KEY)
    server = zygote.running_pid()
    assert server is not None, "the games were not played by a fork server of this process"
    assert _memory_holds(server, [os.getcwd().encode()]), "the scan reads nothing of the server's memory"
    held = _memory_holds(server, digests)
    assert not held, f"the fork server's memory holds the snapshot digests {sorted(held)} of the bots it started"
