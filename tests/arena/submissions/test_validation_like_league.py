"""Nothing a bot sees tells a validation game from a league game (issue 31 §3): seeds drawn like a league's (62 bits,
from the league's secret key), the league's chance key, opponents from its reference bots, its openings and limits.
The cheat that showed it: a bot that behaves only when the game's seed is small (validation used the league's seed + i)
passed `arena submit` and then failed every league game."""
from __future__ import annotations

import pytest

from arena.submissions.validation import validation_games
from tests.leaderboards.support import arena, write
from tests.league_files import league_toml

CONFIG = {"games": ["nim(n=9)", "hex(size=3)"], "seed": 5, "limits": {"move_time": 2.0},
          "openings": {"plies": 2}}
KEY = bytes(range(32))
# Plays only when the seed looks like a validation seed (the league's seed + a game's index), else crashes.
SEED_TELLER = '''class Bot:
    def __init__(self, game, seat, seed):
        if game.param("seed") > 1000:
            raise RuntimeError("a league game: not playing")

    def step(self, state, limit):
        return state.legal_actions()[0]
'''


def tasks(**kw):
    return list(validation_games("file:abc", "mine", {}, CONFIG, **kw))


def test_seeds_are_drawn_like_a_leagues_from_the_key():
    first, again, other = tasks(key=KEY), tasks(key=KEY), tasks(key=bytes(32))
    seeds = [t.seed for _, _, t in first]
    assert len(set(seeds)) == len(seeds) == 4  # 2 games x 2 seats
    assert all(0 <= s < 2**62 for s in seeds) and max(seeds) > 2**40  # not the league's seed + i
    assert seeds == [t.seed for _, _, t in again]  # the same submission meets the same games
    assert not set(seeds) & {t.seed for _, _, t in other}  # another key: other games
    assert all(t.chance_key == KEY for _, _, t in first)
    assert {t.seed for _, _, t in tasks()} != {t.seed for _, _, t in tasks()}  # no key: fresh every time


def test_opponents_come_from_the_leagues_reference_bots():
    field = ["greedy", "mc(n=20)", "uct(iterations=50)"]
    met = [t.bots[1 - seat] for _, seat, t in tasks(key=KEY, opponents=field)]
    assert set(met) <= set(field) and "random" not in met
    assert {t.bots[1 - seat] for _, seat, t in tasks(key=KEY)} == {"random"}  # a league of files only


def test_validation_games_start_from_the_leagues_openings_with_its_limits():
    for _, _, t in tasks(key=KEY):
        assert len(t.opening) == 2 and t.limits.move_time == 2.0


def test_a_bot_that_plays_only_in_validation_is_refused(tmp_path):
    write(tmp_path / "teller.py", SEED_TELLER)
    config = write(tmp_path / "league.toml", league_toml("like", seed=5, database="like.sqlite"))
    assert arena(tmp_path, "league", "run", str(config), "-q").returncode == 0
    p = arena(tmp_path, "submit", "teller.py", "--league", "like", "--db", "like.sqlite")
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "refused" in p.stderr and "crash" in p.stderr, p.stderr


@pytest.mark.parametrize("reference", [["greedy"], ["random", "greedy"]])
def test_reference_bots_are_the_league_files_built_in_bots(tmp_path, reference):
    from arena.submissions.validation import reference_bots
    from leaderboards.store import Store
    bots = [{"spec": s} for s in reference] + [{"name": "mine", "file": "mine.py"}]
    write(tmp_path / "mine.py", SEED_TELLER.replace("> 1000", "< 0"))
    config = write(tmp_path / "league.toml", league_toml("ref", seed=5, database="ref.sqlite", bots=bots))
    assert arena(tmp_path, "league", "run", str(config), "-q").returncode == 0
    with Store.open(tmp_path / "ref.sqlite") as store:
        assert reference_bots(store, store.find_league("ref").id) == sorted(reference)
