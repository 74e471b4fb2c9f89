"""Adaptive schedules (issue 17 §5): the planner on simulated leagues of known strengths, and a real adaptive league
that stops early, records every decision in the store and resumes."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from arena.bench.ratings import adaptive_trial
from arena.league.adaptive import Planner, StopRule
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
