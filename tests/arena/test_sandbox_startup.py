"""One-time sandbox start-up work: the fork server's preloading of built-in games and bots."""
from __future__ import annotations

import json
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


def test_bot_processes_load_none_of_the_referee_s_heavy_modules():
    """The bot host and the fork server (every bot process starts from them) never import what only the referee
    needs: pydantic and the league schema (~40 ms a bot), the store, the CLI and dashboard libraries, Ray."""
    heavy = ("pydantic", "arena.schema", "arena.league_schema", "tomllib", "sqlite3", "leaderboards", "trueskill",
             "rich", "click", "textual", "ray")
    code = ("import sys; from arena.sandbox import host, zygote; "
            "zygote._preload({'game': 'hex', 'bot': 'uct'}); zygote._preload({'game': 'sorry', 'bot': 'determinized'}); "
            "import json; print(json.dumps([sorted(m for m in sys.modules "
            f"if m.split('.')[0] in {heavy!r} or m in {heavy!r}), 'bots.determinized' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    loaded, preloaded = json.loads(out.stdout)
    assert preloaded, "the fork server's preload did not run: the check below would prove nothing"
    assert loaded == [], f"bot processes import referee-only modules: {loaded}"
