"""``arena replay GAME_ID [--league NAME|FILE] [--db PATH] [--verify] [--no-board]``: a stored game move by move;
``arena replay --match FILE``: verifies the games of an ``arena match --json`` output."""
from __future__ import annotations

import json
from typing import Any

import click

import games as games_pkg
from arena.chance import chance_rng, key_id, parse_key, substitute_rng
from arena.commands.locate import LEAGUE_HELP, league_store
from arena.errors import ArenaError, ConfigError
from arena.output.views import result_text
from arena.referee.loop import sample_chance, substitute_move
from arena.results.moves import CHANCE, OPENING, Movers, failure_where
from arena.results.outcome import Termination, decide
from arena.results.records import headline
from arena.text import shown
from leaderboards.schema import load_failures
from leaderboards.store import DEFAULT_DB, Store, StoredGame


class Divergence(ArenaError):
    """A stored game does not re-simulate to what was stored (exit status 1)."""


@click.command("replay")
@click.argument("game_id", type=int, required=False)
@click.option("--db", default=None, metavar="PATH",
              help=f"The results store (default: the league file's, else {DEFAULT_DB}).")
@click.option("--verify", is_flag=True, help="Re-simulate the game and fail at the first divergence.")
@click.option("--no-board", is_flag=True, help="Only the moves, no board after each one.")
@click.option("--league", "league_name", metavar="NAME|FILE",
              help=LEAGUE_HELP + " Without GAME_ID: list this league's games.")
@click.option("--last", default=20, show_default=True, metavar="N", help="Without GAME_ID: how many games to list.")
@click.option("--match", "match_file", metavar="FILE",
              help="Verify every game of an 'arena match --json' output instead (chance re-drawn from its chance_key).")
def replay(game_id: int | None, db: str | None, verify: bool, no_board: bool, league_name: str | None, last: int,
           match_file: str | None = None) -> None:
    """Print a stored game move by move with the board; without GAME_ID, list the latest games and their ids."""
    if match_file is not None:
        if game_id is not None:
            raise ConfigError("--match verifies every game of the file: give no GAME_ID with it")
        verify_match(match_file)
        return
    path, league_name = league_store(league_name, db)
    if game_id is None:
        list_games(str(path), league_name, last)
        return
    with Store.open(path, readonly=True) as store:  # a viewer: never writes (nor migrates)
        stored = store.game(game_id)
        if stored is None:
            raise ConfigError(f"no game {game_id} in {path}")
        league = next((lg.name for lg in store.leagues() if lg.id == stored.league_id), "?")
        if league_name is not None and league != league_name:  # a game id is the store's, not the league's
            raise ConfigError(f"game {game_id} in {path} is of league {league!r}, not of {league_name!r}")
        chance_key = store.chance_key(stored.league_id)
    if verify:
        moves = verify_game(stored, chance_key)
        drawn = ", chance re-drawn from the league's key" if stored.info.get("chance_key_id") else ""
        click.echo(f"game {game_id} verified: {moves} actions re-simulated, seats, legality{drawn} and returns match")
        return
    print_game(stored, league, board=not no_board)


def list_games(db: str, league_name: str | None, last: int) -> None:
    with Store.open(db, readonly=True) as store:  # a viewer: never writes (nor migrates)
        league = store.find_league(league_name)
        for g in reversed(store.games(league.id, order="recent", limit=last)):  # (the report's words for a result)
            click.echo(f"{g.id:6d}  {shown(g.game):32s}  {shown(result_text(g))}")


def print_game(g: StoredGame, league: str, *, board: bool = True) -> None:
    game = games_pkg.load(g.game)
    # names, the league's and the failures' texts come from bots and users' files: shown literally
    click.echo(f"game {g.id} of league {shown(league)}: {shown(g.game)}, seed {g.seed}, round {g.round}")
    click.echo("seats: " + ", ".join(f"{s}={shown(name)}" for s, name in enumerate(g.players)))
    clocks = g.info.get("clock_left")  # a game with clocks: the mover's clock after each decision
    if not isinstance(clocks, list):
        clocks = []
    elif "time_control" in g.info:
        click.echo(f"time control: {shown(str(g.info['time_control']))} (each move shows the clock it left)")
    state = game.new_initial_state()
    if board:
        click.echo(game.render_text(state))  # the game draws its own board (games.base.Game)
    movers = Movers(len(g.info.get("opening", ())))  # one numbering: arena/results/moves.py
    for i, action in enumerate(g.history):
        seat = state.current_player()
        text = _action_text(game, state, action)
        kind = movers.next(i, seat)
        if kind == CHANCE:
            click.echo(f"{i + 1:4d}. chance: {text}")
        elif kind == OPENING:  # nobody chose it: the league's opening, before any bot was asked
            click.echo(f"{i + 1:4d}. opening: {text}")
        else:
            wall = g.wall_times[kind] if isinstance(kind, int) and kind < len(g.wall_times) else None
            left = clocks[kind] if isinstance(kind, int) and kind < len(clocks) else None
            clock = f", clock {left:.3f} s" if isinstance(left, (int, float)) and not isinstance(left, bool) else ""
            timing = f"  [{1000 * wall:.1f} ms{clock}]" if wall is not None else ""
            click.echo(f"{i + 1:4d}. seat {seat} ({shown(g.players[seat])}): {text}{timing}")
        state.apply_action(action)
        if board:
            click.echo(game.render_text(state))
    for f in g.failures:
        click.echo(f"seat {f.seat} ({shown(g.players[f.seat])}) failed: {shown(failure_where(f))}"
                   + (f": {shown(headline(f.detail))}" if f.detail else ""))
    result = ", ".join(f"{shown(g.players[s])} {r:+g} ({shown(t)})"
                       for s, (r, t) in enumerate(zip(g.returns, g.terminations)))
    click.echo(f"result: {result}")


def _action_text(game: Any, state: Any, action: int) -> str:
    try:
        return f"{game.action_name(state, action)} ({action})"
    except Exception:  # noqa: BLE001 - a tampered or illegal action still prints
        return str(action)


def verify_match(path: str) -> None:
    """Verifies every game of an ``arena match --json`` output against the chance key that match printed.

    Raises:
        ConfigError: the file cannot be read or is not such an output.
        Divergence: the first game that does not re-simulate.
    """

    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        key = parse_key(data["chance_key"])
        games = [StoredGame(id=number, league_id=0, schedule_key="", base_game=g["game"], game=g["game"], round=0,
                            seed=g["seed"], seats=g["seats"], players=g["players"], history=g["history"],
                            returns=g["returns"], terminations=g["terminations"], move_seats=g["move_seats"],
                            wall_times=g["wall_times"], cpu_times=g["cpu_times"], failures=load_failures(g["failures"]),
                            duration=g["duration"],
                            info={k: g[k] for k in ("chance_key_id", "adjudicated", "opening") if k in g})
                 for number, g in enumerate(data["games"], 1)]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cannot verify {path}: not an 'arena match --json' output with its chance_key "
                          f"({type(exc).__name__}: {str(exc)[:200]})") from None
    actions = sum(verify_game(g, key) for g in games)
    click.echo(f"{shown(path)}: {len(games)} games verified ({actions} actions): seats, legality, chance re-drawn "
               "from the match's key and returns match")


def verify_game(g: StoredGame, chance_key: bytes | None = None) -> int:
    """Re-simulates a stored game; returns the number of actions.

    A game drawn with a chance key (``info["chance_key_id"]``) has its chance outcomes and random substitute
    moves re-drawn from ``chance_key`` (its league's); a game from before chance keys only has its chance
    outcomes checked to be possible.

    Raises:
        Divergence: at the first action that is illegal, made by the wrong seat, after the end, or not the draw of
            the key; when the stored returns are not the returns of the re-simulated game; or when ``chance_key``
            is not the key the game was drawn with.
    """
    game = games_pkg.load(g.game)
    state = game.new_initial_state()
    decision = 0
    drawn_with = g.info.get("chance_key_id")
    if drawn_with is not None and (chance_key is None or key_id(chance_key) != drawn_with):
        raise Divergence(f"game {g.id} was drawn with chance key {drawn_with}, not with the key given "
                         f"({'none' if chance_key is None else key_id(chance_key)}): its chance cannot be checked")
    keyed = drawn_with is not None and chance_key is not None
    draws = chance_rng(g.seed, chance_key) if keyed else None
    substitutes = substitute_rng(g.seed, chance_key) if keyed else None
    substituted = {f.move_number: f.substituted for f in g.failures if f.substituted is not None}
    opening = list(g.info.get("opening", ()))  # moves nobody chose (arena/referee/openings.py): not in move_seats
    if g.history[:len(opening)] != opening:
        raise Divergence(f"game {g.id} diverges at its opening: the history does not start with it ({opening})")
    for i, action in enumerate(g.history):
        where = f"game {g.id} diverges at action {i + 1}"
        if state.is_terminal():
            raise Divergence(f"{where}: the game was already over, yet the history goes on ({action})")
        seat = state.current_player()
        if seat < 0:
            outcomes = [a for a, p in state.chance_outcomes() if p > 0]
            if action not in outcomes:
                raise Divergence(f"{where}: chance outcome {action} is impossible here (possible: {outcomes})")
            if draws is not None and action != (drawn := sample_chance(state, draws)):
                raise Divergence(f"{where}: chance outcome {action} is not what the chance key drew ({drawn})")
        elif i < len(opening):
            legal = state.legal_actions()
            if action not in legal:
                raise Divergence(f"{where}: opening move {action} is illegal (legal: {legal[:20]})")
        else:
            if decision < len(g.move_seats) and g.move_seats[decision] != seat:
                raise Divergence(f"{where}: stored mover is seat {g.move_seats[decision]}, the game says seat {seat}")
            legal = state.legal_actions()
            if action not in legal:
                raise Divergence(f"{where}: seat {seat} played {action}, which is illegal (legal: {legal[:20]})")
            if substitutes is not None and i in substituted:
                expected = substitute_move(state, legal, substitutes)
                if action != expected or substituted[i] != expected:
                    raise Divergence(f"{where}: the random move played for seat {seat} was {action}, the chance "
                                     f"key drew {expected}")
            decision += 1
        state.apply_action(action)
    try:  # the outcome the referee must have decided (arena.results.outcome, the one place that decides it)
        forfeits = [(s, Termination(t)) for s, t in enumerate(g.terminations) if t != Termination.NORMAL]
        decided = list(decide(state, forfeit=forfeits[0] if forfeits else None,
                              adjudicated=g.info.get("adjudicated") or None).returns)
    except ValueError:
        raise Divergence(f"game {g.id} diverges at the end: the history stops before the game is over and no seat "
                         "failed") from None
    if any(abs(a - b) > 1e-9 for a, b in zip(decided, g.returns)) or len(decided) != len(g.returns):
        raise Divergence(f"game {g.id} diverges at the end: stored returns {g.returns}, re-simulated {decided}")
    return len(g.history)
