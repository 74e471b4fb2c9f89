"""The referee's work is the bot's cost (docs/sandbox.md, "Threat model"): what a bot sends or fails to send (hang-
ups, answers to requests never made, output) is bounded per move or is that bot's failure. Real processes."""
from __future__ import annotations

import os
import time

import pytest

from arena.limits import Limits
from arena.sandbox import check
from tests.arena.sandbox_helpers import place, play
from tests.leaderboards.support import write

pytestmark = pytest.mark.xdist_group("sandbox")

if check.missing_mandatory():
    pytest.skip(f"mandatory sandbox layers missing on this machine: {check.missing_mandatory()}",
                allow_module_level=True)

LIMITS = Limits(move_time=3.0, first_move_time=5.0, memory_mb=200)
FIRST_LEGAL = "class Bot:\n    def __init__(self, game, seat, seed):\n        pass\n" \
              "    def step(self, state, limit):\n        return state.legal_actions()[0]\n"


def test_a_hung_up_output_pipe_is_waited_on_without_spinning(tmp_path):
    """The bot closes its stdout and stderr, then sleeps 1.5 s in a move: the referee waits for its answer without
    burning CPU on the hung-up pipe (it spun for the whole sleep before)."""
    # a game first: the sandbox's first use in this process (imports, the fork server) is not the pipe's cost (run
    # alone, as the unprivileged re-run runs each file, this test paid 0.53 s for it)
    (tmp_path / "warm").mkdir()
    play(str(write(tmp_path / "warm" / "first.py", FIRST_LEGAL)), limits=LIMITS)
    cpu0 = time.process_time()
    record = play(place("hang_up_output", tmp_path), limits=LIMITS)
    referee_cpu = time.process_time() - cpu0
    assert record.failures == [], record.failures
    assert referee_cpu < 0.5, f"the referee used {referee_cpu:.2f} s of CPU while the bot slept 1.5 s"


def test_answers_to_requests_never_made_are_a_protocol_failure(tmp_path):
    """Only a move that timed out may be answered late, once: any other answer by id costs the referee work the bot
    is not charged for, so it is the bot's failure at once."""
    record = play(place("late_answers", tmp_path), limits=LIMITS)
    assert record.terminations[0] == "protocol", record.failures
    assert "never sent" in record.failures[0].detail, record.failures[0].detail


class CountingOs:
    """The ``os`` module as the channel sees it, counting its reads of the bot's pipes."""

    def __init__(self) -> None:
        self.reads = 0

    def read(self, fd: int, n: int) -> bytes:
        self.reads += 1
        return os.read(fd, n)

    def __getattr__(self, name: str):
        return getattr(os, name)


def test_output_in_tiny_pieces_is_read_a_bounded_number_of_times(tmp_path, monkeypatch):
    """One byte per write for 2 s: the referee reads the output as it comes at most READS_PER_MOVE times in the move,
    then on a timer (100 a second at most), not at each write; the bot still plays (its writes wait for the reads)."""
    from arena.sandbox import channel
    counting = CountingOs()
    monkeypatch.setattr(channel, "os", counting)
    record = play(place("output_trickle", tmp_path), limits=LIMITS)
    assert record.failures == [], record.failures
    bound = channel.READS_PER_MOVE + 2 * 100 + 200  # as they come, 2 s on the timer, the answers and other moves
    assert counting.reads < bound, f"the referee read the bot's pipes {counting.reads} times in a 2 s trickle"
