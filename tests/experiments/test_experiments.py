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
from arena.experiments.core import Runner, chunks, derive_seed, wilson
from arena.experiments.runner import run_experiment

# Tiny settings per experiment (each a few seconds at most).
TINY: dict[str, dict[str, str]] = {
    "doublestep-laziness": {"games": "40", "n": "1/4", "lanes": "5/6/7"},
    "doublestep-mc": {"games": "40", "hmc_games": "2", "n": "1/2", "decision_games": "2",
                      "hmc_decision_games": "1", "board": "12"},
    "hex-mc": {"games": "2", "n": "5/10", "boards": "2", "noise_n": "20/40", "repeats": "2"},
    "nim-mcts": {"games": "3", "iterations": "50"},
    "colosseum-uct": {"games": "1", "iterations": "2", "sims": "2/3", "size": "6"},
    "sorry-determinized": {"games": "1", "grid": "1.4:2:8/3:1.4:2:8"},
}
# Expected (table name, rows) at the TINY sizes.
SHAPES: dict[str, dict[str, int]] = {
    "doublestep-laziness": {"laziness": 6},
    "doublestep-mc": {"table2": 2, "table3": 4, "table4": 2, "table5": 2, "table6": 2, "table7": 16},
    "hex-mc": {"first_player": 2, "noise": 4},
    "nim-mcts": {"matchups": 5},
    "colosseum-uct": {"variants": 2, "sims_per_leaf": 2},
    "sorry-determinized": {"grid": 2},
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
