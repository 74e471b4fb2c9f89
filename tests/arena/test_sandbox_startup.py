"""One-time sandbox start-up work: the fork server's preloading of built-in games and bots."""
from __future__ import annotations

import subprocess
import sys


def test_preload_imports_registered_modules_and_ignores_unknown_names():
    # A fresh interpreter, so the modules cannot have been imported by another test.
    code = ("import sys; from arena.sandbox import zygote; "
            "zygote._preload({'game': 'nim', 'bot': 'greedy'}); "
            "zygote._preload({'game': 'no-such-game', 'bot': 'no-such-bot'}); "
            "zygote._preload({'game': 3, 'bot': None}); "
            "print('games.nim' in sys.modules, 'bots.greedy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


def test_sandbox_asks_the_fork_server_for_the_game_and_builtin_bot():
    import games
    from arena.limits import Limits
    from arena.sandbox.launcher import Sandbox
    sandbox = Sandbox(Limits(), games.load("nim"))
    assert sandbox._preload({"kind": "builtin", "spec": "mc(n=2)"}) == {"game": "nim", "bot": "mc"}
    assert sandbox._preload({"kind": "file", "path": "/x/bot.py"}) == {"game": "nim"}
