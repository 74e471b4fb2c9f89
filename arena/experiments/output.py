"""Showing and saving experiment tables: rich tables beside the published numbers, CSV, JSON, plots.

Terminal plots are drawn here with plain Unicode; PNG plots need ``matplotlib`` (the optional extra
``plots``): without it the PNG is skipped.
"""
from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.experiments.core import Table
from arena.text import out_console

RATE_COLUMNS = ("rate", "lo", "hi", "published", "chance")
VERDICT_STYLE = {"equivalent": "[green]equivalent[/]", "different": "[red]different[/]",
                 "cannot tell": "[yellow]cannot tell[/]"}


def _fmt(table: Table, column: str, value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if table.percent and column in RATE_COLUMNS:
            return f"{value * 100:.1f}%"
        return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.0f}"
    return str(value)


def render(table: Table) -> Any:
    """A rich Table: key columns, then ours with its 95% CI, the study's number, and whether it is inside."""
    from rich.table import Table as RichTable  # start-up: rich only when printing

    shown = [c for c in table.columns if c not in ("lo", "hi", "wins")]
    has_ci = "lo" in table.columns
    out = RichTable(title=table.title, title_justify="left", caption=table.note or None, caption_justify="left")
    for c in shown:
        out.add_column("ours" if c == "rate" else ("study" if c == "published" else c),
                       justify="left" if c in table.columns[:1] else "right")
        if c == "rate" and has_ci:
            out.add_column("95% CI", justify="right")
    if "published" in table.columns and has_ci:
        out.add_column(f"vs study (±{table.margin * 100:g} pts)", justify="center")
    for row in table.rows:
        cells = []
        for c in shown:
            cells.append(_fmt(table, c, row.get(c)))
            if c == "rate" and has_ci:
                cells.append(f"{_fmt(table, 'lo', row.get('lo'))}–{_fmt(table, 'hi', row.get('hi'))}")
        if "published" in table.columns and has_ci:
            cells.append(VERDICT_STYLE.get(row.get("verdict", ""), ""))
        out.add_row(*cells)
    return out


def print_tables(tables: Sequence[Table], console: Any = None) -> None:
    console = console or out_console()
    for table in tables:
        console.print(render(table))
        counts = table.verdicts()
        if sum(counts.values()):
            console.print(f"  against the study's numbers (margin ±{table.margin * 100:g} points; equivalent: our 90% "
                          f"interval inside the margin, TOST at 5%; different: our 95% interval excludes it): "
                          + ", ".join(f"{name} {n}" for name, n in counts.items()) + " cells")
        if any(str(row.get("interval", "")).startswith("cluster") for row in table.rows):
            console.print("  intervals: cluster bootstrap over deals (the games of a deal share a board and "
                          "chance seed, one per seat)")
        console.print()


def write_csv(table: Table, path: Path) -> Path:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=table.columns, extrasaction="ignore")
        writer.writeheader()
        for row in table.rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in table.columns})
    return path


def write_json(path: Path, experiment: str, cfg: dict[str, Any], tables: Sequence[Table],
               extra: dict[str, Any]) -> Path:
    data = {"experiment": experiment, "params": cfg, **extra, "tables": [t.to_dict() for t in tables]}
    path.write_text(json.dumps(data, indent=1, default=str))
    return path


def _series(table: Table) -> tuple[list[str], dict[str, list[float | None]]]:
    """x labels and {series name: y values} of a table's plot spec (missing points are None)."""
    spec = table.plot or {}
    x_col, y_col, s_col = spec["x"], spec.get("y", "rate"), spec.get("series")
    xs: list[str] = []
    for row in table.rows:
        if str(row[x_col]) not in xs:
            xs.append(str(row[x_col]))
    series: dict[str, list[float | None]] = {}
    for row in table.rows:
        name = f"{s_col}={row[s_col]}" if s_col else "ours"
        series.setdefault(name, [None] * len(xs))[xs.index(str(row[x_col]))] = row.get(y_col)
    if "published" in table.columns and y_col == "rate":
        # The study's numbers as their own series ("study" or "study n=1"), drawn dashed in PNGs.
        pubs: dict[str, list[float | None]] = {}
        for row in table.rows:
            name = f"study {s_col}={row[s_col]}" if s_col else "study"
            pubs.setdefault(name, [None] * len(xs))[xs.index(str(row[x_col]))] = row.get("published")
        series.update({k: v for k, v in pubs.items() if any(p is not None for p in v)})
    return xs, series


MARKERS = "●○■□▲△◆◇x+*#"


def terminal_plot(table: Table, height: int = 12) -> str:
    """The table's plot as a text grid: one column per x value, one marker per series, y from 0 to 1 (or
    the data's range when values leave it), with a legend."""
    if not table.plot:
        return ""
    xs, series = _series(table)
    # Per-series study curves would double the markers of a text grid: only a single "study" is drawn.
    series = {k: v for k, v in series.items() if not k.startswith("study ")}
    values = [y for ys in series.values() for y in ys if y is not None]
    if not values:
        return ""
    lo, hi = min(0.0, min(values)), max(1.0, max(values)) if table.percent else max(values)
    span = (hi - lo) or 1.0
    step = max(4, max(len(x) for x in xs) + 1)
    grid = [[" "] * (len(xs) * step) for _ in range(height)]
    for k, ys in enumerate(series.values()):
        for i, y in enumerate(ys):
            if y is not None:
                r = height - 1 - round((y - lo) / span * (height - 1))
                grid[r][i * step + step // 2] = MARKERS[k % len(MARKERS)]
    lines = [table.title]
    for r, cells in enumerate(grid):
        label = hi - r * span / (height - 1)
        lines.append(f"{label * 100 if table.percent else label:7.1f} ┤" + "".join(cells).rstrip())
    lines.append(" " * 8 + "└" + "─" * (len(xs) * step))
    lines.append(" " * 9 + "".join(x.center(step) for x in xs) + f"  ({table.plot['x']})")
    lines.append("  " + "   ".join(f"{MARKERS[k % len(MARKERS)]} {name}" for k, name in enumerate(series)))
    return "\n".join(lines)


def png_plot(table: Table, path: Path) -> Path | None:
    """The table's plot as a PNG (None when matplotlib is not installed)."""
    if not table.plot:
        return None
    try:
        import matplotlib  # optional: matplotlib, for PNG plots only

        matplotlib.use("Agg")
        # optional: matplotlib (the plots extra)
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    xs, series = _series(table)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    idx = list(range(len(xs)))
    colours: dict[str, Any] = {}
    for name, ys in series.items():
        pts = [(i, y) for i, y in zip(idx, ys) if y is not None]
        if not pts:
            continue
        study = name.startswith("study")
        key = name.removeprefix("study").strip() or "ours"
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="x" if study else "o",
                        label=name, linestyle="--" if study else "-", color=colours.get(key))
        colours.setdefault(key, line.get_color())
    ax.set_xticks(idx, xs, rotation=45 if len(xs) > 12 else 0)
    ax.set_xlabel(table.plot["x"])
    ax.set_ylabel(table.plot.get("y", "rate"))
    ax.set_title(table.title, fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
