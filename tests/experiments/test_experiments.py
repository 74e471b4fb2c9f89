"""arena experiment: the machinery (Wilson, seeds, runner), every experiment end to end at tiny sizes, the
command line, and statistical checks that headline results of the studies hold."""
from __future__ import annotations

import csv
import json
import math

import pytest

from arena.cli import main as cli_main
from arena.errors import ConfigError
from arena.experiments import EXPERIMENTS, get
from arena.experiments.core import Runner, Table, chunks, cluster_interval, derive_seed, verdict, wilson
from arena.experiments.pipeline import run_experiment

# Tiny settings per experiment (each a few seconds at most).
TINY: dict[str, dict[str, str]] = {
    "doublestep-laziness": {"games": "40", "n": "1/4", "lanes": "5/6/7"},
    "doublestep-mc": {"games": "40", "hmc_games": "2", "n": "1/2", "decision_games": "2",
                      "hmc_decision_games": "1", "board": "12"},
    "hex-mc": {"games": "2", "n": "5/10", "boards": "2", "noise_n": "20/40", "repeats": "2"},
    "nim-mcts": {"games": "3", "iterations": "50"},
    "colosseum-uct": {"games": "1", "iterations": "2", "sims": "2/3", "size": "6"},
    "sorry-determinized": {"games": "1", "grid": "1.4:2:8/3:1.4:2:8"},
    "uct-defaults": {"games": "2", "move_time": "0.005", "size": "4", "opponents": "mc"},
}
# Expected (table name, rows) at the TINY sizes.
SHAPES: dict[str, dict[str, int]] = {
    "doublestep-laziness": {"laziness": 6},
    "doublestep-mc": {"table2": 2, "table3": 4, "table4": 2, "table5": 2, "table6": 2, "table7": 16},
    "hex-mc": {"first_player": 2, "noise": 4},
    "nim-mcts": {"matchups": 5},
    "colosseum-uct": {"variants": 2, "sims_per_leaf": 2},
    "sorry-determinized": {"grid": 2},
    "uct-defaults": {"configurations": 2},
}


# ----- Wilson interval, by hand from the formula ------------------------------------------------------------------
def test_wilson_matches_hand_computation() -> None:
    # 8 of 10, z = 1.96: centre = (0.8 + 0.19208) / 1.38416 = 0.716737; half = 1.96 / 1.38416 *
    # sqrt(0.016 + 0.009604) = 1.416021 * 0.160012 = 0.226580 -> (0.490157, 0.943317)
    # (the usual textbook value for 8/10 is 0.490-0.943)
    lo, hi = wilson(8, 10, z=1.96)
    assert lo == pytest.approx(0.490157, abs=2e-5)
    assert hi == pytest.approx(0.943317, abs=2e-5)
    # 50 of 100: centre 0.5, half = 1.96 / 1.038416 * sqrt(0.0025 + 0.00009604) = 1.887500 * 0.050951
    lo, hi = wilson(50, 100, z=1.96)
    assert (lo, hi) == (pytest.approx(0.403830, abs=2e-5), pytest.approx(0.596170, abs=2e-5))


def test_wilson_edges() -> None:
    lo, hi = wilson(0, 20)
    assert lo == 0.0 and 0.1 < hi < 0.2          # 3.84 / 23.84 = 0.161
    lo, hi = wilson(20, 20)
    assert hi == 1.0 and 0.8 < lo < 0.9
    assert wilson(0, 0) == (0.0, 1.0)


def test_seeds_and_chunks() -> None:
    assert derive_seed(1, "a", 2) == derive_seed(1, "a", 2)
    assert derive_seed(1, "a", 2) != derive_seed(1, "a", 3) != derive_seed(2, "a", 2)
    assert 0 <= derive_seed(5, (1, 2)) < 2**63
    assert chunks(10, 4) == [4, 4, 2] and chunks(3, 10) == [3] and sum(chunks(10_001, 1000)) == 10_001


# ----- clustered games and the comparison with the study -----------------------------------------------------------
def test_cluster_bootstrap_widens_only_when_games_are_clustered() -> None:
    # 40 deals of 2 games. Independent-looking deals (one win, one loss each) vary less than Wilson says;
    # perfectly correlated deals (both games won or both lost) carry 40 observations, not 80: wider.
    mixed = [(1.0, 2)] * 40
    lo, hi = cluster_interval(mixed)
    assert lo == hi == 0.5  # every resample is the same
    correlated = [(2.0, 2)] * 20 + [(0.0, 2)] * 20
    lo_c, hi_c = cluster_interval(correlated)
    w_lo, w_hi = wilson(40, 80)
    assert hi_c - lo_c > 1.25 * (w_hi - w_lo)  # about sqrt(2) wider
    assert lo_c < 0.5 < hi_c
    # Singletons are independent games: the bootstrap agrees with Wilson within a few points.
    single = [(1.0, 1)] * 30 + [(0.0, 1)] * 50
    lo_s, hi_s = cluster_interval(single)
    w_lo, w_hi = wilson(30, 80)
    assert abs(lo_s - w_lo) < 0.03 and abs(hi_s - w_hi) < 0.03
    assert cluster_interval(single, seed=1) == cluster_interval(single, seed=1)  # seeded
    assert cluster_interval([(1.0, 2)]) == (0.0, 1.0)


def test_verdicts_count_cannot_tell_apart_from_equivalent() -> None:
    t = Table("t", "t", ["x", "games", "wins", "rate", "lo", "hi", "published"], margin=0.05)
    small = t.add(3, 4, 0.575, x="4 games")          # the study's number inside a 4-game interval ...
    assert small["lo"] <= 0.575 <= small["hi"] and small["verdict"] == "cannot tell"  # ... is not agreement
    big = t.add(5750, 10_000, 0.56, x="10,000 games")  # 1.5 points off, 90% interval +-0.8 points
    assert big["verdict"] == "equivalent"
    off = t.add(6500, 10_000, 0.56, x="off by 9 points")
    assert off["verdict"] == "different"
    wide_off = t.add(90, 100, 0.56, x="100 games, 34 points off")
    assert wide_off["verdict"] == "different"
    assert t.verdicts() == {"equivalent": 1, "different": 2, "cannot tell": 1}
    # The old count was the other way round: the 4-game row "inside", the 10,000-game row 1.5 points off "out".
    assert t.agreement() == (1, 4)
    row = {"lo": 0.40, "hi": 0.60, "lo90": 0.52, "hi90": 0.58}
    assert verdict(row, 0.55, 0.05) == "equivalent" and verdict(row, 0.55, 0.02) == "cannot tell"


def _record_seats(monkeypatch) -> list[tuple]:
    """Patches arena.referee.loop.play to record (game, chance seed, each seat's bot class and reuse flag)."""
    import importlib

    module = importlib.import_module("arena.referee.loop")  # the package's ``arena.play`` attribute is the function
    seen: list[tuple] = []
    real = module.play

    def recording(game, players, seed=0, **kw):
        seen.append((str(game), seed, tuple((type(p).__name__, getattr(p, "reuse", None),
                                             getattr(p, "sims_per_leaf", None)) for p in players)))
        return real(game, players, seed=seed, **kw)

    monkeypatch.setattr(module, "play", recording)
    return seen


def test_sorry_rotates_the_mcts_through_every_seat_on_the_same_deal(monkeypatch) -> None:
    seen = _record_seats(monkeypatch)
    tables, _ = run_experiment("sorry-determinized", {"games": "3", "grid": "3:1.4:2:4", "players": "3"},
                               workers=1, quiet=True)
    assert tables[0].rows[0]["games"] == 3 and len(seen) == 3
    seats = [next(i for i, p in enumerate(players) if p[0] == "DeterminizedBot") for _, _, players in seen]
    assert sorted(seats) == [0, 1, 2]  # every seat once
    assert len({(game, seed) for game, seed, _ in seen}) == 1  # one deal: the same set-up and chance seed


def test_colosseum_rotates_seats_and_reuses_trees_like_the_study(monkeypatch) -> None:
    seen = _record_seats(monkeypatch)
    run_experiment("colosseum-uct", {"games": "2", "iterations": "2", "sims": "2", "size": "6"}, workers=1,
                   quiet=True)
    assert len(seen) == 3 * 2  # annealed, reuse, sims=2: one deal of 2 games each
    for i in range(0, 6, 2):
        first, second = seen[i], seen[i + 1]
        assert first[:2] == second[:2]  # the same board and chance seed
        assert first[2] == second[2][::-1]  # the agents swapped seats
    reuse_flags = [flag for _, _, players in seen for _, flag, _ in players]
    assert reuse_flags.count(False) == 2  # only the "no reuse" side of the reuse match-up (2 games)
    assert all(spl in (2, 3, 11) for _, _, players in seen for _, _, spl in players)


# ----- every experiment end to end --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_experiment_end_to_end(name: str, tmp_path) -> None:
    tables, _summary = run_experiment(name, TINY[name], workers=1, out=tmp_path, plot=True, quiet=True)
    shapes = {t.name: len(t.rows) for t in tables}
    for table_name, rows in SHAPES[name].items():
        assert shapes.get(table_name) == rows, (table_name, shapes)
    folder = tmp_path / name
    data = json.loads((folder / "results.json").read_text())
    assert data["experiment"] == name and len(data["tables"]) == len(tables)
    for table in tables:
        with open(folder / f"{table.name}.csv") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == len(table.rows)
        assert list(rows[0]) == table.columns if rows else True
        for row in table.rows:
            if "rate" in row:
                assert 0.0 <= row["lo"] <= row["rate"] <= row["hi"] <= 1.0
                assert row["games"] > 0


def test_results_do_not_depend_on_workers() -> None:
    settings = {"games": "2500", "n": "1/8", "lanes": "5/6"}  # 3 tasks per cell
    one, _ = run_experiment("doublestep-laziness", settings, workers=1, quiet=True)
    two, _ = run_experiment("doublestep-laziness", settings, workers=2, quiet=True)
    assert [t.rows for t in one] == [t.rows for t in two]
    settings = {"games": "4", "iterations": "30", "matchups": "mcts-vs-random/reuse-vs-mcts"}
    one, _ = run_experiment("nim-mcts", settings, workers=1, quiet=True)
    two, _ = run_experiment("nim-mcts", settings, workers=2, quiet=True)
    assert [t.rows for t in one] == [t.rows for t in two]


def test_runner_keeps_order() -> None:
    with Runner(2) as runner:
        assert runner.map(pow, [(2, i) for i in range(20)]) == [2**i for i in range(20)]


# ----- parameters and the command line ----------------------------------------------------------------------------
def test_unknown_parameter_and_bad_values() -> None:
    exp = get("doublestep-laziness")
    with pytest.raises(ConfigError, match="unknown parameter 'bogus'.*valid parameters: games, seed, n"):
        exp.configure({"bogus": "1"})
    with pytest.raises(ConfigError, match="tie_break.*one of random, first, last"):
        exp.configure({"tie_break": "middle"})
    with pytest.raises(ConfigError, match="'n'"):
        exp.configure({"n": "1/x"})
    with pytest.raises(ConfigError, match="unknown experiment 'chess'; valid experiments: doublestep-laziness"):
        get("chess")
    cfg = exp.configure({"n": "1-3", "lanes": "4/6"}, games=7, seed=3)
    assert cfg["n"] == [1, 2, 3] and cfg["lanes"] == [4, 6] and cfg["games"] == 7 and cfg["seed"] == 3


def test_cli_errors_are_one_line_exit_2(capsys) -> None:
    for args, text in ((["run", "doublestep-laziness", "--set", "bogus=1"], "unknown parameter 'bogus'"),
                       (["run", "nope"], "unknown experiment 'nope'"),
                       (["run", "doublestep-laziness", "--set", "novalue"], "--set needs name=value"),
                       (["run", "doublestep-laziness", "--games", "0"], "--games must be at least 1")):
        with pytest.raises(SystemExit) as exit_info:
            cli_main(["experiment", *args])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert text in err and len(err.strip().splitlines()) == 1, err


def test_cli_list_show_and_run(tmp_path, capsys) -> None:
    cli_main(["experiment", "list"])
    listed = capsys.readouterr().out
    assert all(name in listed for name in EXPERIMENTS)
    cli_main(["experiment", "show", "doublestep-mc"])
    shown = capsys.readouterr().out
    assert "tie_break" in shown and "last" in shown
    cli_main(["experiment", "run", "doublestep-laziness", "--games", "50", "--set", "n=2", "--set", "lanes=6",
              "--workers", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "6v6" in out and "95% CI" in out and "69.7%" in out  # the study's 6970 of 10,000
    assert (tmp_path / "doublestep-laziness" / "laziness.csv").exists()


# ----- headline results hold (fixed seeds, tolerances from the binomial sd) --------------------------------------
def _rate(tables, name: str, **key) -> tuple[float, int]:
    table = next(t for t in tables if t.name == name)
    row = next(r for r in table.rows if all(r[k] == v for k, v in key.items()))
    return row["rate"], row["games"]


def test_mc_beats_random_on_double_step() -> None:
    tables, _ = run_experiment("doublestep-mc", {"games": "400", "n": "1/16", "tables": "2"}, workers=1, quiet=True)
    for n in (1, 16):
        rate, games = _rate(tables, "table2", n=n)
        assert rate > 0.5 + 4 * 0.5 / math.sqrt(games)   # far above a coin flip (the study: 97.7%)


def test_althofer_laziness_shape() -> None:
    # Laziness: with more playouts MC loses more of the hopeless 6v4 race and wins more of the close 6v5 one.
    tables, _ = run_experiment("doublestep-laziness", {"games": "2000", "n": "1/32", "lanes": "4/5"},
                               workers=1, quiet=True)
    sd = 0.5 / math.sqrt(2000)
    r1_4, _ = _rate(tables, "laziness", n=1, lanes="6v4")
    r32_4, _ = _rate(tables, "laziness", n=32, lanes="6v4")
    r1_5, _ = _rate(tables, "laziness", n=1, lanes="6v5")
    r32_5, _ = _rate(tables, "laziness", n=32, lanes="6v5")
    assert r1_4 - r32_4 > 4 * sd * math.sqrt(2)
    assert r32_5 - r1_5 > 4 * sd * math.sqrt(2)
    # The study's 6v5, n=1 cell (48.05%) lies within 4 sd of ours.
    assert abs(r1_5 - 0.4805) < 4 * sd


# ----- the Nim study's strategic MCTS (greedy for its own moves only) --------------------------------------------
def test_study_strategic_playouts_are_greedy_for_the_searching_player_only() -> None:
    import games
    from arena.experiments.nim_study_mcts import StudyNimMCTS

    game = games.load("nim(n=5,k=3)")

    def wins(policy: str, to_move: int) -> int:  # playouts from pile 5; the searching player is seat 0
        bot = StudyNimMCTS(game, 0, seed=1, policy=policy)
        return sum(bot._playout(5, to_move, 3, me=0) == 0 for _ in range(400))

    # Seat 0 to move at 5 wins by taking 1: greedy for itself, it wins every playout under "own" and "both".
    assert wins("own", 0) == wins("both", 0) == 400
    # Seat 1 to move at 5: greedy seat 1 ("both") always wins; a random seat 1 ("own") errs 2 times in 3
    # (only taking 1 wins) and seat 0 then takes the rest, so seat 0 wins about 77% (2/3 + 1/3 x 0.3):
    # the study's playouts are optimistic for the searching player, not exact. Seeded.
    assert wins("both", 1) == 0
    assert 0.67 * 400 < wins("own", 1) < 0.87 * 400
    assert 0 < wins("random", 0) < 400


def test_study_strategic_search_finds_the_winning_move_and_is_opt_in() -> None:
    import games
    from arena.experiments.nim_mcts import DEFAULT_MATCHUPS, MATCHUPS
    from arena.experiments.nim_study_mcts import StudyNimMCTS

    state = games.load("nim(n=23,k=3)").new_initial_state()
    assert StudyNimMCTS(state.game, 0, seed=3, iterations=2000, policy="both").step(state) == 3
    assert "study-strategic-vs-mcts" in [m[0] for m in MATCHUPS]
    assert "study-strategic-vs-mcts" not in DEFAULT_MATCHUPS == get("nim-mcts").configure()["matchups"]
    with pytest.raises(ValueError, match="policy must be one of random, own, both"):
        StudyNimMCTS(state.game, 0, seed=3, policy="greedy")
