"""The Ray backend against a real local Ray instance: the same league gives the same games as the local backend."""
from __future__ import annotations

import pytest

from arena.league import load_config
from arena.runner import run_league
from leaderboards.store import Store
from tests.leaderboards.support import RANDOM_BOT, write

ray = pytest.importorskip("ray", reason="ray is not installed: pip install 'arena[ray]' to run the Ray backend test")

pytestmark = pytest.mark.ray

LEAGUE = """
name = "ray"
games = ["nim", "doublestep(length=6)"]
games_per_pairing = 2
seed = 3
[[bots]]
spec = "random"
[[bots]]
spec = "mc(n=5)"
[[bots]]
name = "file-bot"
file = "file_bot.py"
[[bots]]
name = "folder-bot"
file = "folder_bot"
entry = "main.py"
"""


def _games(path):
    with Store.open(path) as store:
        lg = store.find_league("ray")
        games = {g.schedule_key: (g.game, g.seats, g.players, g.history, g.returns, g.terminations)
                 for g in store.games(lg.id)}
        ratings = {store.bot(b).name: (r.mu, r.sigma) for b, r in store.ratings(lg.id).items()}
    return games, ratings


def test_a_league_on_ray_equals_the_same_league_on_the_local_backend(tmp_path):
    write(tmp_path / "file_bot.py", RANDOM_BOT)  # its snapshot travels with each task
    (tmp_path / "folder_bot").mkdir()  # a folder bot: its entry imports its own helper module
    write(tmp_path / "folder_bot" / "main.py", "from helper import Bot\n")
    write(tmp_path / "folder_bot" / "helper.py", RANDOM_BOT)
    config = load_config(write(tmp_path / "league.toml", LEAGUE))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = run_league(config, db=tmp_path / "ray.sqlite", backend="ray", concurrency=2)
    finally:
        ray.shutdown()
    with Store.open(tmp_path / "ray.sqlite") as store:  # the same league: the same secret chance key
        key = store.chance_key(store.find_league("ray").id)
    with Store.open(tmp_path / "local.sqlite", create=True) as store:
        league = store.ensure_league(config.name, config.to_dict())
        store.conn.execute("UPDATE leagues SET chance_key=? WHERE id=?", (key, league.id))
    local = run_league(config, db=tmp_path / "local.sqlite", backend="local", concurrency=2)
    assert on_ray.errors == [] and local.errors == []
    assert on_ray.played == local.played == 24
    games_ray, ratings_ray = _games(tmp_path / "ray.sqlite")
    games_local, ratings_local = _games(tmp_path / "local.sqlite")
    assert games_ray == games_local
    assert ratings_ray == ratings_local
    assert all(t == ["normal", "normal"] for *_, t in games_ray.values())
