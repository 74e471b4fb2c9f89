"""Failures are recorded honestly and dealt with once (issue 12 §7): a bot that never becomes ready does not
stall a random_move game, and whatever odd value a bot answers with is that bot's illegal answer, never a
failure of the host that reads like a start-up crash."""
from __future__ import annotations

import time

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import check, proxy
from tests.arena.sandbox_helpers import FAST, assert_nothing_left, place, play

pytestmark = pytest.mark.xdist_group("sandbox")

if check.missing_mandatory():
    pytest.skip(f"mandatory sandbox layers missing on this machine: {check.missing_mandatory()}",
                allow_module_level=True)


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.slow
def test_a_bot_that_never_becomes_ready_forfeits_once_and_the_game_ends_promptly(tmp_path, seat):
    limits = FAST.with_(first_move_time=0.3)
    bots = ["random", "random"]
    bots[seat] = place("never_ready", tmp_path)
    started = time.monotonic()  # the wall clock of the whole game: start-up may happen before its first move
    record = play_game("nim", bots, 3, limits, on_failure="random_move")
    elapsed = time.monotonic() - started
    assert_nothing_left(record)
    allowance = proxy.deadline_for(limits.first_move_time) + proxy.STARTUP_GRACE
    assert record.terminations[seat] == "timeout" and record.terminations[1 - seat] == "normal", record.failures
    assert [f.seat for f in record.failures] == [seat], record.failures  # waited for once, not at every move
    assert record.failures[0].substituted is None
    assert "start-up" in record.failures[0].detail, record.failures[0].detail
    assert elapsed < allowance + 4.0, f"the game took {elapsed:.1f} s"


def odd_answer(tmp_path, mode: str) -> str:
    """A copy of hostile/odd_answer.py set to ``mode``."""
    path = place("odd_answer", tmp_path)
    with open(path, "a") as f:
        f.write(f"\nMODE = {mode!r}\n")
    return path


@pytest.mark.parametrize("mode, needle", [("deep_list", "RecursionError"), ("deep_dict", "RecursionError"),
                                          ("huge_in_list", "list"), ("index_raises", "no index for you"),
                                          ("index_exits", "SystemExit"), ("repr_raises", "no repr for you"),
                                          ("repr_not_str", "ReprNotStr")])
def test_an_odd_answer_is_the_bots_illegal_move_with_an_honest_reason(tmp_path, mode, needle):
    record = play(odd_answer(tmp_path, mode), FAST.with_(move_time=5.0, first_move_time=5.0))
    assert record.terminations == ["illegal", "normal"], record.failures
    detail = record.failures[0].detail
    assert "instead of an int action" in detail and needle in detail, detail
    assert "start failed" not in detail and "exited with status" not in detail, detail


def test_an_int_subclass_that_compares_badly_is_still_its_int(tmp_path):
    record = play(odd_answer(tmp_path, "int_subclass"))
    assert record.failures == [] and record.terminations == ["normal", "normal"]


def test_an_exception_whose_str_raises_is_a_crash_named_by_its_type(tmp_path):
    record = play(odd_answer(tmp_path, "exception_str_raises"))
    assert record.terminations == ["crash", "normal"], record.failures
    detail = record.failures[0].detail
    assert "bot raised an exception: StrRaises" in detail and "start failed" not in detail, detail


def test_a_bot_whose_attribute_lookup_raises_is_a_crash_with_its_own_error(tmp_path):
    record = play(odd_answer(tmp_path, "getattr_raises"))
    assert record.terminations == ["crash", "normal"], record.failures
    detail = record.failures[0].detail
    assert "RuntimeError: no attributes for you" in detail and "start failed" not in detail, detail
