"""``arena games``: every game with its parameters, defaults and valid values."""
from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table
from rich.text import Text

import games
from arena.text import out_console
from games.spec import format_value


@click.command("games")
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
def games_command(as_json: bool) -> None:
    """List every game with its parameters and defaults."""
    catalogue: list[dict[str, Any]] = []
    for name in games.game_names():
        cls = games.game_class(name)
        catalogue.append({
            "name": name,
            "description": cls.description,
            "players": [cls.min_players, cls.max_players],
            "default_spec": str(games.load(name)),
            "length_rule": cls.length_rule,
            "max_game_length": _bound(name),
            "params": {k: {"default": p.default, "valid": p.describe(), "doc": p.doc} for k, p in cls.params.items()},
        })
    if as_json:
        click.echo(json.dumps(catalogue, indent=2))
        return
    console = out_console()
    for entry in catalogue:
        table = Table(title=f"[bold]{entry['name']}[/] — {entry['description']}", title_justify="left",
                      show_edge=False, expand=False)
        table.add_column("parameter", style="cyan", no_wrap=True)
        table.add_column("default", no_wrap=True)
        table.add_column("valid values")
        table.add_column("meaning")
        for key, p in entry["params"].items():
            default = "(see meaning)" if p["default"] is None else format_value(p["default"])
            table.add_row(key, default, p["valid"], p["doc"])
        console.print(table)
        bound = entry["max_game_length"]
        console.print(Text(f" length: {entry['length_rule']} ({entry['default_spec']}: "
                           f"{'no bound stated' if bound is None else f'at most {bound:,} decisions'}); any game "
                           "also ends as a draw after the league's max_moves or max_game_seconds"))
        console.print()


def _bound(name: str) -> int | None:
    """The default game's ``max_game_length()`` (a game from another package may not state one)."""
    try:
        return int(games.load(name).max_game_length())
    except NotImplementedError:
        return None
