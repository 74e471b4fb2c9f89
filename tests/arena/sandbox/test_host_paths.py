"""No host path in what a bot's failure says (issue 30 §1): a library's message (numpy's import error names the
install's folders), a bot printing where it runs, an exception quoting a module's file. The organiser's install
folders are named (``<site-packages>``, ``<python>``, ``<arena>``), never shown."""
from __future__ import annotations

import os
import sys

import pytest

from arena.limits import Limits
from arena.referee.sandboxed import play_game
from arena.sandbox import check
from arena.sandbox.failures import hide_host_paths

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(bool(check.missing_mandatory()),
                                 reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}")]
TELLER = '''import os, sys
import numpy


class Bot:
    def __init__(self, game, seat, seed):
        print("runs in", sys.prefix, sys.base_prefix, file=sys.stderr)
        raise ImportError(f"cannot use {numpy.__file__} nor {os.__file__}")

    def step(self, state, limit):
        return state.legal_actions()[0]
'''


def test_a_failure_names_no_host_folder(tmp_path):
    bot = tmp_path / "teller.py"
    bot.write_text(TELLER)
    record = play_game("nim", [str(bot), "random"], seed=1, limits=Limits(move_time=2, first_move_time=20))
    detail = record.failures[0].detail
    assert "ImportError: cannot use <site-packages>/numpy/__init__.py" in detail, detail
    import numpy
    for folder in {sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(numpy.__file__)),
                   os.path.realpath(sys.base_prefix)}:
        assert folder not in detail, (folder, detail)
    assert 'File "teller.py", line 8' in detail  # the bot's own frame, as its author needs it


def test_only_whole_folder_names_are_replaced():
    prefix = sys.base_prefix
    assert hide_host_paths(f"{prefix}/lib and {prefix}") == "<python>/lib and <python>"
    assert hide_host_paths(f"{prefix}x/lib") == f"{prefix}x/lib"  # another folder that starts the same
    assert hide_host_paths("/bot/mybot.py line 3") == "/bot/mybot.py line 3"
