"""Schedules: every pairing, each bot in each seat equally often, duplicate seeds, Sorry! tables."""
from __future__ import annotations

import itertools
from collections import Counter

import pytest

from arena.league.schedule import game_seed, league_schedule, rotations, seat_counts, tables


def test_round_robin_covers_every_pairing_with_seats_balanced():
    bots = [3, 5, 8, 13, 21]
    fixtures = league_schedule([("nim", 2)], {"nim": bots}, 6, base_seed=1)
    pairs = Counter(f.table for f in fixtures)
    assert set(pairs) == set(itertools.combinations(bots, 2)) and set(pairs.values()) == {6}
    for (_game, bot), per_seat in seat_counts(fixtures).items():
        assert per_seat == [12, 12], (bot, per_seat)  # 4 opponents x 6 games, half in each seat
    assert len({f.key for f in fixtures}) == len(fixtures)
    assert [f.key for f in fixtures] == sorted(f.key for f in fixtures)


def test_duplicate_seeds_every_rotation_of_a_pairing_shares_its_seed():
    fixtures = league_schedule([("nim", 2), ("sorry(players=3)", 3)],
                               {"nim": [1, 2, 3], "sorry(players=3)": [1, 2, 3, 4]},
                               6, base_seed=9)
    by_table = {}
    for f in fixtures:
        by_table.setdefault((f.game, f.round, f.table), set()).add(f.seed)
    assert all(len(seeds) == 1 for seeds in by_table.values())
    per_round = {(f.game, f.round): f.seed for f in fixtures}
    assert len(set(per_round.values())) == len(per_round)  # rounds and games differ
    assert per_round[("nim", 0)] == game_seed(9, "nim", 0) != game_seed(10, "nim", 0)
    nim0 = [f for f in fixtures if f.game == "nim" and f.round == 0 and f.table == (1, 2)]
    assert sorted(f.seats for f in nim0) == [(1, 2), (2, 1)]


@pytest.mark.parametrize("k,n", [(3, 5), (4, 6), (4, 4)])
def test_sorry_tables_rotate_every_bot_through_every_seat(k, n):
    bots = list(range(1, n + 1))
    game = f"sorry(players={k})"
    fixtures = league_schedule([(game, k)], {game: bots}, 2 * k, base_seed=4, mode="all")
    tabs = {f.table for f in fixtures}
    assert tabs == set(itertools.combinations(bots, k))
    counts = seat_counts(fixtures)
    per_bot = {bot: counts[(game, bot)] for bot in bots}
    assert len({tuple(v) for v in per_bot.values()}) == 1  # every bot the same
    assert len(set(next(iter(per_bot.values())))) == 1  # every seat the same


def test_balanced_sorry_tables_for_many_bots_give_equal_games_and_seats():
    bots = list(range(1, 21))  # 20 bots: C(20, 4) = 4845 tables would be too many
    game = "sorry(players=4)"
    fixtures = league_schedule([(game, 4)], {game: bots}, 12, base_seed=2)  # auto -> balanced
    rounds = {f.round for f in fixtures}
    assert rounds == {0, 1, 2}
    for r in rounds:
        assert len({f.table for f in fixtures if f.round == r}) == 20  # n windows per round
    counts = seat_counts(fixtures)
    assert {tuple(counts[(game, b)]) for b in bots} == {(12, 12, 12, 12)}  # 3 rounds x 4 tables x 4 rotations / 4
    opponents = Counter()
    for f in fixtures:
        for a, b in itertools.permutations(f.table, 2):
            opponents[(a, b)] += 1
    assert len({b for (a, b) in opponents if a == 1}) >= 8  # opponents vary across rounds


def test_balanced_tables_change_only_around_a_new_bot():
    old = set(tables(list(range(1, 11)), 4, mode="balanced", base_seed=3, round_=0))
    new = set(tables(list(range(1, 12)), 4, mode="balanced", base_seed=3, round_=0))
    assert len(old) == 10 and len(new) == 11
    assert all(11 in t for t in new - old) and len(new - old) == 4 and len(old - new) == 3


def test_adding_a_bot_only_adds_games_that_include_it():
    before = league_schedule([("nim", 2), ("hex", 2)], {"nim": [1, 2, 3], "hex": [1, 2, 3]}, 4, base_seed=0)
    after = league_schedule([("nim", 2), ("hex", 2)], {"nim": [1, 2, 3, 7], "hex": [1, 2, 3, 7]}, 4, base_seed=0)
    old = {f.key: f for f in before}
    added = [f for f in after if f.key not in old]
    assert all(7 in f.table for f in added) and len(added) == 2 * 3 * 4
    assert all(old[f.key] == f for f in after if f.key in old)  # same seeds and seats for existing games


def test_rotations_are_cyclic():
    assert rotations((1, 2, 3)) == [(1, 2, 3), (2, 3, 1), (3, 1, 2)]


@pytest.mark.parametrize("mode", ["auto", "all", "balanced"])
def test_schedules_come_in_key_order_with_keys_that_match_their_fixtures(mode):
    """The schedule is built in key order instead of sorted: check that order and every key on mixed leagues
    (a spec that is a prefix of another, 2-4 seats, bots entered for only some games)."""
    import random

    from arena.league.schedule import fixture_key
    rng = random.Random(mode)
    specs = [("nim", 2), ("nim(n=5)", 2), ("sorry(players=3)", 3), ("sorry(players=4)", 4), ("hex(size=5)", 2)]
    for _ in range(20):
        games = rng.sample(specs, rng.randint(1, len(specs)))
        players = {g: rng.sample(range(1, 60), rng.randint(2, 12)) for g, _ in games}
        fixtures = league_schedule(games, players, 12, rng.randint(0, 99), mode=mode)
        keys = [f.key for f in fixtures]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        assert all(f.key == fixture_key(f.round, f.game, f.table, f.rotation) for f in fixtures)
        assert all(f.seats == rotations(f.table)[f.rotation] for f in fixtures)


def test_missing_fixtures_by_a_merge_with_the_sorted_stored_keys():
    """What a resumed run plays: the fixtures not stored, found in one merge pass; stored keys that are no longer
    scheduled (a retired bot's games) are passed over."""
    import random

    from arena.league.planning import missing
    rng = random.Random(5)
    fixtures = league_schedule([("nim", 2), ("sorry(players=3)", 3)],
                               {"nim": range(1, 9), "sorry(players=3)": range(1, 6)},
                               6, 1)
    for _ in range(50):
        stored = {f.key for f in fixtures if rng.random() < rng.random()}
        stored |= {f"{rng.randint(0, 9):06d}|gone|{rng.randint(0, 99):06d}|0" for _ in range(rng.randint(0, 5))}
        todo = missing(fixtures, sorted(stored))
        assert todo == [f for f in fixtures if f.key not in stored]
