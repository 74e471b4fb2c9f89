"""Running one experiment end to end: configure, run on every core, print, write CSV/JSON/plots."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from arena.experiments import get
from arena.experiments.core import Runner, Table
from arena.experiments.output import png_plot, print_tables, terminal_plot, write_csv, write_json
from arena.text import out_console


def run_experiment(name: str, settings: dict[str, str] | None = None, games: int | None = None,
                   seed: int | None = None, workers: int | None = None, out: str | Path | None = None,
                   plot: bool = True, console: Any = None, quiet: bool = False) -> tuple[list[Table], dict]:
    """Runs experiment ``name`` and returns its tables and a summary (params, seconds, files written)."""
    experiment = get(name)
    cfg = experiment.configure(settings, games=games, seed=seed)
    console = console or out_console()
    n_workers = max(1, workers or os.cpu_count() or 1)
    if not quiet:
        console.print(f"[bold]{experiment.name}[/]: {experiment.title}\n  study: {experiment.study}\n"
                      f"  {experiment.note}\n  games per cell: {cfg['games']}, seed {cfg['seed']}, "
                      f"{n_workers} worker(s)")
    started = time.perf_counter()
    with Runner(n_workers) as runner:
        tables = experiment.run(cfg, runner)
    seconds = time.perf_counter() - started
    summary: dict[str, Any] = {"seconds": round(seconds, 3), "workers": n_workers, "files": []}
    if not quiet:
        print_tables(tables, console)
        console.print(f"{experiment.name}: {seconds:.1f} s on {n_workers} worker(s)")
        if plot:
            for table in tables:
                text = terminal_plot(table)
                if text:
                    console.print(text, markup=False, highlight=False)
    if out is not None:
        folder = Path(out) / experiment.name
        folder.mkdir(parents=True, exist_ok=True)
        for table in tables:
            summary["files"].append(str(write_csv(table, folder / f"{table.name}.csv")))
            if plot:
                png = png_plot(table, folder / f"{table.name}.png")
                if png is not None:
                    summary["files"].append(str(png))
        summary["files"].append(str(folder / "results.json"))
        write_json(folder / "results.json", experiment.name, cfg, tables,
                   {"seconds": summary["seconds"], "workers": n_workers, "study": experiment.study})
        if not quiet:
            console.print(f"wrote {len(summary['files'])} files to {folder}/")
    return tables, summary
