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

from arena.chance import bot_seed, new_key
from arena.errors import ConfigError
from arena.limits import Limits
from arena.play import play
from arena.records import GameRecord
from bots.base import Limit

ON_FAILURE = ("lose", "random_move")


def is_bot_file(bot: str) -> bool:
    """True when ``bot`` names a file rather than a built-in spec."""
    return bot.endswith(".py") or os.sep in bot or os.path.isfile(bot)


def describe_bot(bot: str, game: Any = None) -> dict[str, Any]:
    """The wire description of a bot argument, validated (against ``game`` when given).

    Raises:
        ConfigError: a bot file that does not exist.
        GameSpecError: a malformed or unknown built-in spec, or a built-in bot that cannot play ``game``.
    """
    if is_bot_file(bot):
        if not os.path.isfile(bot):
            raise ConfigError(f"bot file {bot!r} does not exist (a BOT is a built-in spec or a path to a .py file)")
        _check_readable_by_bot_uid(bot)
        return {"kind": "file", "path": os.path.abspath(bot)}
    from bots.registry import bot_class, parse_bot_spec
    from games.errors import GameSpecError
    name, params = parse_bot_spec(bot)
    supports = getattr(bot_class(name)[0], "supports", None)
    problem = supports(game, params) if game is not None and supports is not None else None
    if problem:
        raise GameSpecError(f"bot {name!r} cannot play {game}: {problem}")
    return {"kind": "builtin", "spec": bot}


def _check_readable_by_bot_uid(path: str) -> None:
    """As root, bots run under their own uid: their file (and directory) must be readable by others.

    Raises:
        ConfigError: says which chmod fixes it.
    """
    if os.geteuid() != 0:
        return
    import stat
    mode = os.stat(path).st_mode
    if not mode & stat.S_IROTH:
        raise ConfigError(f"bot file {path!r} is not readable by the sandbox's unprivileged uid "
                          f"(mode {stat.S_IMODE(mode):o}); run: chmod a+r {path}")
    directory = os.path.dirname(os.path.abspath(path))
    dmode = os.stat(directory).st_mode
    if dmode & (stat.S_IROTH | stat.S_IXOTH) != stat.S_IROTH | stat.S_IXOTH:
        from arena.sandbox.spawn import shares_directory
        if not shares_directory(path):  # a shared directory is not exposed, only the file
            raise ConfigError(f"the bot's directory {directory!r} is not readable by the sandbox's unprivileged uid "
                              f"(mode {stat.S_IMODE(dmode):o}); run: chmod a+rx {directory}")


def check_untrusted_allowed(bots: Sequence[str], limits: Limits) -> None:
    """Refuses bot files when mandatory layers are missing, unless the code is declared trusted.

    Raises:
        SandboxUnavailableError: names the missing layers and the flag that overrides.
    """
    if limits.trusted or limits.debug or not any(is_bot_file(b) for b in bots):
        return
    from arena.sandbox import SandboxUnavailableError, check
    missing = check.missing_mandatory()
    if missing:
        raise SandboxUnavailableError(
            f"refusing to run an untrusted bot file: mandatory sandbox layers missing here: {', '.join(missing)} "
            "(see 'arena sandbox check'; pass --trusted / Limits(trusted=True) only for code you trust)")


def play_game(game: Any, bots: Sequence[str], seed: int, limits: Limits = Limits(), *,
              on_failure: str = "lose", names: Sequence[str] | None = None,
              observer: Callable | None = None, max_moves: int | None = None,
              chance_key: bytes | None = None) -> GameRecord:
    """Plays one game with each bot sandboxed in its own process and returns its record.

    Args:
        game: a Game or spec; its ``seed`` parameter (if any) is set from ``seed``.
        bots: per seat, a built-in spec (``"uct(iterations=200)"``) or a path to a bot file.
        seed: the game's public seed: the game's random set-up derives from it; chance draws and each bot's
            seed derive from it and ``chance_key``.
        limits: time, memory and process limits; ``trusted`` allows bot files without the mandatory
            layers; ``debug`` runs every bot in this process with no time limits (never for untrusted code).
        on_failure: ``lose`` (the failing bot loses) or ``random_move`` (COMP424: a random legal move is
            played instead and the game goes on; a bot that crashed or ran out of memory still loses).
        names: per seat, the names written in the record (default: the bot arguments).
        observer: ``observer(state, seat, action)`` after every action.
        max_moves: adjudicate a draw after this many decisions (default: the game's maximum length).
        chance_key: the secret that keys chance and the bots' seeds (:mod:`arena.chance`); never sent to a bot.
            None: a fresh random key for this game only (the same seed then plays different chance).

    Raises:
        ConfigError, GameSpecError: bad game, bot, option (before any process starts).
        SandboxUnavailableError: an untrusted bot file on a machine without the mandatory layers.
    """
    import games as games_pkg

    if on_failure not in ON_FAILURE:
        raise ConfigError(f"on_failure must be one of {', '.join(ON_FAILURE)}, not {on_failure!r}")
    game = games_pkg.load(game) if isinstance(game, str) else game
    if "seed" in game.params:
        game = game.with_params(seed=seed)
    n = game.num_players()
    if len(bots) != n:
        raise ConfigError(f"{game} needs {n} bots, got {len(bots)}")
    descriptions = [describe_bot(b, game) for b in bots]
    names = list(names) if names is not None else [os.path.basename(b) if is_bot_file(b) else b for b in bots]
    if chance_key is None:
        chance_key = new_key()
    if max_moves is None:
        try:
            max_moves = game.max_game_length()
        except NotImplementedError:
            max_moves = None
    if limits.debug:
        return _play_debug(game, descriptions, seed, limits, on_failure, names, observer, max_moves, chance_key)
    check_untrusted_allowed(bots, limits)

    from arena.sandbox import check
    from arena.sandbox.proxy import BotProcess
    from arena.sandbox.runner import Sandbox

    # Built-in bots are trusted: they run with whatever layers exist. Files need the mandatory ones
    # (checked above) unless trusted.
    sandbox = Sandbox(limits, game)
    proxies: list[BotProcess] = []
    try:
        for seat, desc in enumerate(descriptions):
            proxies.append(BotProcess(desc, game, seat, bot_seed(seed, seat, chance_key), limits,
                                      sandbox=sandbox, name=names[seat]))
            proxies[-1].start_up()  # ready and frozen before the next bot starts (fair CPU: docs/sandbox.md)

        def limit_for(seat: int, _decision: int) -> Limit:
            p = proxies[seat]
            return Limit(time=limits.time_for(p._moves), memory_mb=limits.memory_mb, first_move=p._moves == 0)

        record = play(game, proxies, seed, limit=limit_for, on_failure=on_failure, max_moves=max_moves,
                      players=names, observer=observer, chance_key=chance_key)
    finally:
        for p in proxies:
            p.close()
    record.info["sandbox"] = sandbox.active_layers()
    record.info["missing_layers"] = check.missing_mandatory()
    record.info["limits"] = limits.to_dict()
    record.info["bot_uids"] = [p.uid for p in proxies]
    record.info.update(timing_info(record.move_seats, [p.move_timing for p in proxies]))
    return record


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
                names: list[str], observer: Callable | None, max_moves: int | None, chance_key: bytes) -> GameRecord:
    """TRUSTED DEBUG MODE: bots run inside this process, no sandbox, no time limits (use a debugger freely)."""
    import bots as bots_pkg
    objs = []
    for seat, desc in enumerate(descriptions):
        s = bot_seed(seed, seat, chance_key)
        objs.append(load_bot_file(desc["path"], game, seat, s) if desc["kind"] == "file"
                    else bots_pkg.make(desc["spec"], game, seat, s))
    record = play(game, objs, seed, limit=lambda seat, k: Limit(time=None, memory_mb=limits.memory_mb),
                  on_failure=on_failure, max_moves=max_moves, players=names, observer=observer, chance_key=chance_key)
    record.info["sandbox"] = []
    record.info["debug"] = "TRUSTED DEBUG MODE: no sandbox, no time limits"
    return record
