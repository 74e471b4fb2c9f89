"""``arena match GAME BOT BOT [BOT BOT] --games N --seed S``: sandboxed games with seats rotated fairly."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import click
from rich.console import Console
from rich.table import Table

import games as games_pkg
from arena.chance import new_key, parse_key
from arena.errors import ConfigError
from arena.league.opening_books import book_option
from arena.league.progress import Reporter
from arena.limits import Limits, LimitType
from arena.output.views import percentile
from arena.results.outcome import FAILURES, Termination
from arena.results.records import GameRecord, headline
from arena.text import dumps, markup, out_console, shown, text


def schedule(n_bots: int, games: int, seed: int) -> list[tuple[int, list[int]]]:
    """(game seed, seat -> bot index) for each game: every set-up (seed) is played in every rotation."""
    out = []
    for i in range(games):
        r = i % n_bots
        out.append((seed + i // n_bots, [(seat + r) % n_bots for seat in range(n_bots)]))
    return out


def labels_for(bots: Sequence[str]) -> list[str]:
    """Display names; repeated bots get #1, #2 so their results stay apart."""
    # start-up: a command's modules load only when it runs
    from arena.referee.sandboxed import bot_label
    base = [bot_label(b) for b in bots]
    return [f"{b} #{i + 1}" if base.count(b) > 1 else b for i, b in enumerate(base)]


def totals(records: list[tuple[list[int], GameRecord]], labels: list[str]) -> dict[str, Any]:
    """Per bot: wins, draws, losses, points, failures by reason, move-time percentiles."""
    out: dict[str, Any] = {}
    for b, label in enumerate(labels):
        wins = draws = losses = 0
        points = 0.0
        failures = dict.fromkeys(FAILURES, 0)
        walls: list[float] = []
        cpus: list[float] = []
        for seats, rec in records:
            for seat, who in enumerate(seats):
                if who != b:
                    continue
                points += rec.returns[seat] if rec.returns else 0.0
                winner = rec.winner() if rec.returns else None
                if winner is None:
                    draws += 1
                elif winner == seat:
                    wins += 1
                else:
                    losses += 1
                for f in rec.failures:
                    if f.seat == seat:
                        failures[f.reason] += 1
                for s, w, c in zip(rec.move_seats, rec.wall_times, rec.cpu_times):
                    if s == seat:
                        walls.append(w)
                        cpus.append(c)
        out[label] = {"wins": wins, "draws": draws, "losses": losses, "points": points, "failures": failures,
                      "moves": len(walls),
                      "move_time": {f"p{q}": percentile(walls, q) for q in (50, 90, 99)},
                      "move_cpu": {f"p{q}": percentile(cpus, q) for q in (50, 90, 99)}}
    return out


def game_json(seats: list[int], rec: GameRecord) -> dict[str, Any]:
    d = rec.to_dict()
    return {"seed": rec.seed, "game": rec.game, "seats": seats, "players": rec.players, "returns": rec.returns,
            "terminations": rec.terminations, "history": rec.history, "failures": d["failures"],
            "move_seats": rec.move_seats, "wall_times": rec.wall_times, "cpu_times": rec.cpu_times,
            "duration": rec.duration,
            **{k: rec.info[k] for k in ("adjudicated", "chance_key_id", "opening", "time_control", "clock_left",
                                        "clocks_end") if k in rec.info}}


def start_failure(rec: GameRecord, names: Sequence[str]) -> str | None:
    """Why a bot of this game could not start (its code did not load: no class Bot, not Python, an unregistered
    COMP424 agent...), in one line; None when every bot started. A start-up timeout is a result, not a refusal."""
    for f in rec.failures:
        if f.seat in rec.info.get("start_failed", ()) and f.reason is not Termination.TIMEOUT:
            return f"bot {shown(names[f.seat])} cannot start: {f.reason}" + \
                (f" ({shown(headline(f.detail)[:300])})" if f.detail else "")
    return None


def first_failures(records: list[tuple[list[int], GameRecord]], labels: list[str]) -> dict[str, str]:
    """Per bot that failed: its first failure in one line, what and where (``crash in game 1: KeyError: 'x' (at
    mybot.py, line 12, in helper)``), for the table's reader (``--json`` has every failure's whole detail)."""
    out: dict[str, str] = {}
    for n, (seats, rec) in enumerate(records, 1):
        for f in rec.failures:
            label = labels[seats[f.seat]] if 0 <= f.seat < len(seats) else None
            if label is not None and label not in out:
                out[label] = f"{f.reason} in game {n}" + (f": {headline(f.detail)[:300]}" if f.detail else "")
    return out


def first_bot_points(seats: list[int], rec: GameRecord) -> float:
    """Bot 0's points in a two-player game: 1 for a win, 1/2 for a draw, 0 for a loss."""
    winner = rec.winner() if rec.returns else None
    return 0.5 if winner is None else 1.0 if seats[winner] == 0 else 0.0


@contextlib.contextmanager
def _closing_after(debug: bool) -> Iterator[None]:
    """The match's last game's bots are waited for and cleaned up before it ends, whatever ends it (each game leaves
    its end to the next: ``play_game(close_later=True)``)."""
    try:
        yield
    finally:
        if not debug:
            from arena.sandbox.proxy import finish_closing  # start-up: the sandbox stack only when bots were sandboxed
            finish_closing()


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.1f}"


def print_table(console: Console, game: str, tot: dict[str, Any], n_games: int, layers: list[str],
                failures: dict[str, str] | None = None) -> None:
    table = Table(title=f"{markup(game)}: {n_games} games", title_justify="left")
    rows = []
    for label, t in tot.items():
        fails = ", ".join(f"{r} {c}" for r, c in t["failures"].items() if c) or "-"
        mt = t["move_time"]
        rows.append([label, f"{t['wins']}/{t['draws']}/{t['losses']}", f"{t['points']:+g}", fails,
                     str(t["moves"]), f"{_ms(mt['p50'])}/{_ms(mt['p90'])}/{_ms(mt['p99'])}", _ms(t["move_cpu"]["p50"])])
    for j, col in enumerate(("bot", "W/D/L", "points", "failures", "moves", "move ms p50/p90/p99", "cpu ms p50")):
        # on a narrow terminal names and failures wrap whole (fold), and numbers are never cut: a number column
        # is as wide as its widest value and only its header wraps
        widest = max((len(r[j]) for r in rows), default=1)
        if col in ("bot", "failures"):
            table.add_column(col, justify="left", overflow="fold")
        else:
            table.add_column(col, justify="right", no_wrap=False, overflow="fold", min_width=widest)
    for r in rows:  # a Text: a bot's file name is shown escaped, never parsed as markup
        table.add_row(text(r[0]), *r[1:])
    console.print(table)
    for label, line in (failures or {}).items():  # (Text: names and exception texts are never markup)
        console.print(text(f"{label}: first {line}"), soft_wrap=True)
    console.print(f"sandbox layers: {', '.join(layers) if layers else 'NONE (debug mode: trusted code only)'}")


@click.command("match")
@click.argument("game")
@click.argument("bots", nargs=-1, required=True)
@click.option("--games", "n_games", type=int, default=10, show_default=True, help="Number of games.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the first game (game seeds follow).")
@click.option("--move-time", type=LimitType("move_time"), default=Limits.move_time, show_default=True,
              help="Seconds per move (built-in bots think this long on every move).")
@click.option("--first-move-time", type=LimitType("first_move_time"), default=Limits.first_move_time,
              show_default=True, help="Seconds for each bot's first move (start-up plus one move).")
@click.option("--time-control", type=LimitType("time_control"), default=None, metavar="[MOVES/]BASE[+INC]",
              help="A game clock per bot: BASE seconds for the game plus INC after each move, the base again after "
                   "every MOVES moves (e.g. 60+0.5, 40/60+0.5). --move-time and --first-move-time then cap one move "
                   "only where given.")
@click.option("--memory", "memory_mb", type=LimitType("memory_mb"), default=Limits.memory_mb, show_default=True,
              help="MB per bot.")
@click.option("--max-moves", type=LimitType("max_moves"), default=None,
              help="Decisions per game before it ends as a draw (default: the game's own bound; `arena games`).")
@click.option("--max-game-seconds", type=LimitType("max_game_seconds"), default=None,
              help="Wall-clock seconds per game: no move starts after it, the game is a draw (default: the seats' "
                   "first moves plus twice the move time for every decision of the game's bound, plus a minute).")
@click.option("--on-failure", type=click.Choice(["lose", "random_move"]), default="lose", show_default=True,
              help="lose: a failing bot loses; random_move: COMP424 rule, a random move is played instead.")
@click.option("--trusted", is_flag=True, help="The bot files are trusted: run them even without the mandatory layers.")
@click.option("--debug", is_flag=True,
              help="TRUSTED DEBUG MODE: bots run in this process, no sandbox, no time limits (for a debugger).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with every game and the totals.")
@click.option("--max-bot-mb", type=LimitType("max_bot_mb"), default=Limits.max_bot_mb, show_default=True,
              help="Largest bot (file or folder) accepted, in MB.")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@click.option("--sprt", "sprt_text", metavar="elo0=E0,elo1=E1[,alpha=A,beta=B,model=M]",
              help="Two bots: stop as soon as a sequential probability ratio test decides between H0 (the first bot "
                   "is E0 Elo stronger) and H1 (E1 stronger); --games is the most it plays (docs/ratings.md).")
@click.option("--openings", "openings_text", metavar="plies=N|file=PATH",
              help="Start each seed's games from an opening, played once in each seat order (as a league's openings "
                   "key): N random legal moves drawn from the seed, or line r mod lines of a file of openings (one "
                   "per line, actions as integers) for the r-th seed (docs/ratings.md).")
@click.option("--chance-key", metavar="HEX", envvar="ARENA_CHANCE_KEY",
              help="The secret that keys chance and the bots' seeds (default: a fresh one; --json prints it): give a "
                   "printed key back to play the same match again.")
def match(game: str, bots: tuple[str, ...], n_games: int, seed: int, move_time: float, first_move_time: float,
          memory_mb: int, on_failure: str, trusted: bool, debug: bool, as_json: bool,
          chance_key: str | None = None, max_bot_mb: float = Limits.max_bot_mb, sprt_text: str | None = None,
          quiet: bool = False, openings_text: str | None = None, max_moves: int | None = None,
          max_game_seconds: float | None = None, time_control: str | None = None) -> None:
    """Play GAME between the BOTs (built-in specs, bot files or bot folders with bot.py), each sandboxed in its
    own process."""
    # start-up: the sandbox only when a game is played
    from arena.adapters import comp424
    from arena.adapters.comp424_names import is_agent_arg
    from arena.referee.sandboxed import check_untrusted_allowed, describe_bot, is_bot_file, play_game
    from arena.submissions.snapshot import MB
    from arena.submissions.take import take

    if n_games < 1:
        raise ConfigError(f"--games must be at least 1, got {n_games}")
    if seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {seed}")
    try:  # one secret for the whole run: the rotations of a seed see the same chance (duplicate seeds)
        key = parse_key(chance_key) if chance_key is not None else new_key()
    except ValueError as exc:
        raise ConfigError(f"--chance-key: {exc}") from None
    g = games_pkg.load(game)
    from leaderboards.sprt import Sprt, evaluate  # start-up: the SPRT only for --sprt
    if len(bots) != g.num_players():
        raise ConfigError(f"{g} needs {g.num_players()} bots, got {len(bots)}")
    sprt = None if sprt_text is None else Sprt.parse(sprt_text)
    book = None if openings_text is None else book_option(openings_text, str(g))
    if sprt is not None and len(bots) != 2:
        raise ConfigError(f"--sprt compares two bots; {g} has {len(bots)} seats")
    points: list[float] = []  # the first bot's points per game (the SPRT's observations)
    # with a clock, a move time caps a move only where given (its default is no cap: arena.limits.UNCAPPED)
    ctx = click.get_current_context()
    given: dict[str, Any] = {
        name: value for name, value in (("move_time", move_time), ("first_move_time", first_move_time))
        if time_control is None or ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT}
    if time_control is not None:
        given["time_control"] = time_control
    limits = Limits(**given, memory_mb=memory_mb, trusted=trusted, debug=debug, max_bot_mb=max_bot_mb,
                    max_moves=max_moves, max_game_seconds=max_game_seconds)
    # Each bot file or folder enters once, as a snapshot: every game plays that copy, whatever happens to the path.
    # comp424:PATH is a COMP424 course folder, run unchanged (arena.adapters.comp424)
    entered = [comp424.enter(b, int(max_bot_mb * MB)) if is_agent_arg(b) else
               take(b, max_bytes=int(max_bot_mb * MB)) if is_bot_file(b) else b for b in bots]
    for b in entered:
        describe_bot(b, g)
    check_untrusted_allowed(entered, limits)
    labels = labels_for(bots)
    err = Console(stderr=True)
    if debug:
        err.print("[bold red]TRUSTED DEBUG MODE[/]: no sandbox and no time limits; "
                  "never use it for code you do not trust")
    plan = schedule(len(bots), n_games, seed)
    records: list[tuple[list[int], GameRecord]] = []
    # done/total, games/s and ETA on stderr: a bar on a terminal, a line every 30 s in a log; -q: nothing
    with Reporter(str(g), quiet=quiet, transient=as_json) as progress, _closing_after(debug):
        progress.start(n_games)
        for game_seed, seats in plan:
            # as in a league: the opening depends on the seed and its round (the r-th seed of the plan is round r),
            # so every seat rotation of a seed plays it
            opening = book.opening(str(g), game_seed, game_seed - seed) if book is not None else ()
            # each game's end (its bots' exits, their groups given back) overlaps the next game's set-up
            rec = play_game(g, [entered[i] for i in seats], game_seed, limits, on_failure=on_failure,
                            names=[labels[i] for i in seats], chance_key=key, opening=opening, close_later=True)
            records.append((seats, rec))
            refusal = start_failure(rec, [labels[i] for i in seats])
            if refusal:  # no game can be played with it: say why once, as `arena submit` would (exit 2)
                raise ConfigError(refusal)
            if sprt is not None:
                points.append(first_bot_points(seats, rec))
                if len(points) % 2 == 0 and evaluate(sprt, points, paired=True).decision != "inconclusive":
                    break  # decided: the rest of --games would not change the verdict
            progress.advance()
    tot = totals(records, labels)
    verdict = None if sprt is None else evaluate(sprt, points, paired=len(points) >= 2)
    layers = records[0][1].info.get("sandbox", []) if records else []
    if as_json:
        click.echo(dumps({"game": str(g), "bots": list(bots), "labels": labels, "seed": seed,
                               "limits": limits.to_dict(), "on_failure": on_failure, "sandbox": layers,
                               "games": [game_json(s, r) for s, r in records], "totals": tot,
                               "chance_key": key.hex(),
                               **({} if book is None else {"openings": book.to_dict()}),
                               **({} if verdict is None else
                                  {"sprt": {**verdict.to_dict(), "verdict": verdict.verdict(labels[0], labels[1])}})}))
        return
    print_table(out_console(), str(g), tot, len(records), layers, first_failures(records, labels))
    if verdict is not None:
        click.echo(f"SPRT [{verdict.elo0:g}, {verdict.elo1:g}] ({verdict.model}, {verdict.stats}, "
                   f"alpha {verdict.alpha:g}, beta {verdict.beta:g}) after {len(records)} games: "
                   f"{verdict.verdict(shown(labels[0]), shown(labels[1]))}")
