"""`arena sandbox check` measures a bot's first cgroup join (arena/sandbox/join_latency.py) and says what to do when
it is the kernel's grace-period wait."""
from __future__ import annotations

import os

import pytest

from arena.sandbox import cgroups, join_latency


def test_advice_only_for_a_slow_join_and_it_names_the_option_and_the_cost():
    assert join_latency.advice(None) is None
    assert join_latency.advice(join_latency.SLOW_MS / 2) is None
    text = join_latency.advice(8.3)
    assert text is not None and "favordynmods" in text and "8.3 ms" in text and "fork" in text


def _bot_group_dirs() -> set[str]:
    """This process's bot groups (other test processes make and remove theirs meanwhile: a clean-clone run saw one)."""
    return {os.path.join(parent, name) for parent in cgroups.parent_dirs() if os.path.isdir(parent)
            for name in os.listdir(parent) if os.path.isdir(os.path.join(parent, name))
            and (g := cgroups.GroupName.parse(name)) is not None and g.pid == os.getpid()}


@pytest.mark.skipif(os.geteuid() != 0 or cgroups.probe().memory is None, reason="needs root and cgroups")
def test_the_join_is_measured_in_a_group_of_arenas_own_that_is_removed_after():
    before = _bot_group_dirs()
    ms = join_latency.measure(tries=2)
    assert ms is not None and 0 < ms < 1000, ms
    assert _bot_group_dirs() <= before, "the group the join was timed in was left behind"


@pytest.mark.skipif(os.geteuid() == 0, reason="without root only")
def test_without_root_nothing_is_measured():
    assert join_latency.measure() is None
