"""``arena bench [SUITE...] [--json] [--quick]``."""
from __future__ import annotations

import json

import click
from rich.table import Table

from arena.bench import SUITES, Record, run_suites
from arena.errors import ConfigError
from arena.text import out_console


@click.command("bench")
@click.argument("suites", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of records instead of a table.")
@click.option("--quick", is_flag=True, help="Fewer repetitions (a smoke run; numbers are noisier).")
@click.option("--full", is_flag=True, help="Issue-size runs where a suite has them (scale: 100,000 games, ~1.5 h).")
def bench(suites: tuple[str, ...], as_json: bool, quick: bool, full: bool) -> None:
    """Run benchmarks side by side with their baselines (suites: games, bots, sandbox, league, scale,
    ratings, server, tournament)."""
    unknown = [s for s in suites if s not in SUITES]
    if unknown:
        raise ConfigError(f"unknown benchmark suite {unknown[0]!r}; valid suites: {', '.join(SUITES)}")
    if quick and full:
        raise ConfigError("--quick and --full exclude each other; pick one")
    records = run_suites(suites or ["games", "bots", "sandbox", "league"], quick=quick, full=full)
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in records], indent=2))
        return
    _print_table(records)
    notes = [r for r in records if r.note]
    if notes:
        click.echo("\n".join(f"{r.suite} / {r.name}: {r.note}" for r in notes))


def _fmt(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _print_table(records: list[Record]) -> None:
    table = Table(title="arena bench (measured side by side in this run)", title_justify="left")
    for col in ("suite", "measurement", "arena", "baseline", "baseline value", "ratio", "target"):
        table.add_column(col, justify="right" if col in ("arena", "baseline value", "ratio", "target") else "left")
    for r in records:
        ok = r.target is None or r.ratio >= r.target
        ratio = f"[{'green' if ok else 'red'}]{r.ratio:.2f}x[/]"
        table.add_row(r.suite, r.name, f"{_fmt(r.value)} {r.unit}", r.baseline, _fmt(r.baseline_value), ratio,
                      "" if r.target is None else f">= {r.target:g}x")
    out_console().print(table)
