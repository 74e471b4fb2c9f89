"""``arena bench sandbox``'s game cost (issue 33): a sandboxed game's wall time and where its CPU went, from real
games: the referee's, the fork server's and its children's (each bot's init and the bot) CPU are measured, not
assumed."""
from __future__ import annotations

import pytest

from arena.bench import sandbox as bench
from arena.sandbox import check, zygote

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(not zygote.enabled(), reason="the fork server is off (ARENA_SANDBOX_ZYGOTE=0)"),
              pytest.mark.skipif(bool(check.missing_mandatory()),
                                 reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}")]


def test_the_game_cost_splits_a_real_games_cpu_between_the_referee_the_fork_server_and_the_bots():
    figures = bench.game_cost(12)
    assert zygote.running_pid() is not None  # the games' fork server, whose CPU was read
    assert figures["wall_ms"] > 10 * figures["in_process_ms"] > 0  # two processes started and killed per game
    assert figures["referee_cpu_ms"] > 0 and figures["bots_cpu_ms"] > 0, figures
    # each game's bots run in processes of their own: their CPU is the fork server's children's, not the referee's
    assert figures["bots_cpu_ms"] > figures["fork_server_cpu_ms"] >= 0, figures
