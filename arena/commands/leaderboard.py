"""``arena leaderboard [--league NAME] [--db PATH] [--game SPEC] [--h2h] [--all] [--json | --csv]``."""
from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

import click
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from arena.commands.locate import league_store
from arena.errors import ConfigError
from arena.output.views import H2HCell, Standing
from arena.output.views import leaderboard as leaderboard_view
from arena.results.outcome import COUNTERS
from arena.text import csv_cell, dumps, out_console, shown
from arena.tournament.progress import State, current, places
from leaderboards.elo import ELO_FIELDS
from leaderboards.probation import lift_hint
from leaderboards.ratings import ALL, elo_text
from leaderboards.store import DEFAULT_DB, Store

CSV_FIELDS = ("rank", "bot", "status", "mu", "sigma", "exposed", "games", "wins", "draws", "losses", *COUNTERS,
              "version", "spec", "status_reason")
"""``spec``: a built-in bot's spec or a file bot's entry file; ``status_reason``: why it is on probation or retired;
the failure counters (timeouts, crashes, ...) are :data:`arena.results.outcome.COUNTERS`."""
H2H_CSV_FIELDS = ("bot", "opponent", "games", "wins", "draws", "losses", "win_rate")


@click.command("leaderboard")
@click.option("--league", "league_name", metavar="NAME|FILE",
              help="The league (needed when the store holds several): its name, or its league file (the store is "
                   "then found as `arena league run` finds it).")
@click.option("--db", default=None, metavar="PATH", help="The results store (default: the league file's, else "
              "arena.sqlite).")
@click.option("--game", "scope", metavar="SPEC", default=None, help="Ratings from one game spec of the league only.")
@click.option("--h2h", is_flag=True, help="Also print the head-to-head matrix (win rates with game counts).")
@click.option("--all", "include_retired", is_flag=True, help="Include retired bot versions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (rows, and the matrix with --h2h).")
@click.option("--csv", "as_csv", is_flag=True,
              help="Print the table as CSV (with --h2h: the head-to-head instead, one line per pair of bots).")
def leaderboard(league_name: str | None, db: str | None, scope: str | None, h2h: bool, include_retired: bool,
                as_json: bool, as_csv: bool) -> None:
    """Print a league's TrueSkill leaderboard, ordered by mu - 3 sigma, with each bot's batch Elo, its 95% interval,
    its 95% rank range and its tied group (bots whose intervals overlap; docs/ratings.md)."""
    if as_json and as_csv:
        raise ConfigError("--json and --csv exclude each other; pick one")
    path, league_name = league_store(league_name, db)
    db = str(path)
    with Store.open(db, readonly=True) as store:  # a viewer: never migrates or writes
        league = store.find_league(league_name)
        board = leaderboard_view(store, league, _scope(store, league.id, league.config, scope),
                                 include_retired=include_retired, h2h=h2h)
        tournament = current(store, league.id, league.config)
        labels = {b.id: b.label for b in store.bots(league.id, source=False)} if tournament else {}
    rows, cells = board.rows, board.cells
    if as_json:
        data = board.as_json()
        if tournament is not None:  # a tournament's places come first; the ratings are what its games say besides
            data["tournament"] = {"format": tournament.format, "finished": tournament.finished,
                                  "places": [p.as_json(labels) for p in places(tournament)]}
        click.echo(dumps(data, indent=2))  # ASCII, valid Unicode: names stay exact data, never raw bytes
    elif as_csv and cells is not None:  # one table per CSV: the matrix as pairs (said in --help, docs/leagues.md)
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=H2H_CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: csv_cell(round(v, 4) if isinstance(v, float) else v) for k, v in c.as_json().items()}
                         for c in cells)
        click.echo(buf.getvalue(), nl=False)
    elif as_csv:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS + ELO_FIELDS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: csv_cell(round(v, 4) if isinstance(v, float) else v) for k, v in r.as_json().items()}
                         for r in rows)
        click.echo(buf.getvalue(), nl=False)
    else:
        out_console = console()
        if tournament is not None:
            print_places(out_console, board.league, tournament, labels)
        print_leaderboard(out_console, board.league, rows, board.games, board.scope, relaxed=board.sandbox_relaxed,
                          db=db)
        if cells is not None:
            print_h2h(out_console, rows, cells)


def print_places(console: Console, league: str, state: State, labels: dict[int, str]) -> None:
    """A tournament's places (in progress: its standings so far) above its rating table."""
    swiss = state.format == "swiss"
    columns = [("place", "right"), ("bot", "left"), ("won", "right"), ("drawn", "right"), ("lost", "right")]
    columns += [("points", "right"), ("buchholz", "right"), ("s-b", "right")] if swiss else [("last match", "left")]
    rows = []
    for p in places(state):
        row = [str(p.place) if p.place is not None else "", shown(labels.get(p.bot, str(p.bot))), str(p.won),
               str(p.drawn), str(p.lost)]
        row += [f"{p.points:g}", f"{p.buchholz:g}", f"{p.sonneborn_berger:g}"] if swiss and p.points is not None \
            else [p.last]
        rows.append(row)
    what = state.format.replace("_", " ")
    grid(console, f"{shown(league)}: {what}, " + ("places" if state.finished else "in progress"), columns, rows)


def console() -> Console:
    """stdout; whole tables when it is not a terminal (arena.text.out_console)."""
    return out_console()


def _scope(store: Store, league_id: int, config: dict[str, Any], scope: str | None) -> str:
    if scope is None:
        return ALL
    # start-up: the league schema (pydantic) only when a league file is read
    from arena.league.config import match_game
    valid = config.get("games") or [s for s in store.scopes(league_id) if s != ALL]
    spec = match_game(scope, valid)
    if spec is None:
        raise ConfigError(f"game {scope!r} is not in this league; its games: {', '.join(valid)}")
    return spec


def grid(console: Console, title: str, columns: list[tuple[str, str]], rows: list[list[Any]]) -> None:
    """Prints a table in rich's default look (heavy head, light body) without rich's Table: that measures and
    wraps every cell and takes 0.6 s for 200 rows, this takes 20 ms. ``columns`` are (header, ``left`` or
    ``right``); each cell is a text or (text, style)."""
    def split(cell: Any) -> tuple[str, str]:
        return (cell, "") if isinstance(cell, str) else cell

    cells = [[split(c) for c in row] for row in rows]
    widths = [max([cell_len(h)] + [cell_len(row[j][0]) for row in cells]) for j, (h, _) in enumerate(columns)]

    def pad(text: str, width: int, justify: str) -> str:
        gap = " " * (width - cell_len(text))
        return gap + text if justify == "right" else text + gap

    out = Text()
    out.append(title + "\n", style="italic")
    out.append("┏" + "┳".join("━" * (w + 2) for w in widths) + "┓\n")
    out.append("┃")
    for (header, justify), w in zip(columns, widths):
        out.append(" ")
        out.append(pad(header, w, justify), style="bold")
        out.append(" ┃")
    out.append("\n┡" + "╇".join("━" * (w + 2) for w in widths) + "┩\n")
    for row in cells:
        out.append("│")
        for (text, style), (_, justify), w in zip(row, columns, widths):
            out.append(" ")
            out.append(pad(text, w, justify), style=style)
            out.append(" │")
        out.append("\n")
    out.append("└" + "┴".join("─" * (w + 2) for w in widths) + "┘")
    console.print(out, soft_wrap=True)  # soft_wrap: no measuring or wrapping of the long text


def print_leaderboard(console: Console, league: str, rows: Sequence[Standing], total: int, scope: str = ALL, *,
                      relaxed: Sequence[str] = (), db: str = DEFAULT_DB) -> None:
    """The leaderboard as a table, under a SANDBOX RELAXED line when the league relaxed the sandbox (``relaxed``:
    :func:`arena.league.config.stored_relaxed`), with a hint for each bot on probation that works for its kind."""
    if relaxed:
        console.print(Text.assemble(("SANDBOX RELAXED", "bold red"), f" in this league: {shown('; '.join(relaxed))}"),
                      soft_wrap=True)
    title = f"{shown(league)}: {total} games" + ("" if scope == ALL else f", {shown(scope)} only")
    columns = [(col, "left" if col in ("bot", "status", "fail") else "right")
               for col in ("#", "bot", "mu", "sigma", "mu-3sigma", "games", "W/D/L", "fail", "status")]
    with_elo = bool(rows) and rows[0].fitted  # (arena.output.views.with_elo: the batch Elo beside TrueSkill)
    if with_elo:
        columns[5:5] = [("elo (95%)", "right"), ("ranks", "right"), ("tied", "right")]
    statuses = {"active": "", "probation": ("PROBATION", "red"), "retired": ("retired", "dim")}
    lines = []
    for r in rows:
        lines.append([str(r.rank), shown(r.bot), f"{r.mu:.2f}", f"{r.sigma:.2f}", f"{r.exposed:.2f}",
                      str(r.games), f"{r.wins}/{r.draws}/{r.losses}", r.fails_text(), statuses[r.status]])
        if with_elo:
            lines[-1][5:5] = [elo_cell(r), ranks_cell(r), "-" if r.group is None else f"g{r.group}"]
    grid(console, title, columns, lines)
    for r in rows:  # why a bot has fewer games than the others (the demo's greedy plays only Nim)
        if r.plays is not None and scope == ALL:
            console.print(Text(f"{shown(r.bot)} plays only {shown(', '.join(r.plays))} (its `games` in the "
                               "league file), so it has fewer games", style="dim"), soft_wrap=True)
    for r in rows:
        if r.status == "probation":
            console.print(Text.assemble((f"{shown(r.bot)} is on probation", "red"),
                                        f": {shown(r.status_reason)}; it is skipped until then: "
                                        f"{shown(lift_hint(r.as_json(), league, db))}"), soft_wrap=True)


def elo_cell(row: Standing) -> str:
    """``+123 [+80, +166]``: the batch Elo and its 95% interval; ``unrated`` for a bot without games."""
    return elo_text(row.elo, row.elo_low, row.elo_high)


def ranks_cell(row: Standing) -> str:
    """``1-3``: the ranks the bot holds with 95% confidence (one number when it is certain)."""
    low, high = row.rank_low, row.rank_high
    if low is None or high is None:  # unrated: no rank claimed
        return "-"
    return str(low) if low == high else f"{low}-{high}"


def print_h2h(console: Console, rows: Sequence[Standing], cells: Sequence[H2HCell]) -> None:
    """The head-to-head matrix: the row bot's score rate against the column bot (draws count half), with games."""
    index = {(c.bot_id, c.opponent_id): c for c in cells}
    lines = []
    for a in rows:
        values: list[Any] = [shown(a.bot)]
        for b in rows:
            c = index.get((a.bot_id, b.bot_id))
            if c is None:
                values.append(("-", "dim"))
            elif c.win_rate is None:  # never met: nothing to show (a 0 would read as a score)
                values.append("")
            else:
                rate = c.win_rate
                colour = "green" if rate > 0.55 else "red" if rate < 0.45 else "yellow"
                values.append((f"{100 * rate:.0f}% ({c.games})", colour))
        lines.append(values)
    grid(console, "head to head: row's score against column (games)", [("bot", "left")] +
         [(shown(r.bot), "right") for r in rows], lines)
