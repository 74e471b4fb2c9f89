"""Adaptive schedules (issue 17 §5): the planner on simulated leagues of known strengths, and a real adaptive league
that stops early, records every decision in the store and resumes."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from arena.bench.ratings import adaptive_trial
from arena.league.adaptive import Planner, StopRule
from arena.league.schedule import Fixture, league_schedule
from leaderboards.store import Store
from tests.leaderboards.support import arena, write


def test_a_simulated_league_finds_its_top_set_with_a_fraction_of_the_games() -> None:
    """40 bots 60 Elo apart, top 5 at 0.95, 10 games a pairing at most: over 40 seeded trials every run that stopped
    for certainty is right, and at least 80% of them are (a run that used up its close pairings' games stops on what it
    has: that is where the misses are), with under a fifth of the full round robin's games. Forty trials, not ten: a
    change to the samples' stream moved ten trials' count from 8 to 7 while forty's went from 34 to 36."""
    runs = [adaptive_trial(seed, bots=40, top=5, rounds=5, spread=60.0) for seed in range(40)]
    assert all(r["correct"] for r in runs if r["certain"])
    assert sum(r["correct"] for r in runs) >= 32
    assert np.mean([r["games"] for r in runs]) < 0.2 * runs[0]["full_games"] == 0.2 * math.comb(40, 2) * 10


def test_the_planner_stops_only_when_certain_or_out_of_useful_games() -> None:
    bots = list(range(6))
    planner = Planner(bots, StopRule(top=1, confidence=0.95), rounds_per_pairing=1)
    first = planner.decide(0, {}, {}, 0)
    assert not first.stop and first.pairs and first.reason.startswith("first batch")
    even = {(a, b): (1.0, 1.0) for a in bots for b in bots if a < b}  # every pairing split its two games
    done = planner.decide(1, even, {pair: 1 for pair in even}, 30)
    assert done.stop and "full round robin" in done.reason and done.certainty < 0.95  # no game left, not certain
    lopsided = {(a, b): (0.0, 10.0) if b == 5 else (1.0, 1.0) for a in bots for b in bots if a < b}
    decided = Planner(bots, StopRule(top=1, confidence=0.95), rounds_per_pairing=50).decide(1, lopsided, {}, 70)
    assert decided.stop and decided.top == [5] and decided.certainty >= 0.95



def test_a_decision_depends_only_on_the_games_not_on_the_batches_decided_before() -> None:
    """A resumed league's planner is new: it must decide what the running one decided from the same games (the
    stop above all), so the sampled certainty may not hang on how many batches this planner decided before."""
    bots = list(range(6))
    rule = StopRule(top=1, confidence=0.9)
    results = {(a, b): (2.0, 0.0) if a == 0 else (1.0, 1.0) for a in bots for b in bots if a < b}
    played = {pair: 1 for pair in results}
    running = Planner(bots, rule, rounds_per_pairing=3, seed=3)
    running.decide(0, {}, {}, 0)
    running.decide(1, {(0, 1): (1.0, 1.0)}, {(0, 1): 1}, 2)
    decided = running.decide(2, results, played, 30)
    resumed = Planner(bots, rule, rounds_per_pairing=3, seed=3).decide(3, results, played, 30)
    assert 0 < decided.certainty < 1
    assert (resumed.certainty, resumed.stop, resumed.pairs, resumed.top) == \
        (decided.certainty, decided.stop, decided.pairs, decided.top)
    other_seed = Planner(bots, rule, rounds_per_pairing=3, seed=4).decide(2, results, played, 30)
    assert other_seed.certainty != decided.certainty  # the samples are the seed's, not fixed


class FakeStore:
    """What ``league_batches`` reads and writes of a store: outcomes in key order, and the decisions."""

    def __init__(self) -> None:
        self.games: dict[str, tuple[list[int], list[float]]] = {}
        self.decided: list[dict[str, object]] = []

    def outcomes(self, league_id: int) -> list[tuple[str, list[int], list[float]]]:
        return [(k, *self.games[k]) for k in sorted(self.games)]

    def decisions(self, league_id: int) -> list[dict[str, object]]:
        return self.decided

    def record_decision(self, league_id: int, decision: dict[str, object]) -> None:
        self.decided.append(decision)

    def play(self, fixtures: list[Fixture], strength: dict[int, int]) -> None:
        for f in fixtures:  # the stronger bot wins (equal: the first seat)
            first = strength[f.seats[0]] >= strength[f.seats[1]]
            self.games[f.key] = (list(f.seats), [1.0, -1.0] if first else [-1.0, 1.0])


def adaptive_run(store: FakeStore, todo: list[Fixture], strength: dict[int, int], never: frozenset[int] = frozenset(),
                 most: int = 100) -> list[str]:
    """Plays an adaptive run to its end (fixtures of a bot in ``never`` are handed out but never stored, as a
    skipped or failed game); returns the keys of the fixtures it handed out."""
    from types import SimpleNamespace

    from arena.league.adaptive import league_batches
    config = SimpleNamespace(stop={"top": 1, "confidence": 0.99}, games_per_pairing=6, seed=3)
    handed: list[str] = []
    for batch, fixtures in enumerate(league_batches(store, 1, config, todo)):
        assert batch < most, "the run never ends"
        handed += [f.key for f in fixtures]
        store.play([f for f in fixtures if not set(f.seats) & never], strength)
    return handed


def test_a_bot_left_out_of_the_schedule_closes_its_pairings_and_the_run_ends_with_its_decision() -> None:
    """A bot on probation or retired has stored games but no fixture left: its pairings are closed. (They were
    counted open: every decision chose them, a batch shrank to the pairings that could play, and the run ended
    without a stop once only such pairings were chosen.)"""
    every = league_schedule([("nim", 2)], {"nim": [1, 2, 3, 4]}, 6, 3)
    store = FakeStore()
    strength = {1: 3, 2: 2, 3: 1, 4: 0}
    store.play([f for f in every if f.round == 0 and 4 in f.table], strength)  # bot 4 played, then left
    todo = [f for f in every if 4 not in f.table]
    adaptive_run(store, todo, strength)
    assert store.decided and store.decided[-1]["stop"], store.decided[-1:]
    assert not any(4 in pair for d in store.decided for pair in d["pairs"])


def test_a_game_that_is_never_stored_is_not_handed_out_again_in_the_run_and_a_resume_tries_it() -> None:
    every = league_schedule([("nim", 2)], {"nim": [1, 2, 3]}, 6, 3)
    store = FakeStore()
    strength = {1: 2, 2: 1, 3: 0}
    handed = adaptive_run(store, every, strength, never=frozenset({3}))
    assert store.decided[-1]["stop"]
    lost = [k for k in handed if k not in store.games]
    assert lost and len(handed) == len(set(handed))  # bot 3's games were handed out, each once
    todo = [f for f in every if f.key not in store.games]  # the resume: bot 3's games are missing, so tried again
    again = adaptive_run(store, todo, strength)
    assert set(again) & set(lost) and all(k in store.games for k in again)

LEAGUE = """
name = "ad"
games = ["nim"]
bots = ["random", "greedy", "mc(n=3)", "mc(n=30)", "mc(n=100)", {{ name = "random2", spec = "random" }}]
games_per_pairing = 6
seed = 3
database = "ad.sqlite"
schedule = "adaptive"
stop = {{ top = 1, confidence = 0.9 }}
"""


def test_an_adaptive_league_stops_early_records_its_decisions_and_resumes(tmp_path: Path) -> None:
    config = write(tmp_path / "league.toml", LEAGUE.format())
    done = arena(tmp_path, "league", "run", str(config), "--concurrency", "2")
    assert done.returncode == 0, done.stderr
    with Store.open(tmp_path / "ad.sqlite", readonly=True) as store:
        league = store.find_league("ad")
        games = store.count_games(league.id)
        decisions = store.decisions(league.id)
        names = {b.id: b.name for b in store.bots(league.id)}
    assert 0 < games < math.comb(6, 2) * 6  # fewer games than the full round robin
    assert [d["batch"] for d in decisions] == list(range(len(decisions)))
    assert decisions[-1]["stop"] and all(not d["stop"] for d in decisions[:-1])
    assert sum(len(d["pairs"]) for d in decisions) * 2 == games  # each chosen pairing played one round of 2 games
    assert names[decisions[-1]["top"][0]] == "greedy"  # perfect Nim play is the top 1
    again = arena(tmp_path, "league", "run", str(config))
    assert again.returncode == 0, again.stderr
    with Store.open(tmp_path / "ad.sqlite", readonly=True) as store:
        assert store.count_games(league.id) == games  # resumed: the same data, the same stop
        assert len(store.decisions(league.id)) == len(decisions) + 1


def test_a_yield_ends_an_adaptive_run_without_deciding_batches_it_never_played(tmp_path: Path) -> None:
    """`arena serve`'s passes yield to a new bot: an adaptive league stops after the batch in flight, and stores no
    decision (least of all a stop) made from games that were never played (it decided every later batch before)."""
    import threading

    from arena.league import planning, runner
    from arena.league.config import load_config
    from arena.league.summary import RunSummary
    cfg = load_config(write(tmp_path / "league.toml", LEAGUE.format()))
    entered = threading.Event()
    summary = RunSummary(cfg.name, tmp_path / "ad.sqlite")
    with Store.open(tmp_path / "ad.sqlite", create=True) as store:
        runner.run_pass(store, cfg, summary, concurrency=1, snapshots=planning.take_snapshots(cfg),
                        progress=lambda *_: entered.set(), yield_to=entered)  # a bot enters as the first game is stored
        league = store.find_league("ad")
        decisions, games = store.decisions(league.id), store.count_games(league.id)
    assert summary.yielded and games == 1
    assert len(decisions) == 1 and not decisions[0]["stop"], decisions
