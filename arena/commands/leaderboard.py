"""``arena leaderboard [--league NAME] [--db PATH] [--game SPEC] [--h2h] [--all] [--json | --csv]``."""
from __future__ import annotations

import csv
import io
import json
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from arena.errors import ConfigError
from leaderboards.ratings import ALL
from leaderboards.standings import head_to_head, standings
from leaderboards.store import DEFAULT_DB, Store

CSV_FIELDS = ("rank", "bot", "status", "mu", "sigma", "exposed", "games", "wins", "draws", "losses", "timeouts",
              "crashes", "illegal", "memory", "protocol")


@click.command("leaderboard")
@click.option("--league", "league_name", metavar="NAME", help="The league (needed when the store holds several).")
@click.option("--db", default=DEFAULT_DB, show_default=True, metavar="PATH", help="The results store.")
@click.option("--game", "scope", metavar="SPEC", default=None, help="Ratings from one game spec of the league only.")
@click.option("--h2h", is_flag=True, help="Also print the head-to-head matrix (win rates with game counts).")
@click.option("--all", "include_retired", is_flag=True, help="Include retired bot versions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (rows, and the matrix with --h2h).")
@click.option("--csv", "as_csv", is_flag=True, help="Print the table as CSV.")
def leaderboard(league_name: str | None, db: str, scope: str | None, h2h: bool, include_retired: bool,
                as_json: bool, as_csv: bool) -> None:
    """Print a league's TrueSkill leaderboard, ordered by mu - 3 sigma."""
    if as_json and as_csv:
        raise ConfigError("--json and --csv exclude each other; pick one")
    with Store.open(db) as store:
        league = store.find_league(league_name)
        scope = _scope(store, league.id, league.config, scope)
        rows = standings(store, league.id, scope=scope, include_retired=include_retired)
        cells = head_to_head(store, league.id, rows, scope=scope) if h2h else None
        total = store.count_games(league.id)
    if as_json:
        out: dict[str, Any] = {"league": league.name, "scope": scope, "games": total, "bots": rows}
        if cells is not None:
            out["head_to_head"] = cells
        click.echo(json.dumps(out, indent=2))
    elif as_csv:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()} for r in rows)
        click.echo(buf.getvalue(), nl=False)
    else:
        out_console = console()
        print_leaderboard(out_console, league.name, rows, total, scope)
        if cells is not None:
            print_h2h(out_console, rows, cells)


def console() -> Console:
    """stdout; wide when it is not a terminal so piped tables are not truncated."""
    import sys
    return Console() if sys.stdout.isatty() else Console(width=160)


def _scope(store: Store, league_id: int, config: dict[str, Any], scope: str | None) -> str:
    if scope is None:
        return ALL
    from arena.league import match_game
    valid = config.get("games") or [s for s in store.scopes(league_id) if s != ALL]
    spec = match_game(scope, valid)
    if spec is None:
        raise ConfigError(f"game {scope!r} is not in this league; its games: {', '.join(valid)}")
    return spec


def print_leaderboard(console: Console, league: str, rows: list[dict[str, Any]], total: int, scope: str = ALL) -> None:
    """The leaderboard as a rich table."""
    title = f"{league}: {total} games" + ("" if scope == ALL else f", {scope} only")
    table = Table(title=title, title_justify="left")
    for col in ("#", "bot", "mu", "sigma", "mu-3sigma", "games", "W/D/L", "fail", "status"):
        table.add_column(col, justify="left" if col in ("bot", "status", "fail") else "right")
    for r in rows:
        fails = ", ".join(f"{r[k]} {label}" for k, label in (("timeouts", "timeouts"), ("crashes", "crashes"),
                                                                ("illegal", "illegal"), ("memory", "memory"),
                                                                ("protocol", "protocol")) if r[k]) or "-"
        status = {"active": "", "probation": "[red]PROBATION[/]", "retired": "[dim]retired[/]"}[r["status"]]
        table.add_row(str(r["rank"]), r["bot"], f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['exposed']:.2f}",
                      str(r["games"]), f"{r['wins']}/{r['draws']}/{r['losses']}", fails, status)
    console.print(table)
    for r in rows:
        if r["status"] == "probation":
            console.print(f"[red]{r['bot']} is on probation[/]: {r['status_reason']}; it is skipped until "
                          "resubmitted with `arena submit`")


def print_h2h(console: Console, rows: list[dict[str, Any]], cells: list[dict[str, Any]]) -> None:
    """The head-to-head matrix: the row bot's score rate against the column bot (draws count half), with games."""
    table = Table(title="head to head: row's score against column (games)", title_justify="left")
    table.add_column("bot")
    for r in rows:
        table.add_column(r["bot"], justify="right")
    index = {(c["bot"], c["opponent"]): c for c in cells}
    for a in rows:
        values = []
        for b in rows:
            c = index.get((a["bot"], b["bot"]))
            if c is None:
                values.append("[dim]-[/]")
            elif not c["games"]:
                values.append("[dim]0[/]")
            else:
                rate = c["win_rate"]
                colour = "green" if rate > 0.55 else "red" if rate < 0.45 else "yellow"
                values.append(f"[{colour}]{100 * rate:.0f}%[/] ({c['games']})")
        table.add_row(a["bot"], *values)
    console.print(table)
