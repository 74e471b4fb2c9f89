"""The compiled search fails loudly when memory runs out: a failed allocation is a MemoryError (which the sandbox
reports as the bot's memory failure), never a search that silently stops growing or reads a NULL buffer."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import resource
    import bots, games
    from bots.base import Limit
    game = games.load("hex(size=11)")
    bot = bots.make("uct(iterations=3000000,max_nodes=100000000,expand=all)", game, 0, 1)
    with open("/proc/self/status") as f:
        size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + (96 << 20), size + (96 << 20)))  # 96 MB more address space
    try:
        bot.step(game.new_initial_state(), Limit())
    except MemoryError:
        print("MemoryError")
    else:
        print("no error")
""")


@pytest.mark.slow
def test_uct_out_of_memory_raises_memory_error() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "MemoryError", (out.stdout, out.stderr[-2000:])
