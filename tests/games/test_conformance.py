"""The conformance check on every game and several parameter sets."""
from __future__ import annotations

import zlib

import pytest

import games
from tests.games.conformance import random_sim_check

# spec -> number of random games (more for fast games; Sorry! games are long).
SPECS = {
    "nim": 2000,
    "nim(n=7,k=2)": 1000,
    "nim(n=40,k=5,coin=true)": 1500,
    "nim(coin=true,seed=9)": 1000,
    "doublestep": 2000,
    "doublestep(length=1)": 500,
    "doublestep(length0=6,length1=9,overshoot=forbid)": 1500,
    "doublestep(length=25,overshoot=pass)": 1000,
    "hex(size=2)": 500,
    "hex(size=5)": 1500,
    "hex(size=7,pie=true)": 1000,
    "hex(size=11)": 300,
    "colosseum(size=5,seed=3)": 1000,
    "colosseum(seed=11)": 1000,
    "colosseum(size=12,seed=5)": 300,
    "sorry(players=2,seed=1)": 150,
    "sorry(players=3,seed=2)": 100,
    "sorry(players=4,seed=3)": 100,
}


@pytest.mark.parametrize("spec", list(SPECS))
def test_random_games_respect_the_state_api(spec: str) -> None:
    game = games.load(spec)
    stats = random_sim_check(game, SPECS[spec], seed=zlib.crc32(spec.encode()))
    assert stats["mean_length"] > 0
