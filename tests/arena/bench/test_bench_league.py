"""``arena bench league``'s sandboxed file-bot league (issue 26): its records are computed from real runs."""
from __future__ import annotations

import math

import pytest

from arena.bench import league as bench


@pytest.mark.slow
def test_the_sandboxed_league_records_the_runner_s_cost_and_the_serial_fraction(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "FILE_BOTS", 3)  # 3 pairings: 6 and 12 games per run instead of 56 and 112
    runs: list[bench.RunnerCost] = []
    measured = bench.runner_cost

    def kept(config, concurrency):  # type: ignore[no-untyped-def]
        runs.append(measured(config, concurrency))
        return runs[-1]

    monkeypatch.setattr(bench, "runner_cost", kept)
    speed, cost = list(bench.sandboxed(quick=True))
    assert [r.games for r in runs][:2] == [6, 12]  # concurrency 1: the small league, then the big one
    assert all(r.runner_cpu > r.writer_cpu > 0 and r.wall > 0 for r in runs)
    assert speed.unit == "games/s" and speed.value > 0 and speed.baseline_value > 0
    d = cost.details
    assert d is not None and all(isinstance(v, float) and math.isfinite(v) for v in d.values())
    small, big = runs[0], runs[1]
    figures = bench.serial_figures(small, big)  # the record reports the figures of the two concurrency-1 runs
    assert {key: d[key] for key in figures} == figures
    r, g = d["runner_cpu_ms_per_game"], d["game_cost_ms"]
    assert r > 0 and g > 0
    assert d["serial_fraction"] == pytest.approx(r / (r + g))
    s = d["serial_fraction"]
    assert d["amdahl_efficiency_16"] == pytest.approx(1 / (s + (1 - s) / 16) / 16)
    assert cost.value == d["runner_cpu_ms_per_game"] and cost.baseline_value == d["game_cost_ms"]


def cost_of(games: int, runner: float, writer: float, wall: float) -> bench.RunnerCost:
    return bench.RunnerCost(games=games, runner_cpu=runner, writer_cpu=writer, wall=wall)


def test_the_serial_fraction_comes_from_differences_so_one_time_costs_cancel() -> None:
    # 6 games then 12: start-up 1 s of wall and 0.1 s of runner CPU in both; each game 20 ms of wall, 1 ms runner
    d = bench.serial_figures(cost_of(6, 0.106, 0.012, 1.12), cost_of(12, 0.112, 0.018, 1.24))
    assert d["fallback"] == 0.0
    assert d["runner_cpu_ms_per_game"] == pytest.approx(1.0) and d["writer_cpu_ms_per_game"] == pytest.approx(1.0)
    assert d["game_cost_ms"] == pytest.approx(19.0) and d["serial_fraction"] == pytest.approx(1 / 20)


def test_a_difference_lost_in_noise_falls_back_to_the_big_run_s_average_and_says_so() -> None:
    # the loaded machine made the small run slower than the big one: the wall difference is negative
    d = bench.serial_figures(cost_of(6, 0.106, 0.012, 1.60), cost_of(12, 0.112, 0.018, 1.24))
    assert d["fallback"] == 1.0
    assert d["runner_cpu_ms_per_game"] == pytest.approx(0.112 / 12 * 1e3)
    assert d["game_cost_ms"] == pytest.approx((1.24 - 0.112) / 12 * 1e3)
    assert 0 < d["serial_fraction"] < 1


def test_amdahl_s_law() -> None:
    assert bench.amdahl_efficiency(0.0, 16) == 1.0
    assert bench.amdahl_efficiency(1.0, 16) == pytest.approx(1 / 16)
    assert bench.amdahl_efficiency(0.02, 16) == pytest.approx(1 / (0.02 + 0.98 / 16) / 16)
