"""``arena league run CONFIG [--concurrency N] [--backend local|ray] [--address ADDR] [--db PATH]`` and
``arena league status CONFIG``."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from arena.commands.probation import release
from arena.errors import ArenaError
from arena.output.views import head_to_head, standings
from arena.text import markup, shown
from leaderboards.store import DEFAULT_DB, Store


@click.group("league")
def league() -> None:
    """Run a league described by a TOML file (docs/leagues.md); re-running resumes it."""


@league.command("run")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--concurrency", "-j", type=click.IntRange(min=1), default=None,
              help="Games at once (default: the league file's, else the number of cores; Ray: the cluster's CPUs).")
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where games run: worker processes here, or Ray tasks (docs/ray.md).")
@click.option("--address", metavar="ADDR", default=None,
              help="Ray cluster: HOST:PORT, auto or ray://HOST:PORT (default: $RAY_ADDRESS, else a Ray running here, "
                   "else a new local one); needs --backend ray.")
@click.option("--db", metavar="PATH", default=None, help="The store (overrides the league file's database).")
@click.option("--quiet", "-q", is_flag=True, help="No progress and no leaderboard, only the summary line.")
def run(config: str, concurrency: int | None, backend: str, address: str | None, db: str | None,
        quiet: bool) -> None:
    """Play (or resume) the league in CONFIG and print its leaderboard."""
    # start-up: the league schema (pydantic) only when a league file is read
    from arena.league.config import load_config
    if address and backend != "ray":
        raise click.UsageError("--address is a Ray cluster's: add --backend ray")
    cfg = load_config(config)  # every check happens before the store is touched
    try:
        summary = play_and_report(cfg, db=db, concurrency=concurrency, backend=backend, address=address,
                                  quiet=quiet)
    except KeyboardInterrupt:
        click.echo("arena: interrupted; finished games are stored, run the same command again to resume", err=True)
        sys.exit(130)
    if summary.overloaded:
        click.echo(f"arena: machine overloaded: {len(summary.overloaded)} games were abandoned, not forfeited (first: "
                   f"{shown(summary.overloaded[0])}); lower --concurrency or stop other work, then run the same "
                   "command "
                   "again to play them", err=True)
    if summary.errors or summary.overloaded:
        if not summary.errors:
            sys.exit(1)
        raise ArenaError(f"{len(summary.errors)} games could not be played (first: {summary.errors[0]}); "
                         "run the same command again to retry them")


def play_and_report(cfg: Any, *, db: str | None = None, concurrency: int | None = None, backend: str = "local",
                    address: str | None = None, quiet: bool = False, h2h: bool = False) -> Any:
    """Runs a league with a progress bar on stderr, then prints the summary and the leaderboard."""
    # start-up: the runner (sandbox, workers) only when a league runs
    from arena.commands.leaderboard import console, print_h2h, print_leaderboard
    from arena.league.runner import run_league

    relaxed = cfg.relaxed()
    if relaxed:  # on every run, before any game: the organiser must not forget it is on
        click.echo(f"arena: warning: league {shown(cfg.name)} runs with the sandbox relaxed: "
                   f"{shown('; '.join(relaxed))}", err=True)
    # start-up: a command's modules load only when it runs
    from arena.league.progress import Reporter
    # done/total, games/s and ETA on stderr: a bar on a terminal, a line every 30 s in a log; -q: nothing

    store_path = Path(db) if db else (cfg.database or Path(DEFAULT_DB))  # (as run_league finds it)
    reporter = Reporter(f"league {cfg.name}", quiet=quiet, sidecar=store_path,
                        concurrency=concurrency or cfg.concurrency)

    def progress_cb(done: int, total: int, task: Any, record: Any) -> None:
        reporter.advance(done)
        # a TaskFailure; at once, not only in the summary: the organiser can react mid-run
        if getattr(record, "overloaded", False):
            reporter.note(f"[yellow]machine overloaded[/]: {markup(task.key)} abandoned (not forfeited), it is "
                          "replayed on the next run; lower --concurrency")
    try:
        summary = run_league(cfg, db=db, concurrency=concurrency, backend=backend, address=address,
                             progress=progress_cb, on_start=lambda so_far: started(so_far, reporter))
    finally:
        reporter.stop()
    line = (f"league {shown(summary.league)}: {summary.played} games played in {summary.elapsed:.1f} s, "
            f"{summary.already} already stored, {summary.scheduled} scheduled")
    if summary.skipped:
        line += f", {summary.skipped} skipped (probation: {', '.join(shown(p) for p in summary.probation)})"
    if summary.waiting:  # a run plays the schedule it planned at its start
        line += (f"; {summary.waiting} games of bots submitted during the run wait for the next run (run the same "
                 "command again)")
    click.echo(line)
    if summary.interrupted:  # SIGINT/SIGTERM: the summary, one line on what was abandoned, and the signal's status
        click.echo(f"arena: stopped by {summary.interrupted}: {summary.abandoned} games in flight abandoned (not "
                   "stored; the next run plays them); run the same command again to resume", err=True)
        sys.stdout.flush()
        sys.exit(143 if summary.interrupted == "SIGTERM" else 130)
    if quiet:
        return summary
    with Store.open(summary.database, readonly=True) as store:  # (the runner closed it; only read now)
        lg = store.find_league(cfg.name)
        rows = standings(store, lg.id)
        print_leaderboard(console(), lg.name, rows, store.count_games(lg.id), relaxed=relaxed,
                          db=str(summary.database))
        if h2h:
            print_h2h(console(), rows, head_to_head(store, lg.id, rows))
    sys.stdout.flush()
    return summary


def started(so_far: Any, reporter: Any) -> None:
    """The bots are entered and the schedule known: flag byte-identical bots, start the progress at 0/total."""
    for line in so_far.duplicates:
        click.echo(line, err=True)
    reporter.playing = lambda: so_far.in_flight  # (the runner keeps it live: the note says the exact count)
    reporter.note_extra = {"scheduled": so_far.scheduled}  # `league status` tells later submissions' games apart
    if so_far.scheduled > so_far.already:  # (a resumed league with nothing left to play prints no 0/0)
        reporter.start(so_far.scheduled - so_far.already)


@league.command("status")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--db", metavar="PATH", default=None, help="The store (overrides the league file's database).")
def status(config: str, db: str | None) -> None:
    """Show how much of the league's schedule is stored, without playing."""

    # start-up: the league schema (pydantic) only when a league file is read
    from arena.league.config import TOURNAMENTS, load_config
    from arena.league.planning import plan
    from arena.league.progress import read_progress
    from arena.tournament.progress import current
    from leaderboards import lock
    cfg = load_config(config)
    path = Path(db) if db else (cfg.database or Path(DEFAULT_DB))
    with Store.open(path, readonly=True) as store:  # a status never writes (nor migrates)
        lg = store.league(cfg.name)
        if lg is None:
            click.echo(f"league {shown(cfg.name)}: not started ({shown(path)})")
            return
        if cfg.format in TOURNAMENTS:  # its schedule is decided round by round: say where it stands instead
            state = current(store, lg.id, lg.config)
            if state is None:
                click.echo(f"tournament {shown(cfg.name)}: not started ({store.count_games(lg.id)} games in the store)")
                return
            matches = [m for r in state.rounds for m in r if not m.is_bye]
            click.echo(f"tournament {shown(cfg.name)} ({cfg.format.replace('_', ' ')}, {len(state.entrants)} "
                       f"entrants): " + ("finished" if state.finished else
                                         f"{sum(m.done for m in matches)} of {len(matches)} matches so far decided, "
                                         f"{len(state.pending)} games to play next")
                       + f", {store.count_games(lg.id)} games in the store (`arena bracket --league` shows it)")
            return
        fixtures = plan(store, lg.id, cfg)
        done = store.schedule_keys(lg.id)
        missing = sum(f.key not in done for f in fixtures)
        probation = [b.label for b in store.bots(lg.id, include_retired=False) if b.status == "probation"]
        running = lock.holder(path)  # a runner holding the store's lock (docs/leagues.md, "One runner per store")
        note = read_progress(path) if running else None
        run = _run_count(note)
        if run is not None:  # the runner's own count (the schedule it planned at its start), never a second one
            played, total = run
            # games of bots submitted since the run started: the schedule now against the one the run planned
            planned = note.get("scheduled") if note else None
            later = max(0, len(fixtures) - planned if isinstance(planned, int) else missing - (total - played))
            count = f"{played}/{total} games of the running league run played" + (
                f"; {later} more scheduled games (bots submitted since the run started) wait for the next run"
                if later else "")
        else:
            count = f"{len(fixtures) - missing}/{len(fixtures)} scheduled games stored"
        click.echo(f"league {shown(cfg.name)}: {count}, {store.count_games(lg.id)} games in the store"
                   + (f"; on probation: {', '.join(shown(p) for p in probation)}" if probation else "")
                   + (f"; a league runner is playing this store now ({shown(running)})" if running else ""))


def _run_count(note: dict[str, Any] | None) -> tuple[int, int] | None:
    """(done, total) of a league runner's progress note, or None without a readable one."""
    try:
        done, total = int(note["done"]), int(note["total"])  # type: ignore[index]
    except (KeyError, TypeError, ValueError):
        return None
    return (done, total) if 0 <= done <= total else None


def _register() -> None:
    league.add_command(release)  # `arena league release BOT`: lifts probation (arena/commands/probation.py)


_register()
