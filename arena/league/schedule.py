"""League schedules: which bots meet, in which seats, with which seed (docs/leagues.md).

- **Tables.** A 2-player game pairs every two bots (round robin). A k-player game (Sorry! with 3-4
  players) plays tables of k bots: every combination while that is small (``tables="all"``), or a
  balanced subset (``tables="balanced"``): each round the bots are put in a cyclic order (sorted by a
  hash of the base seed, the round and the bot id) and every window of k consecutive bots in that
  order is a table. Every bot then sits at exactly k tables per round (same number of games for all),
  opponents vary from round to round, and entering one more bot changes only the k-1 windows around
  it. ``auto`` uses all combinations when there are at most ``k * n`` of them.
- **Seat rotation.** Every table is played once per cyclic rotation of its seats in each round, so
  each bot plays each seat equally often.
- **Duplicate seeds.** All games of one game spec in one round share one seed (derived from the base
  seed, the spec and the round): every rotation of every table sees the same Nim pile, Colosseum
  board and card sequence, so luck cancels out.
- **Gauntlets.** With ``challengers`` only the tables with at least one challenger are played: each challenger
  meets every other bot, the field does not play itself (testing a new version against a pool).
- **Keys.** A fixture's key ``RRRRRR|spec|bot.bot...|rotation`` is unique in its league and sorts in
  schedule order (round first). The store refuses a second game with the same key, and ratings are
  computed in key order, so completion order (concurrency, crashes, resumes) never changes them.
"""
from __future__ import annotations

import gc
import hashlib
import hmac
import itertools
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import NamedTuple

from games.seeding import splitmix64


class Fixture(NamedTuple):
    """One scheduled game (a named tuple: a 200-bot league has hundreds of thousands of them)."""

    key: str
    """Unique in the league; sorts in schedule order."""
    game: str
    """The league's game spec (the referee sets its seed parameter)."""
    round: int
    table: tuple[int, ...]
    """The bots at the table (ids, ascending)."""
    rotation: int
    seats: tuple[int, ...]
    """Bot id per seat: ``table`` rotated left by ``rotation``."""
    seed: int


def game_seed(base_seed: int, game: str, round_: int) -> int:
    """The duplicate seed shared by every game of ``game`` in ``round_`` (0 .. 2**62-1)."""
    digest = hashlib.sha256(f"{base_seed}|{game}|{round_}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 2


def keyed_seed(key: bytes, seed: int) -> int:
    """The seed a game of a keyed league is played with (0 .. 2**62-1): ``seed`` (:func:`game_seed`, which anyone
    who knows the league file's seed can compute) under the league's secret chance key, so a bot cannot tell a
    league game from a validation game by its seed (validation draws its seeds from the same key). The same
    ``seed`` gives the same keyed seed: duplicate seeds stay duplicates."""
    digest = hmac.new(key, f"game-seed|{seed}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 2


def fixture_key(round_: int, game: str, table: Sequence[int], rotation: int) -> str:
    return f"{round_:06d}|{game}|{'.'.join(f'{b:06d}' for b in table)}|{rotation}"


def rotations(table: Sequence[int]) -> list[tuple[int, ...]]:
    """Every cyclic rotation of a table's seats: each bot sits in each seat once."""
    table = tuple(table)
    return [table[r:] + table[:r] for r in range(len(table))]


def tables(bots: Sequence[int], k: int, *, mode: str = "auto", base_seed: int = 0,
           round_: int = 0) -> list[tuple[int, ...]]:
    """The tables of k bots (ids ascending within a table) for one round."""
    ids = sorted(set(bots))
    n = len(ids)
    if n < k:
        return []
    if k == 2 or mode == "all" or (mode == "auto" and math.comb(n, k) <= k * n) or n == k:
        return list(itertools.combinations(ids, k))
    order = sorted(ids, key=lambda b: (splitmix64((base_seed * 1_000_003 + round_) * 1_000_003 + b), b))
    return sorted({tuple(sorted(order[(i + j) % n] for j in range(k))) for i in range(n)})


def league_schedule(games: Sequence[tuple[str, int]], players: Mapping[str, Sequence[int]], games_per_pairing: int,
                    base_seed: int, *, mode: str = "auto", challengers: Collection[int] | None = None) -> list[Fixture]:
    """Every fixture of a league, in key order.

    Args:
        games: (game spec, seats) pairs.
        players: game spec -> ids of the bots that play it.
        games_per_pairing: games per table and game spec (a multiple of the seats).
        base_seed: the league's seed.
        mode: how tables of 3-4 player games are chosen (``auto``, ``all``, ``balanced``).
        challengers: a gauntlet's bots under test (None: a round robin).
    """
    paused = gc.isenabled()
    # 100,000s of new tuples and no cycles: collections would traverse them again and again (half the time)
    gc.disable()
    try:
        return _build(games, players, games_per_pairing, base_seed, mode,
                      None if challengers is None else frozenset(challengers))
    finally:
        if paused:
            gc.enable()


def _build(games: Sequence[tuple[str, int]], players: Mapping[str, Sequence[int]], games_per_pairing: int,
           base_seed: int, mode: str, challengers: frozenset[int] | None) -> list[Fixture]:
    fixtures: list[Fixture] = []
    # Built in key order (round, then game spec, then table, then rotation), so no sort of 100,000s of keys:
    # a spec sorts by its text followed by the key's "|"; tables come ascending (ids are zero-padded).
    order = sorted(games, key=lambda gk: gk[0] + "|")
    ids = {game: sorted(set(players.get(game, ()))) for game, _ in order}
    padded = {b: f"{b:06d}" for game_ids in ids.values() for b in game_ids}
    seen: dict[tuple[int, ...], tuple[str, list[tuple[int, ...]]]] = {}  # table -> (its key part, rotations)
    make = tuple.__new__  # the named tuple's own __new__ costs a Python call per fixture
    for round_ in range(max((games_per_pairing // k for _, k in order), default=0)):
        for game, k in order:
            if round_ >= games_per_pairing // k:
                continue
            seed = game_seed(base_seed, game, round_)
            prefix = f"{round_:06d}|{game}|"
            for table in tables(ids[game], k, mode=mode, base_seed=base_seed, round_=round_):
                if challengers is not None and challengers.isdisjoint(table):
                    continue  # a gauntlet: the field does not play itself
                known = seen.get(table)
                if known is None:  # round robin tables repeat every round: build their strings once
                    known = seen[table] = (".".join(padded[b] for b in table) + "|", rotations(table))
                stem = prefix + known[0]
                for rotation, seats in enumerate(known[1]):
                    fixtures.append(make(Fixture, (f"{stem}{rotation}", game, round_, table, rotation, seats, seed)))
    return fixtures


def seat_counts(fixtures: Iterable[Fixture]) -> dict[tuple[str, int], list[int]]:
    """(game, bot) -> games played in each seat (for fairness checks)."""
    counts: dict[tuple[str, int], list[int]] = {}
    for f in fixtures:
        for seat, bot in enumerate(f.seats):
            counts.setdefault((f.game, bot), [0] * len(f.seats))[seat] += 1
    return counts
