"""One-time sandbox start-up work: the fork server's preloading of built-in games and bots."""
from __future__ import annotations

import json
import select
import subprocess
import sys


def test_preload_imports_every_game_and_builtin_bot():
    # A fresh interpreter, so the modules cannot have been imported by another test. One fixed set, whoever plays
    # (tests/arena/sandbox/test_sandbox_inheritance.py plays the games).
    code = ("import sys; from arena.sandbox import zygote; from bots.registry import bot_class, bot_names; "
            "zygote._preload(); "
            "print(all(bot_class(n)[0].__module__ in sys.modules for n in bot_names()), "
            "all(m in sys.modules for m in ('games.nim', 'games.hex', 'games.sorry', 'bots.generic')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


def test_bot_processes_load_none_of_the_referee_s_heavy_modules():
    """The bot host and the fork server (every bot process starts from them) never import what only the referee
    needs: pydantic and the league schema (~40 ms a bot), the store, the CLI and dashboard libraries, Ray."""
    heavy = ("pydantic", "arena.schema", "arena.league.keys", "tomllib", "sqlite3", "leaderboards", "trueskill",
             "rich", "click", "textual", "ray")
    code = ("import sys; from arena.sandbox import host, zygote; "
            "zygote._preload(); "
            "import json; print(json.dumps([sorted(m for m in sys.modules "
            f"if m.split('.')[0] in {heavy!r} or m in {heavy!r}), 'bots.determinized' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    loaded, preloaded = json.loads(out.stdout)
    assert preloaded, "the fork server's preload did not run: the check below would prove nothing"
    assert loaded == [], f"bot processes import referee-only modules: {loaded}"


def test_the_fork_server_exits_quietly_when_its_referee_vanishes_mid_reply():
    """A referee killed (Ctrl-C) before it reads the fork server's answer resets the control socket: the server's
    next read fails with ECONNRESET, not end of file. It must exit as quietly as on end of file (no traceback on
    the terminal the user just interrupted)."""
    import socket

    from arena.sandbox.launcher import BOT_ENV, zygote_argv
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server = subprocess.Popen(zygote_argv() + [str(theirs.fileno())], pass_fds=(theirs.fileno(),),
                              env=dict(BOT_ENV), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    theirs.close()
    ours.send(json.dumps({"op": "status", "pid": 1 << 22, "timeout": 0}).encode())
    ours.settimeout(60)
    assert json.loads(ours.recv(1 << 16)) == {"status": None, "running": False}  # the server is serving
    ours.send(json.dumps({"op": "status", "pid": 1 << 22, "timeout": 0}).encode())
    for _ in range(6000):  # the answer is queued, unread, before this end goes: a reset, not an end of file
        if select.select([ours], [], [], 0.01)[0]:
            break
    ours.close()
    _, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    assert "Traceback" not in err and "Error" not in err, err
