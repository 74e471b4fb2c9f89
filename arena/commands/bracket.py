"""``arena bracket [--league NAME|FILE] [--db PATH] [--json]``: a tournament's bracket or Swiss standings."""
from __future__ import annotations

import click
from rich.text import Text

from arena.commands.leaderboard import console, grid
from arena.commands.locate import league_store
from arena.errors import ConfigError
from arena.text import dumps, shown
from arena.tournament.matches import Match, round_title
from arena.tournament.progress import State, current, is_tournament, view
from leaderboards.store import Store


@click.command("bracket")
@click.option("--league", "league_name", metavar="NAME|FILE",
              help="The tournament (needed when the store holds several leagues): its name, or its league file.")
@click.option("--db", default=None, metavar="PATH", help="The results store (default: the league file's, else "
              "arena.sqlite).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: format, rounds of matches, placings "
              "(docs/tournaments.md).")
def bracket(league_name: str | None, db: str | None, as_json: bool) -> None:
    """Print a tournament's rounds and matches (a knockout or double-elimination bracket, or Swiss pairings and
    standings) and, once it is finished, its places."""
    path, league_name = league_store(league_name, db)
    with Store.open(str(path), readonly=True) as store:  # a viewer: never migrates or writes
        league = store.find_league(league_name)
        if not is_tournament(league.config):
            raise ConfigError(f"league {shown(league.name)} is a {league.config.get('format', 'round_robin')}, not a "
                              "tournament; `arena leaderboard` shows it (a tournament has format = \"swiss\", "
                              "\"knockout\" or \"double_elimination\")")
        state = current(store, league.id, league.config)
        labels = {b.id: b.label for b in store.bots(league.id, source=False)}
    if state is None:
        if as_json:
            click.echo(dumps({"format": league.config["format"], "finished": False, "rounds": [], "placings": []}))
        else:
            click.echo(f"tournament {shown(league.name)}: not started (`arena league run` starts it)")
        return
    if as_json:
        click.echo(dumps(view(state, labels), indent=2))
        return
    print_bracket(league.name, state, labels)


def _match_line(m: Match, labels: dict[int, str]) -> Text:
    a, b = (None if x is None else labels.get(x, str(x)) for x in m.bots)
    line = Text(f"  {m.label:<4} ")
    if m.is_bye:
        line.append(shown(a or b or "-"), style="bold")
        line.append("  bye")
        return line
    sa, sb = m.score
    for name, bot, score in ((a, m.bots[0], sa), (b, m.bots[1], sb)):
        won = m.done and m.winner == bot
        line.append(shown(name), style="bold green" if won else "")
        line.append(f" {score:g}")
        if bot == m.bots[0]:
            line.append("  -  ")
    line.append("" if m.done else "   (playing)" if m.games else "   (to play)")
    if m.done and m.winner is None:
        line.append("   draw")
    if m.note:
        line.append(f"   {m.note}", style="italic")
    return line


def print_bracket(name: str, state: State, labels: dict[int, str]) -> None:
    out = console()
    out.print(Text(f"{shown(name)}: {state.format.replace('_', ' ')}, {len(state.entrants)} entrants, "
                   + ("finished" if state.finished else "in progress"), style="bold"), soft_wrap=True)
    for matches in state.rounds:
        out.print(Text(round_title(matches[0].label), style="italic"), soft_wrap=True)
        for m in matches:
            out.print(_match_line(m, labels), soft_wrap=True)
    if state.waiting:
        out.print(f"  {state.waiting} more matches wait for their entrants", soft_wrap=True)
    if state.format == "swiss" and state.standings:
        grid(out, "standings", [("place", "right"), ("bot", "left"), ("points", "right"), ("buchholz", "right"),
                                ("sonneborn-berger", "right"), ("byes", "right")],
             [[str(i + 1), shown(labels.get(e.bot, str(e.bot))), f"{e.points:g}", f"{e.buchholz:g}",
               f"{e.sonneborn_berger:g}", str(e.byes)] for i, e in enumerate(state.standings)])
    if state.placings:
        out.print(Text("places", style="italic"), soft_wrap=True)
        place = 1
        for group in state.placings:
            out.print(Text(f"  {place}. " + ", ".join(shown(labels.get(b, str(b))) for b in group)),
                      soft_wrap=True)  # (a Text: a name is never read as rich markup)
            place += len(group)
