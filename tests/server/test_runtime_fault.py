"""A sandbox runtime that cannot load the bot packages is the server's fault, never a student's refusal (issue 30
§1): the organiser sees it on /admin, the student's upload waits in the queue, and it is validated once the runtime
loads again. No host path reaches the student.

The runtime is broken for real: a ``sitecustomize`` on the server's PYTHONPATH (which every Python process of the
server loads: the workers, the import check; never a bot, started with ``-I -S``) leaves libstdc++ out of the bot's
view while a marker file exists, as a plain install once did for numpy. The fork server is off so each bot is a
fresh interpreter that must load numpy from the view (the fork server preloads the games, numpy with them where
OpenSpiel is installed).
"""
from __future__ import annotations

import time

import pytest

from tests.server.support import Client, Server, accounts, make_league, wait_idle

pytestmark = pytest.mark.xdist_group("server")
BREAKER = '''import os
_marker = os.environ.get("ARENA_TEST_BREAK_RUNTIME")
if _marker:
    from arena.sandbox import runtime as _runtime
    _real = _runtime.libraries

    def _libraries(objects):
        libs = _real(objects)
        if os.path.exists(_marker):
            return {t: s for t, s in libs.items() if "libstdc++" not in t}
        return libs
    _runtime.libraries = _libraries
'''
NUMPY_BOT = '''import numpy as np


class Bot:
    def __init__(self, game, seat, seed):
        self.rng = np.random.default_rng(seed + {n})

    def step(self, state, limit):
        legal = state.legal_actions()
        return legal[int(self.rng.integers(len(legal)))]
'''


@pytest.mark.slow
def test_a_runtime_that_cannot_load_numpy_pauses_validation_instead_of_refusing(tmp_path):
    make_league(tmp_path)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(BREAKER)
    marker = tmp_path / "broken"
    marker.write_text("")
    tokens = accounts(tmp_path, "alice")
    tokens.update(accounts(tmp_path, "prof", organiser=True))
    server = Server(tmp_path, env={"PYTHONPATH": str(tmp_path / "site"), "ARENA_TEST_BREAK_RUNTIME": str(marker),
                                   "ARENA_SANDBOX_ZYGOTE": "0"}).start()
    try:
        c = Client(server.base)
        code, doc = c.submit_api(tokens["alice"], "np_bot.py", NUMPY_BOT.format(n=1).encode())
        assert code == 202, doc
        sid = doc["id"]
        deadline = time.time() + 25  # the import check at start and a validation game take a few seconds each
        while time.time() < deadline:
            doc = c.status(tokens["alice"], sid)[1]
            assert doc["status"] in ("queued", "validating"), doc  # never refused for the server's fault
            time.sleep(0.5)
        prof = Client(server.base)
        assert prof.login("prof", tokens["prof"]) == 303
        admin = prof.get("/admin")[2]
        assert 'id="server-problem"' in admin and "libstdc++" in admin, admin[:3000]
        assert str(tmp_path) not in admin and "site-packages/" not in admin.replace("&lt;site-packages&gt;/", "")
        assert "validation and the league are paused" in server.output().lower()
        from leaderboards.store import Store
        with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:  # no league game while it is broken
            assert store.count_games(store.find_league("srv").id) == 0

        marker.unlink()  # the organiser's fix; the next upload (or a minute) checks again
        code, second = c.submit_api(tokens["alice"], "np_bot2.py", NUMPY_BOT.format(n=2).encode())
        assert code == 202, second
        assert c.wait(tokens["alice"], sid, {"accepted", "refused"}, limit=120)["status"] == "accepted"
        assert c.wait(tokens["alice"], second["id"], {"accepted", "refused"}, limit=120)["status"] == "accepted"
        assert 'id="server-problem"' not in prof.get("/admin")[2]
        assert wait_idle(tmp_path) > 0  # the league goes on
    finally:
        server.stop()
