"""The scale benchmark's instruments on tiny sizes: a real league killed with SIGKILL and resumed through the
CLI, a real bot's peak memory in a child process, the plot."""
from __future__ import annotations

from pathlib import Path

import pytest

from arena.bench import scale
from arena.bench.scale_league import league_growth, rss_at
from arena.bench.scale_memory import measure


@pytest.mark.slow
def test_league_growth_kills_the_runner_and_the_resumed_run_completes_the_schedule(tmp_path: Path) -> None:
    result = league_growth(tmp_path / "league", 40, bots=5, kill_at=0.5, interval=0.05)
    assert result["final_games"] == result["scheduled"] >= 40
    assert result["killed_at"] is not None and result["killed_at"] < result["scheduled"]
    assert 0 < result["restart_seconds"] < 60
    assert {s["run"] for s in result["samples"]} <= {1, 2}
    assert any(s["writer_rss"] > 0 for s in result["samples"])
    assert result["final_store_bytes"] > 0
    resumed = rss_at(result["samples"], result["killed_at"], run=2)
    assert resumed["run"] == 2 and resumed["games"] >= result["killed_at"]


def test_bot_memory_child_reports_its_tree_and_peak() -> None:
    search = measure("uct", "hex(size=5)", 0.02)
    baseline = measure("random", "hex(size=5)", 0.02)
    assert search["nodes"] > 0 and search["node_bytes"] == 32
    assert baseline["nodes"] == 0
    assert search["peak_rss"] > 0 and baseline["peak_rss"] > 0
    assert search["moves"] > 0 and len(search["returns"]) == 2


def test_plot_draws_the_growth_figure(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plots extra is not installed")
    samples = [{"games": g, "writer_rss": 50 * scale.MB, "workers_rss": 0, "store_bytes": g * 2000, "run": 1 + (g > 80)}
               for g in range(0, 100, 10)]
    raw = {"league": {"big": {"samples": samples}}, "schedule": {25: {"seconds": 0.01}, 200: {"seconds": 0.5}}}
    out = scale.plot(raw, tmp_path / "scale.png")
    assert out is not None and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
