"""A league's game seeds are keyed by its secret chance key (issue 31 §3), and a league's seed cannot change under
any runner (a review found `arena serve` stored the file's new seed before the check that `league run` makes)."""
from __future__ import annotations

import pytest

from arena.errors import ConfigError
from arena.league.config import load_config
from arena.league.planning import keyed_seeds, stored_config
from arena.league.schedule import game_seed, keyed_seed
from leaderboards.store import Store
from tests.league_files import league_toml


def config(tmp_path, seed: int):
    path = tmp_path / f"l{seed}.toml"
    path.write_text(league_toml("k", seed=seed, database="k.sqlite"))
    return load_config(path)


def test_a_new_league_is_keyed_and_its_seed_cannot_change(tmp_path):
    with Store.open(tmp_path / "k.sqlite", create=True) as store:
        league = store.ensure_league("k", stored_config(store, config(tmp_path, 1)))
        assert keyed_seeds(store, league.id)
        assert stored_config(store, config(tmp_path, 1))["seeds"] == "keyed"  # stays keyed
        with pytest.raises(ConfigError, match="played with seed 1, the file now says 2"):
            stored_config(store, config(tmp_path, 2))


def test_keyed_seeds_keep_duplicates_and_depend_on_the_key():
    a, b = bytes(32), bytes(range(32))
    seed = game_seed(1, "nim", 0)
    assert keyed_seed(a, seed) == keyed_seed(a, seed) != keyed_seed(b, seed)
    assert keyed_seed(a, seed) != seed and 0 <= keyed_seed(a, seed) < 2**62
