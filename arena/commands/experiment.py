"""``arena experiment list | show NAME | run NAME [--games N] [--set name=value ...] [--out DIR] ...``."""
from __future__ import annotations

import click

from arena.errors import ConfigError
from games.spec import format_value


@click.group("experiment")
def experiment() -> None:
    """Rerun the studies' experiments and print their tables beside the published numbers."""


@experiment.command("list")
def list_cmd() -> None:
    """List the experiments."""
    from arena.experiments import EXPERIMENTS, get  # start-up: the experiments only for this command

    for name in EXPERIMENTS:
        exp = get(name)
        click.echo(f"{name:22} {exp.title}")


@experiment.command("show")
@click.argument("name")
def show_cmd(name: str) -> None:
    """Show an experiment's parameters and defaults."""
    from arena.experiments import get  # start-up: the experiments only for this command

    exp = get(name)
    click.echo(f"{exp.name}: {exp.title}\nstudy: {exp.study}\n{exp.note}\nparameters (--set name=value):")
    for key, p in exp.params.items():
        default = "/".join(map(str, p.default)) if isinstance(p.default, list) else format_value(p.default)
        click.echo(f"  {key:16} = {default:24} {p.doc}")


def _parse_sets(items: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set needs name=value, not {item!r}")
        out[key.strip()] = value.strip()
    return out


@experiment.command("run")
@click.argument("name")
@click.option("--games", type=int, default=None, help="Games per cell (default: the experiment's feasible size).")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Override a parameter (lists: a/b/c); see `arena experiment show NAME`.")
@click.option("--seed", type=int, default=None, help="Base seed (same seed: same tables, whatever --workers).")
@click.option("--workers", type=int, default=None, help="Worker processes (default: every core).")
@click.option("--out", type=click.Path(file_okay=False), default="experiments-out", show_default=True,
              help="Folder for the CSV, JSON and PNG files (one subfolder per experiment).")
@click.option("--no-plot", is_flag=True, help="Skip the terminal and PNG plots.")
def run_cmd(name: str, games: int | None, sets: tuple[str, ...], seed: int | None, workers: int | None,
            out: str, no_plot: bool) -> None:
    """Run experiment NAME, print its tables with 95% CIs beside the study's, write CSV/JSON/plots."""
    from arena.experiments.pipeline import run_experiment  # start-up: the experiments only for this command

    if games is not None and games < 1:
        raise ConfigError(f"--games must be at least 1, not {games}")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers must be at least 1, not {workers}")
    run_experiment(name, _parse_sets(sets), games=games, seed=seed, workers=workers, out=out, plot=not no_plot)
