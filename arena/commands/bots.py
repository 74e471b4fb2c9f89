"""``arena bots``: every built-in bot with its parameters and defaults."""
from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

import bots
from arena.text import out_console
from games.spec import format_value


@click.command("bots")
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
def bots_command(as_json: bool) -> None:
    """List every built-in bot with its parameters and defaults."""
    catalogue: list[dict[str, Any]] = []
    for name in bots.bot_names():
        cls, fixed = bots.bot_class(name)
        doc = (cls.__doc__ or "").strip().splitlines()
        catalogue.append({
            "name": name,
            "description": doc[0] if doc else "",
            "fixed": {k: format_value(v) for k, v in fixed.items()},
            "params": {k: {"default": p.default, "valid": p.describe(), "doc": p.doc}
                       for k, p in getattr(cls, "params", {}).items() if k not in fixed},
        })
    if as_json:
        click.echo(json.dumps(catalogue, indent=2, default=str))
        return
    console = out_console()
    for entry in catalogue:
        fixed_text = ", ".join(f"{k}={v}" for k, v in entry["fixed"].items())
        title = f"[bold]{entry['name']}[/]" + (f" (= {fixed_text})" if fixed_text else "") + \
            (f" — {entry['description']}" if entry["description"] else "")
        if not entry["params"]:
            console.print(title + "  [dim](no parameters)[/]")
            continue
        table = Table(title=title, title_justify="left", show_edge=False)
        for col in ("parameter", "default", "valid values", "meaning"):
            table.add_column(col, style="cyan" if col == "parameter" else None)
        for key, p in entry["params"].items():
            table.add_row(key, "(see meaning)" if p["default"] is None else format_value(p["default"]),
                          p["valid"], p["doc"])
        console.print(table)
        console.print()
