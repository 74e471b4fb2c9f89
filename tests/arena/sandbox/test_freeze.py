"""A frozen bot is frozen (docs/sandbox.md, "Threat model"): a bot's turn ends when the kernel reports it frozen,
and the CPU it uses after its move is charged to it or is its failure. Real processes, one CPU."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from arena.errors import BotError
from arena.limits import Limits
from arena.sandbox import check
from tests.arena.sandbox_helpers import assert_nothing_left, place, play

pytestmark = pytest.mark.xdist_group("sandbox")

if check.missing_mandatory():
    pytest.skip(f"mandatory sandbox layers missing on this machine: {check.missing_mandatory()}",
                allow_module_level=True)

MOVE = 0.5
ROUNDS = 6


def duel(attacker: str, victim: str, cpu: int) -> dict:
    """The attacker and the victim alternate ROUNDS moves each through the real sandbox, in this process pinned to
    ``cpu`` (its fork server and bots with it, as a league worker's are). Per victim move: its share of the CPU
    against the attacker (its cgroup CPU time over its own plus the attacker's, from the victim's thaw to its
    freeze: other work on the machine does not count) and its share of the wall time (for the record). Also the
    attacker's failures and the CPU charged to its moves."""
    import time

    import games
    from arena.referee.sandboxed import describe_bot
    from arena.sandbox.launcher import Sandbox
    from arena.sandbox.proxy import BotProcess, close_all
    os.sched_setaffinity(0, {cpu})
    game = games.load("nim(n=100,k=1)")
    limits = Limits(move_time=MOVE, first_move_time=5.0, memory_mb=200, max_processes=64)  # room for the threads
    sandbox = Sandbox(limits, game)
    bots = [BotProcess(describe_bot(path, game), game, seat, seat, limits, sandbox=sandbox)
            for seat, path in enumerate((attacker, victim))]
    state = game.new_initial_state()
    # The victim's move runs from its thaw to its freeze: the referee's wait for the attacker to stop (and its kill)
    # comes before the victim's clock starts, so it is not the victim's time and is not counted here.
    marks: dict[str, tuple[float, float, float]] = {}
    victim_handle = bots[1].handle
    thaw, freeze = victim_handle.thaw, victim_handle.freeze

    def mark(name: str) -> None:
        marks[name] = (time.monotonic(), bots[0].handle.cg.cpu_seconds(), victim_handle.cg.cpu_seconds())

    def marked_thaw() -> None:
        mark("thaw")
        thaw()

    def marked_freeze() -> bool:
        mark("freeze")
        return freeze()

    victim_handle.thaw, victim_handle.freeze = marked_thaw, marked_freeze
    out: dict = {"shares": [], "wall_shares": [], "failures": [], "attacker_cpu": []}
    try:
        for bot in bots:
            bot.start_up()
        for _ in range(ROUNDS):
            if not out["failures"]:
                try:
                    bots[0].step(state, limits.allowance(bots[0].moves))
                    out["attacker_cpu"].append(bots[0].last_cpu_time)
                except BotError as exc:
                    out["failures"].append([exc.reason, str(exc)])
            state.apply_action(1)
            marks.clear()
            bots[1].step(state, limits.allowance(bots[1].moves))
            (t0, stolen0, own0), (t1, stolen1, own1) = marks["thaw"], marks["freeze"]
            wall, stolen, own = t1 - t0, stolen1 - stolen0, own1 - own0
            out["shares"].append(own / (own + stolen))
            out["wall_shares"].append(own / wall)
            state.apply_action(1)
    finally:
        close_all(bots)
    return out


@pytest.mark.skipif(not check.active("freeze"), reason="no cgroup freezer here (the fallback is tested below)")
@pytest.mark.slow
def test_a_bot_in_a_long_system_call_does_not_run_on_its_opponents_time(tmp_path):
    """The attacker's threads loop page-cache ``preadv`` calls that ignore the freeze until they end; its main
    thread answers at once. On one CPU the victim must get the CPU during its moves, and the attacker fails
    (timeout) while the referee waits for it to stop, or, where it stops within the allowance, is charged."""
    attacker, victim = place("frozen_reader", tmp_path), place("wall_spinner", tmp_path)
    cpu = min(os.sched_getaffinity(0))
    code = (f"import json; from tests.arena.sandbox.test_freeze import duel; "
            f"print(json.dumps(duel({attacker!r}, {victim!r}, {cpu})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    assert out.returncode == 0, out.stderr[-3000:]
    best = json.loads(out.stdout.strip().splitlines()[-1])
    print(best)
    assert best["attacker_cpu"], f"the attacker never moved (its threads start on its first move): {best}"
    # Frozen (or killed) before the victim is thawed, the attacker runs for none of the victim's move: 1.0 in every
    # run here. Without the referee's wait for the freeze its threads ran on for 8-42 ms of the victim's 250 ms.
    assert min(best["shares"]) >= 0.99, f"the attacker ran during the victim's move: {best}"
    # If it failed, it failed where the referee waits for the kernel's report that it is frozen, before the victim's
    # clock starts (not later, by the check of the CPU it used between its moves: that ran on the victim's time).
    # Where its reads are short enough to end within the allowance it is charged for them instead.
    assert all(reason == "timeout" and "while it stops" in detail for reason, detail in best["failures"]), best


def test_without_a_freezer_cpu_between_moves_is_a_timeout(tmp_path, monkeypatch):
    """Where nothing freezes a bot, the CPU it uses between its moves is read before its next move: more than the
    allowance is its failure (timeout), so it takes the opponent's CPU once at most."""
    from arena.sandbox import cgroups
    monkeypatch.setattr(cgroups.BotCgroup, "freeze", lambda self, frozen=True: None)
    monkeypatch.setattr(cgroups.BotCgroup, "frozen", lambda self: True, raising=False)
    # The burner spins in a thread from its start; the opponent starts up for 0.3 s before the burner's first move.
    slow = place("slow_starter", tmp_path, {"start.txt": "0.3", "first.txt": "0"})
    record = play(place("idle_burner", tmp_path), opponent=slow,
                  limits=Limits(move_time=1.0, first_move_time=5.0, memory_mb=200))
    assert [f.reason for f in record.failures] == ["timeout"], record.failures
    assert "after its move ended" in record.failures[0].detail, record.failures[0].detail
    assert_nothing_left(record)
