"""``arena.play``: one game between bot objects — the referee loop (OpenSpiel's ``evaluate_bots``).

Only this loop samples chance, validates actions and turns bot failures into results. Chance comes from
the game's seed and, when given, a secret chance key (:mod:`arena.chance`: the sandboxed referee always
passes one, so no bot can repeat the draws; without one, in-process games stay reproducible from the seed).
In-process it is the engine of tests and experiments; the sandboxed referee drives the same loop with
proxies for bot processes (which raise :class:`arena.errors.BotError` on failure).
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import games as games_pkg
from arena.chance import chance_rng, key_id, substitute_rng
from arena.errors import BotError, IllegalMoveError, MachineOverloadedError
from arena.referee.openings import apply_opening
from arena.results.outcome import Termination, decide
from arena.results.records import Failure, GameRecord
from bots.base import Limit

ON_FAILURE = ("raise", "lose", "random_move")


def sample_chance(state: Any, rng: random.Random) -> int:
    """Draws a chance outcome by its probability."""
    outcomes = state.chance_outcomes()
    r, acc = rng.random(), 0.0
    for action, p in outcomes:
        acc += p
        if r < acc:
            return action
    return outcomes[-1][0]


def substitute_move(state: Any, legal: list[int], rng: random.Random) -> int:
    """The move played for a failed bot under on_failure=random_move: the game's own substitute rule
    (:meth:`games.base.Game.substitute_action`: Colosseum's COMP424 random walk, else a random legal action)."""
    return int(state.game.substitute_action(state, legal, rng))


def play(game: Any, bots: Sequence[Any], seed: int = 0, *, limit: Limit | Callable[[int, int], Limit] | None = None,
         on_failure: str = "raise", max_moves: int | None = None, max_seconds: float | None = None,
         players: Sequence[str] | None = None,
         observer: Callable[[Any, int, int], None] | None = None, chance_key: bytes | None = None,
         opening: Sequence[int] = ()) -> GameRecord:
    """Plays one game of ``game`` between ``bots`` (one per seat) and returns its record.

    Args:
        game: a Game or a spec string.
        bots: objects with ``step(state, limit) -> action`` (and optionally ``inform(action)``).
        seed: seeds the chance draws (the bots have their own seeds).
        chance_key: a secret mixed with ``seed`` to key the chance draws (and random substitute moves), so that
            what the bots know (the seed) does not predict them; the record keeps only its fingerprint
            (``info["chance_key_id"]``). None: draws from ``seed`` alone (reproducible tests, experiments).
        limit: the Limit passed to every ``step``, or a function ``(seat, move_number) -> Limit``.
        on_failure: ``raise`` (default in-process: a bot error propagates), ``lose`` (the failing bot loses,
            the reason is recorded) or ``random_move`` (COMP424 rule: a random legal move is played instead).
        max_moves: adjudicate a draw after this many decisions (games like Double Step with passes can loop).
        max_seconds: adjudicate a draw when the game has lasted this many wall-clock seconds (checked before each
            decision: a move already started keeps its own limit).
        players: names for the record (default: the bots' ``name`` attributes).
        observer: called as ``observer(state, seat, action)`` after every action (progress displays).
        opening: moves played before the first decision (:mod:`arena.referee.openings`; while legal and not ending the
            game), told to every bot and recorded as ``info["opening"]``.
    """
    if on_failure not in ON_FAILURE:
        raise ValueError(f"on_failure must be one of {', '.join(ON_FAILURE)}, not {on_failure!r}")
    game = games_pkg.load(game) if isinstance(game, str) else game
    n = game.num_players()
    if len(bots) != n:
        raise ValueError(f"{game} needs {n} bots, got {len(bots)}")
    names = list(players) if players is not None else [getattr(b, "name", type(b).__name__) for b in bots]
    record = GameRecord(game=str(game), seed=seed, players=names, terminations=[Termination.NORMAL] * n)
    rng = chance_rng(seed, chance_key)
    fallback_rng = substitute_rng(seed, chance_key)
    if chance_key is not None:
        record.info["chance_key_id"] = key_id(chance_key)
    state = game.new_initial_state()
    started = time.perf_counter()
    decisions = 0
    forfeit: tuple[int, Termination] | None = None  # (seat, reason): the failure that ended the game
    adjudicated: str | None = None

    def tell_others(mover: int, action: int) -> None:
        for seat, bot in enumerate(bots):
            if seat != mover and hasattr(bot, "inform"):
                bot.inform(action)

    if opening:
        record.info["opening"] = apply_opening(state, opening)
        for action in record.info["opening"]:
            tell_others(-1, action)  # nobody chose it: every bot is told, as of a chance outcome

    while not state.is_terminal():
        seat = state.current_player()
        if seat < 0:  # chance
            action = sample_chance(state, rng)
            state.apply_action(action)
            tell_others(-1, action)
            if observer:
                observer(state, seat, action)
            continue
        if max_moves is not None and decisions >= max_moves:
            adjudicated = f"draw after {max_moves} moves"
            break
        if max_seconds is not None and time.perf_counter() - started >= max_seconds:
            adjudicated = f"draw after {max_seconds:g} s"
            break
        move_limit = limit(seat, decisions) if callable(limit) else (limit or Limit())
        legal = state.legal_actions()
        bot = bots[seat]
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            try:
                # a copy a bot may change; a sandboxed bot's proxy only reads the new actions (reads_state_only)
                action = bot.step(state if getattr(bot, "reads_state_only", False) else state.clone(), move_limit)
            except (BotError, MachineOverloadedError):  # overload: not the bot's fault, the game is abandoned
                raise
            except Exception as exc:
                if on_failure == "raise":
                    raise
                raise BotError(f"{type(exc).__name__}: {exc}") from exc
            wall, cpu = _move_wall(bot, t0), time.thread_time() - c0
            cpu = getattr(bot, "last_cpu_time", None) or cpu
            if isinstance(action, bool) or not isinstance(action, int) or action not in legal:
                raise IllegalMoveError(f"illegal action {action!r}; legal actions: {legal[:20]}")
        except BotError as exc:
            wall, cpu = _move_wall(bot, t0), time.thread_time() - c0
            cpu = getattr(bot, "last_cpu_time", None) or cpu  # a timed-out bot's own CPU time shows why
            if on_failure == "raise":
                raise
            if on_failure == "random_move" and exc.reason is not Termination.MEMORY and getattr(bot, "alive", True):
                action = substitute_move(state, legal, fallback_rng)
                record.failures.append(Failure(seat, exc.reason, len(state.history()), str(exc)[:2000], action))
            else:
                record.failures.append(Failure(seat, exc.reason, len(state.history()), str(exc)[:2000]))
                forfeit = (seat, exc.reason)
                record.move_seats.append(seat)
                record.wall_times.append(wall)
                record.cpu_times.append(cpu)
                break
        record.move_seats.append(seat)
        record.wall_times.append(wall)
        record.cpu_times.append(cpu)
        state.apply_action(action)
        decisions += 1
        tell_others(seat, action)
        if observer:
            observer(state, seat, action)
    record.history = state.history()
    outcome = decide(state, forfeit=forfeit, adjudicated=adjudicated)  # who won and why: arena.results.outcome alone
    record.returns, record.terminations = list(outcome.returns), list(outcome.terminations)
    if outcome.termination is Termination.ADJUDICATED:
        record.info["adjudicated"] = outcome.reason
    record.duration = time.perf_counter() - started
    return record


def _move_wall(bot: Any, t0: float) -> float:
    """A move's recorded wall time: its step's, less what a sandboxed bot's proxy left out of its clock as the
    referee's own wait (a thaw held in the kernel while the bot was frozen: ``last_wait_left_out``)."""
    return max(0.0, time.perf_counter() - t0 - (getattr(bot, "last_wait_left_out", 0.0) or 0.0))
