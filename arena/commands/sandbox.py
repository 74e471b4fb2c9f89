"""``arena sandbox check``: which sandbox layers are active here, and whether bot files may run."""
from __future__ import annotations

import json
import sys
import time

import click
from rich.markup import escape
from rich.table import Table

from arena.text import out_console


@click.group("sandbox")
def sandbox() -> None:
    """Inspect the sandbox for untrusted bot code."""


def live_probe() -> dict[str, object]:
    """Starts one sandboxed built-in bot and reports what it saw (uid, layers) and how long it took."""
    from arena.limits import Limits  # start-up: pydantic only when limits are built
    from arena.referee.sandboxed import play_game
    t0 = time.perf_counter()
    record = play_game("nim", ["random", "random"], seed=1, limits=Limits(move_time=2, first_move_time=10))
    return {"ok": all(t == "normal" for t in record.terminations), "bot_uids": record.info.get("bot_uids"),
            "game_seconds": round(time.perf_counter() - t0, 3), "terminations": record.terminations}


@sandbox.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--no-live", is_flag=True, help="Skip starting a sandboxed bot (report the probes only).")
def check_command(as_json: bool, no_live: bool) -> None:
    """Print the layer report: each layer active or missing, mandatory or not.

    The live probe also imports every module of the packages bots may import (numpy and the rest, each extension
    module) inside a sandboxed bot. Exit status 1 when a mandatory layer is missing (bot files are then refused
    without --trusted) or when a module that loads outside the sandbox cannot load inside it.
    """
    from dataclasses import asdict

    # start-up: the sandbox's probes only for this command
    from arena.referee import import_probe
    from arena.sandbox import check, join_latency
    layers = check.report()
    missing = check.missing_mandatory()
    live = None if no_live else live_probe()
    loaded = None if no_live else import_probe.probe()
    join_ms = None if no_live else join_latency.measure()
    tuning = join_latency.advice(join_ms)
    if as_json:
        click.echo(json.dumps({"layers": [l.to_dict() for l in layers], "missing_mandatory": missing,
                               "bot_files_allowed": not missing, "live": live,
                               "cgroup_join_ms": None if join_ms is None else round(join_ms, 3), "tuning": tuning,
                               "imports": None if loaded is None else asdict(loaded) | {"ok": loaded.ok}}, indent=2))
    else:
        table = Table(title="arena sandbox layers", title_justify="left")
        for col in ("layer", "state", "mandatory", "what it does here"):
            table.add_column(col)
        for l in layers:
            state = "[green]active[/]" if l.active else ("[red]MISSING[/]" if l.mandatory else "[yellow]missing[/]")
            table.add_row(l.name, state, "yes" if l.mandatory else "", l.detail)
        console = out_console()
        console.print(table)
        if live is not None:
            console.print(f"live probe: a sandboxed game {'ran' if live['ok'] else 'FAILED'} "
                          f"(bot uids {live['bot_uids']}, {live['game_seconds']} s)")
        if join_ms is not None:
            console.print(f"a bot's first cgroup join: {join_ms:.2f} ms"
                          + (f" [yellow]speed[/]: {escape(tuning)}" if tuning else " (cheap here)"))
        if loaded is not None:
            console.print(f"[green]imports[/]: {escape(loaded.summary())}" if loaded.ok else
                          f"[red]IMPORTS FAIL[/]: {escape(loaded.summary())}")
        if missing:
            console.print(f"[red]bot files are refused here[/] (missing: {', '.join(missing)}); "
                          "--trusted runs them anyway, for code you trust")
        else:
            console.print("[green]untrusted bot files can run here[/]")
    if missing or (loaded is not None and not loaded.ok):
        sys.exit(1)
