"""``arena audit --league L [--db PATH] [--game SPEC] [--json]``: pairs of bots whose results against each other are
improbable given their results against the rest of the field, worst first (leaderboards/audit.py; docs/audit.md)."""
from __future__ import annotations

import click

from arena.commands.leaderboard import _scope, grid
from arena.commands.locate import LEAGUE_HELP, league_store
from arena.text import dumps, out_console, shown
from leaderboards.audit import Audit, league_audit
from leaderboards.store import Store


@click.command("audit")
@click.option("--league", "league_name", metavar="NAME|FILE", default=None,
              help=LEAGUE_HELP + " Needed when the store holds several leagues.")
@click.option("--db", default=None, metavar="PATH", help="The results store (default: the league file's, else "
              "arena.sqlite).")
@click.option("--game", "scope", metavar="SPEC", default=None, help="Audit the games of one game spec only.")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"flagged": [{"bots": [A, B], "games", "score", "expected", "p"}, ...], ...}.')
def audit(league_name: str | None, db: str | None, scope: str | None, as_json: bool) -> None:
    """Flag pairs of bots that may collude: A's score against B (games where both sat; finishing above the other
    wins) is compared with what each bot's games against the rest of the field predict, with an exact
    probability corrected for the number of pairs (Holm, family-wise 5%). A flagged pair is a reason to look at
    its games, not proof: docs/audit.md says what the test can and cannot tell."""
    path, name = league_store(league_name, db)
    with Store.open(path, readonly=True) as store:  # a viewer: never writes the store
        league = store.find_league(name)
        found = league_audit(store, league.id, _scope(store, league.id, league.config, scope))
    if as_json:
        click.echo(dumps(found.as_json(), indent=2))
        return
    print_audit(found, league.name)


def print_audit(found: Audit, league: str) -> None:
    console = out_console()
    rows = found.as_json()["flagged"]
    summary = (f"{_pairs(found.tested)} tested at family-wise level {found.level:g}"
               + (f"; {found.untested} not placed by the rest of the field (not tested)" if found.untested else ""))
    if not rows:
        console.print(f"{shown(league)}: no pair flagged ({summary})", soft_wrap=True, markup=False, highlight=False)
        return
    grid(console, f"{shown(league)}: {_pairs(len(rows))} flagged, worst first ({summary})",
         [("bot", "left"), ("against", "left"), ("games", "right"), ("score", "right"), ("expected", "right"),
          ("p", "right")],
         [[shown(r["bots"][0]), shown(r["bots"][1]), str(r["games"]), f"{r['score']:g}", f"{r['expected']:.1f}",
           (f"{r['p']:.2g}", "red")] for r in rows])
    console.print("score: the first bot's score against the second (wins, draws half) in the games both played; "
                  "expected: what their games against everyone else predict; p: corrected for the pairs tested",
                  soft_wrap=True, markup=False, highlight=False, style="dim")


def _pairs(n: int) -> str:
    return f"{n} pair" if n == 1 else f"{n} pairs"
