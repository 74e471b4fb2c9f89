"""The sandboxed referee: ``play_game`` plays one game with every bot in its own sandboxed process.

It drives the same loop as in-process play (:func:`arena.play`) with :class:`~arena.sandbox.proxy.BotProcess`
proxies, so chance sampling, legality checks and failure handling live in one place. Every bot
failure becomes a recorded result; the referee never crashes because of a bot and never unpickles
anything a bot sends.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import bots as bots_pkg
import games as games_pkg
from arena.chance import bot_seed, new_key
from arena.errors import ConfigError
from arena.limits import MAX_DECISIONS, GameClock, Limits
from arena.referee.loop import play
from arena.results.records import GameRecord
from arena.sandbox.bot_files import materialize
from arena.submissions.snapshot import MB, Snapshot
from arena.submissions.take import take
from bots.base import Limit
from bots.registry import bot_class, parse_bot_spec
from games.errors import GameSpecError

ON_FAILURE = ("lose", "random_move")


def is_bot_file(bot: str | Snapshot) -> bool:
    """True when ``bot`` is a snapshot or names a bot file or folder rather than a built-in spec."""
    if isinstance(bot, Snapshot):
        return True
    return bot.endswith(".py") or os.sep in bot or os.path.isfile(bot) or (os.path.isdir(bot) and not _builtin(bot))


def _builtin(bot: str) -> bool:
    try:
        bot_class(parse_bot_spec(bot)[0])
    except Exception:  # noqa: BLE001 - any failure: not a built-in
        return False
    return True


def bot_label(bot: str | Snapshot) -> str:
    """The default name of a bot argument: a file's or folder's name, or the spec."""
    if isinstance(bot, Snapshot):
        return bot.name or bot.entry
    return os.path.basename(os.path.normpath(bot)) if is_bot_file(bot) else bot


def describe_bot(bot: str | Snapshot, game: Any = None, max_bytes: int = MB) -> dict[str, Any]:
    """The wire description of a bot argument, validated (against ``game`` when given).

    A bot file or folder is copied into a snapshot (:func:`arena.submissions.take.take`, at most ``max_bytes``) and
    a
    snapshot is written into this process's private bot root: the sandbox shows the bot that copy, never the
    path it came from.

    Raises:
        ConfigError: a bot file or folder that does not exist, is too large or has no entry file.
        GameSpecError: a malformed or unknown built-in spec, or a built-in bot that cannot play ``game``.
    """
    if is_bot_file(bot):
        snap = bot if isinstance(bot, Snapshot) else take(bot, max_bytes=max_bytes)
        return {"kind": "file", "path": materialize(snap)}
    assert isinstance(bot, str)
    name, params = parse_bot_spec(bot)
    supports = getattr(bot_class(name)[0], "supports", None)
    problem = supports(game, params) if game is not None and supports is not None else None
    if problem:
        raise GameSpecError(f"bot {name!r} cannot play {game}: {problem}")
    return {"kind": "builtin", "spec": bot}


def check_untrusted_allowed(bots: Sequence[str | Snapshot], limits: Limits) -> None:
    """Refuses bot files when mandatory layers are missing, unless the code is declared trusted.

    Raises:
        SandboxUnavailableError: names the missing layers and the flag that overrides.
    """
    if limits.trusted or limits.debug or not any(is_bot_file(b) for b in bots):
        return
    from arena.sandbox import SandboxUnavailableError, check  # start-up: the sandbox loads only to play
    missing = check.missing_mandatory()
    if missing:
        raise SandboxUnavailableError(
            f"refusing to run an untrusted bot file: mandatory sandbox layers missing here: {', '.join(missing)} "
            "(see 'arena sandbox check'; pass --trusted / Limits(trusted=True) only for code you trust)")


def play_game(game: Any, bots: Sequence[str | Snapshot], seed: int, limits: Limits = Limits(), *,
              on_failure: str = "lose", names: Sequence[str] | None = None,
              observer: Callable | None = None, max_moves: int | None = None,
              chance_key: bytes | None = None, opening: Sequence[int] = (), close_later: bool = False) -> GameRecord:
    """Plays one game with each bot sandboxed in its own process and returns its record.

    Args:
        game: a Game or spec; its ``seed`` parameter (if any) is set from ``seed``.
        bots: per seat, a built-in spec (``"uct(iterations=200)"``), a path to a bot file or folder (copied into a
            snapshot of at most ``limits.max_bot_mb``), or a :class:`~arena.submissions.snapshot.Snapshot`.
        seed: the game's public seed: the game's random set-up derives from it; chance draws and each bot's
            seed derive from it and ``chance_key``.
        limits: time, memory and process limits; ``trusted`` allows bot files without the mandatory
            layers; ``debug`` runs every bot in this process with no time limits (never for untrusted code).
        on_failure: ``lose`` (the failing bot loses) or ``random_move`` (COMP424: a random legal move is
            played instead and the game goes on; a bot that crashed or ran out of memory still loses).
        names: per seat, the names written in the record (default: the bot arguments).
        observer: ``observer(state, seat, action)`` after every action.
        max_moves: adjudicate a draw after this many decisions (default: ``limits.max_moves``, else the game's
            maximum length; never more than :data:`arena.limits.MAX_DECISIONS`). A game also ends as a draw once it
            has lasted ``limits.game_seconds`` (``max_game_seconds``, else the sum of the game's own allowances; not
            in ``debug``, which has no time limits).
        chance_key: the secret that keys chance and the bots' seeds (:mod:`arena.chance`); never sent to a bot.
            None: a fresh random key for this game only (the same seed then plays different chance).
        opening: moves played before the first decision (:mod:`arena.referee.openings`), recorded in the record.
        close_later: return once every bot's kill is sent, leaving the wait for their ends and the clean-up to
            :func:`arena.sandbox.proxy.finish_closing` (the next game calls it before its bots load; a league worker
            calls it once the result is sent).

    Raises:
        ConfigError, GameSpecError: bad game, bot, option (before any process starts).
        SandboxUnavailableError: an untrusted bot file on a machine without the mandatory layers.
    """
    if on_failure not in ON_FAILURE:
        raise ConfigError(f"on_failure must be one of {', '.join(ON_FAILURE)}, not {on_failure!r}")
    game = games_pkg.load(game) if isinstance(game, str) else game
    if "seed" in game.params:
        game = game.with_params(seed=seed)
    n = game.num_players()
    if len(bots) != n:
        raise ConfigError(f"{game} needs {n} bots, got {len(bots)}")
    descriptions = [describe_bot(b, game, int(limits.max_bot_mb * MB)) for b in bots]
    names = list(names) if names is not None else [bot_label(b) for b in bots]
    if chance_key is None:
        chance_key = new_key()
    if max_moves is None:
        max_moves = limits.max_moves
    if max_moves is None:
        try:
            max_moves = game.max_game_length()
        except NotImplementedError:
            max_moves = None
    max_moves = min(max_moves or MAX_DECISIONS, MAX_DECISIONS)
    if limits.debug:
        return _play_debug(game, descriptions, seed, limits, on_failure, names, observer, max_moves, chance_key,
                           opening)
    check_untrusted_allowed(bots, limits)

    from arena.sandbox import check  # start-up: the sandbox stack loads only when a sandboxed game is played
    from arena.sandbox.launcher import Sandbox
    from arena.sandbox.proxy import BotProcess, close_all, finish_closing

    # Built-in bots are trusted: they run with whatever layers exist. Files need the mandatory ones
    # (checked above) unless trusted.
    sandbox = Sandbox(limits, game)
    proxies: list[BotProcess] = []
    try:
        for seat, desc in enumerate(descriptions):
            proxies.append(BotProcess(desc, game, seat, bot_seed(seed, seat, chance_key), limits,
                                      sandbox=sandbox, name=names[seat]))

        # Every process is set up at once (while an earlier game's bots, sent their kill, end); then each bot loads
        # its code and becomes ready while all the others are frozen or still waiting for their init, and is frozen
        # in turn (fair CPU: docs/sandbox.md). An earlier game's bot that has not exited by then is left to end: it
        # runs no code, only the kernel's exit (a few ms), and a bot's wait for a CPU is not charged to it.
        finish_closing(wait=False)
        for proxy in proxies:
            proxy.start_up()
        sandbox.started_all()  # the next game's bots may be forked ahead now, while this one is played

        # The one place each move's allowance is computed; BotProcess.step sends it to the bot and times the move
        # by it. Every move after a bot's first has the same one: built once, not once a move.
        allowances = (limits.allowance(0), limits.allowance(1))
        control = limits.clock()
        clocks = [GameClock(control) for _ in proxies] if control is not None else []
        for proxy, game_clock in zip(proxies, clocks):  # each proxy charges its bot's clock every move
            proxy.game_clock = game_clock

        def limit_for(seat: int, _decision: int) -> Limit:
            if clocks:  # with a game clock, each move's allowance depends on what is left on it
                return limits.allowance(proxies[seat].moves, clocks[seat])
            return allowances[proxies[seat].moves > 0]

        record = play(game, proxies, seed, limit=limit_for, on_failure=on_failure, max_moves=max_moves,
                      max_seconds=limits.game_seconds(n, max_moves), players=names, observer=observer,
                      chance_key=chance_key, opening=opening)
    finally:
        close_all(proxies, wait=not close_later)  # every bot's tree killed at once, then each waited for and cleaned up
    record.info["sandbox"] = sandbox.active_layers()
    record.info["missing_layers"] = check.missing_mandatory()
    record.info["limits"] = limits.to_dict()
    record.info["bot_uids"] = [p.uid for p in proxies]
    if not all(p.started for p in proxies):  # a bot that never loaded: `arena match` says why and stops
        record.info["start_failed"] = [seat for seat, p in enumerate(proxies) if not p.started]
    record.info.update(timing_info(record.move_seats, [p.move_timing for p in proxies]))
    if clocks:
        record.info.update(clock_info(record.move_seats, control, clocks))
    return record


def clock_info(move_seats: Sequence[int], control: Any, clocks: Sequence[GameClock]) -> dict[str, Any]:
    """The record's game clocks: ``time_control`` (its text), ``clock_left`` (per decision, aligned with
    ``move_seats``: seconds left on the mover's clock after it, the increment included; None where the move was
    never charged: a bot that failed before it moved) and ``clocks_end`` (per seat, what was left at the end)."""
    cursor = [0] * len(clocks)
    left: list[float | None] = []
    for seat in move_seats:
        after = clocks[seat].after
        left.append(after[cursor[seat]] if cursor[seat] < len(after) else None)
        cursor[seat] += 1
    return {"time_control": str(control), "clock_left": left, "clocks_end": [round(c.left, 4) for c in clocks]}


def timing_info(move_seats: Sequence[int], timings: Sequence[Sequence[tuple[float | None, float]]]) -> dict[str, Any]:
    """The record's evidence of time under load, per decision (aligned with ``move_seats``):

    - ``run_delays``: seconds the bot waited for a CPU during the move (None: not read, a fast move);
      present only when some move was read;
    - ``deadline_extensions``: ``[decision, seconds]`` for each move whose deadline was extended by that wait.
    """
    cursor = [0] * len(timings)
    delays: list[float | None] = []
    extensions: list[list[float]] = []
    for i, seat in enumerate(move_seats):
        own = timings[seat]
        delay, extension = own[cursor[seat]] if cursor[seat] < len(own) else (None, 0.0)
        cursor[seat] += 1
        delays.append(None if delay is None else round(delay, 4))
        if extension:
            extensions.append([i, round(extension, 4)])
    info: dict[str, Any] = {}
    if any(d is not None for d in delays):
        info["run_delays"] = delays
    if extensions:
        info["deadline_extensions"] = extensions
    return info


def load_bot_file(path: str, game: Any, seat: int, seed: int) -> Any:
    """Debug mode only: imports a bot file into this process and builds its Bot (no sandbox at all)."""
    module_name = f"arena_debug_bot_{seat}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot load bot file {path!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(path))
    spec.loader.exec_module(module)
    if not hasattr(module, "Bot"):
        raise ConfigError(f"{path} defines no class Bot")
    return module.Bot(game, seat, seed)


def _play_debug(game: Any, descriptions: list[dict[str, Any]], seed: int, limits: Limits, on_failure: str,
                names: list[str], observer: Callable | None, max_moves: int | None, chance_key: bytes,
                opening: Sequence[int] = ()) -> GameRecord:
    """TRUSTED DEBUG MODE: bots run inside this process, no sandbox, no time limits (use a debugger freely)."""
    objs = []
    for seat, desc in enumerate(descriptions):
        s = bot_seed(seed, seat, chance_key)
        objs.append(load_bot_file(desc["path"], game, seat, s) if desc["kind"] == "file"
                    else bots_pkg.make(desc["spec"], game, seat, s))
    record = play(game, objs, seed, limit=lambda seat, k: Limit(time=None, memory_mb=limits.memory_mb),
                  on_failure=on_failure, max_moves=max_moves, players=names, observer=observer, chance_key=chance_key,
                  opening=opening)
    record.info["sandbox"] = []
    record.info["debug"] = "TRUSTED DEBUG MODE: no sandbox, no time limits"
    return record
