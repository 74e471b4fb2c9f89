"""Issue 31 §3, hostile round: a bot that behaves in `arena submit`'s validation games and misbehaves in the league.

Both bots below pass `arena submit` and then crash in their league games (seen: 5 of 6 league games crashed, both
bots on probation), because what a bot sees differs between the two:

- CPU affinity: league workers are pinned to one CPU each when there are as many workers as CPUs (the default
  concurrency), so a league bot's ``os.sched_getaffinity(0)`` is one CPU; `arena submit` plays its validation games
  unpinned, so the bot sees every CPU of the machine.
- the game's seed: a league game's seed is ``arena.league.schedule.game_seed(base_seed, spec, round)``, a plain
  sha256 of the league file's (often default, 0) base seed, and it is a visible game parameter (``nim(seed=...)``,
  colosseum); a validation game's seed is keyed by the league's secret chance key.  A bot that hashes small base
  seeds and rounds recognises every league game and no validation game.

- the same seed, through a league's random openings (``openings = { plies = N }``) in a game without a seed parameter
  (Hex): a league game's opening is ``random_opening(spec, N, game_seed(base_seed, spec, round))``, which the bot
  recomputes (arena's own modules are in the sandbox's view) and finds in its history; a validation game's is not.
- the league's openings file: `arena submit` validates with the stored config, which keeps only the file's name and
  line count (``OpeningBook.to_dict``), so a league with ``openings = { file = ... }`` validates from the initial
  position while every league game starts from a book line: a bot that sees a history at its first move is in the
  league.

Each test asserts the promise of ``arena submit``'s help: a bot that passes validation does not fail its league
games because it could tell them apart (either validation refuses it, or it plays the league cleanly).
"""
from __future__ import annotations

import json
import os

import pytest

from tests.leaderboards.support import arena, write

AFFINITY_TELLER = '''
import os
class Bot:
    def __init__(self, game, seat, seed):
        if len(os.sched_getaffinity(0)) == 1:  # league workers are pinned; `arena submit` is not
            raise RuntimeError("a league game: not playing")

    def step(self, state, limit):
        return state.legal_actions()[0]
'''

SEED_TELLER = '''
import hashlib

def league_seeds(spec):  # arena.league.schedule.game_seed for small base seeds and rounds
    return {int.from_bytes(hashlib.sha256(f"{b}|{spec}|{r}".encode()).digest()[:8], "big") >> 2
            for b in range(0, 1000) for r in range(0, 20)}

class Bot:
    def __init__(self, game, seat, seed):
        if game.param("seed") in league_seeds(str(game).split("(")[0]):
            raise RuntimeError("a league game: not playing")

    def step(self, state, limit):
        return state.legal_actions()[0]
'''

LEAGUE = '''
name = "tells"
games = ["nim"]
seed = 7
concurrency = {concurrency}
database = "tells.sqlite"
probation_after = 0
probation_failures = 0
[limits]
move_time = 1.0
first_move_time = 10.0
[[bots]]
name = "random"
spec = "random"
[[bots]]
name = "greedy"
spec = "greedy"
'''


def _failures_of(tmp_path, name):
    p = arena(tmp_path, "export", "games", "--league", "league.toml", "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    games = data if isinstance(data, list) else data.get("games", [])
    text = [json.dumps(g) for g in games if name in json.dumps(g)]
    assert text, "the bot played no league game"
    return sum(1 for g in text if "a league game: not playing" in g), len(text)


def _submit_then_league(tmp_path, name, source, league=None):
    write(tmp_path / "league.toml", league or LEAGUE.replace("{concurrency}", "2"))
    write(tmp_path / f"{name}.py", source)
    assert arena(tmp_path, "league", "run", "league.toml", "-q").returncode == 0
    p = arena(tmp_path, "submit", f"{name}.py", "--league", "league.toml")
    if p.returncode == 1:  # refused: validation saw what the league shows
        assert "refused" in p.stderr
        return
    assert p.returncode == 0, p.stderr
    assert arena(tmp_path, "league", "run", "league.toml", "-q").returncode == 0
    failed, played = _failures_of(tmp_path, name)
    assert failed == 0, (f"{name} passed validation and then refused to play {failed} of its {played} league games: "
                         "validation and league games can be told apart")


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="league workers are pinned only with 2+ CPUs")
@pytest.mark.slow
def test_affinity_tells_a_league_game_from_validation(tmp_path):
    # as many workers as CPUs (the default concurrency): the runner pins each worker to one CPU
    _submit_then_league(tmp_path, "aff_teller", AFFINITY_TELLER,
                        LEAGUE.replace("{concurrency}", str(len(os.sched_getaffinity(0)))))


@pytest.mark.slow
def test_public_league_seed_tells_a_league_game_from_validation(tmp_path):
    _submit_then_league(tmp_path, "seed_teller", SEED_TELLER)


BOOK_TELLER = '''
class Bot:
    def __init__(self, game, seat, seed):
        self.first = True

    def step(self, state, limit):
        if self.first and len(state.history()) >= 2:  # the game began from the league's opening book
            raise RuntimeError("a league game: not playing")
        self.first = False
        return state.legal_actions()[0]
'''

BOOK_LEAGUE = '''
name = "tells"
games = ["hex(size=5)"]
seed = 3
database = "tells.sqlite"
openings = { file = "book.txt" }
probation_after = 0
probation_failures = 0
[limits]
move_time = 1.0
first_move_time = 10.0
[[bots]]
name = "random"
spec = "random"
[[bots]]
name = "mc"
spec = "mc(n=5)"
'''


@pytest.mark.slow
def test_an_openings_file_tells_a_league_game_from_validation(tmp_path):
    write(tmp_path / "book.txt", "0 1 2 3\n5 6 7 8\n")
    _submit_then_league(tmp_path, "book_teller", BOOK_TELLER, BOOK_LEAGUE)


OPENING_TELLER = '''
import hashlib
from arena.referee.openings import random_opening

def league_openings(spec, plies=6):  # the openings of league games for small base seeds and rounds
    seeds = {int.from_bytes(hashlib.sha256(f"{b}|{spec}|{r}".encode()).digest()[:8], "big") >> 2
             for b in range(0, 50) for r in range(0, 10)}
    return {random_opening(spec, plies, s) for s in seeds}

class Bot:
    def __init__(self, game, seat, seed):
        self.spec, self.first = str(game), True

    def step(self, state, limit):
        if self.first and tuple(state.history()[:6]) in league_openings(self.spec):
            raise RuntimeError("a league game: not playing")
        self.first = False
        return state.legal_actions()[0]
'''


@pytest.mark.slow
def test_random_openings_from_the_public_seed_tell_a_league_game_from_validation(tmp_path):
    # 6 plies: ~1.3e8 openings on a 5x5 board, so the teller's 500 cannot meet a keyed league's by chance (with 3
    # plies, 13,800 openings, they did in ~3.6% of runs: every game of a round shares its opening, all failed at once)
    league = BOOK_LEAGUE.replace('openings = { file = "book.txt" }', "openings = { plies = 6 }")
    _submit_then_league(tmp_path, "open_teller", OPENING_TELLER, league)
