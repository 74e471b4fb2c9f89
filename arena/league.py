"""League files: TOML → a validated :class:`LeagueConfig` (format: docs/leagues.md).

Everything is checked before anything is written: a bad file raises :class:`arena.errors.ConfigError`
with a one-line message naming the file, the problem and the valid values.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import ConfigError
from arena.limits import Limits
from games.errors import GameSpecError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_PROBATION_AFTER = 5
ON_FAILURE = ("lose", "random_move")
TABLES = ("auto", "all", "balanced")
_KEYS = ("name", "games", "game", "bots", "games_per_pairing", "seed", "limits", "concurrency", "database",
         "on_failure", "probation_after", "tables")
_BOT_KEYS = ("name", "spec", "file", "games", "trusted")


@dataclass(frozen=True)
class BotEntry:
    """One bot of a league file: a built-in spec or a bot file."""

    name: str
    """Display name, unique within the league."""
    spec: str | None = None
    """Built-in bot spec such as ``mc(n=100)``."""
    file: Path | None = None
    """Path of a bot file (resolved against the league file's directory)."""
    source: str | None = None
    """The file's content when it was read."""
    games: tuple[str, ...] | None = None
    """The game specs this bot plays (None: all)."""
    trusted: bool = False
    """A trusted bot file may run without the sandbox's mandatory layers."""


@dataclass(frozen=True)
class LeagueConfig:
    """A validated league."""

    name: str
    games: tuple[str, ...]
    """Canonical game specs (``str(games.load(spec))``), in file order."""
    bots: tuple[BotEntry, ...]
    games_per_pairing: int = 2
    """Games each table of bots plays per game spec: a multiple of the game's seat count."""
    seed: int = 0
    """Base seed: every game's seed derives from it, the game spec and the round."""
    limits: Limits = field(default_factory=Limits)
    concurrency: int | None = None
    """Games at once (None: the number of cores)."""
    database: Path | None = None
    """The store (None: the default, arena.sqlite in the current directory)."""
    on_failure: str = "lose"
    probation_after: int = DEFAULT_PROBATION_AFTER
    """A bot failing this many games in a row is put on probation (0: never)."""
    tables: str = "auto"
    """Tables of 3-4 player games: all combinations, a balanced subset, or auto (docs/leagues.md)."""
    path: Path | None = None

    def seats(self, game: str) -> int:
        import games as games_pkg
        return games_pkg.load(game).num_players()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able summary stored with the league."""
        return {"name": self.name, "games": list(self.games), "games_per_pairing": self.games_per_pairing,
                "seed": self.seed, "limits": self.limits.to_dict(), "on_failure": self.on_failure,
                "probation_after": self.probation_after, "tables": self.tables,
                "path": str(self.path) if self.path else None}


def load_config(path: str | Path) -> LeagueConfig:
    """Reads and validates a league file.

    Raises:
        ConfigError: missing file, malformed TOML, unknown key, unknown game or bot, missing bot file, bad
            number.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(f"league file {path} not found") from None
    except OSError as exc:
        raise ConfigError(f"cannot read league file {path}: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: malformed TOML: {exc}") from None
    return parse_config(data, base=path.parent, where=str(path), path=path)


def parse_config(data: dict[str, Any], *, base: Path = Path("."), where: str = "league",
                 path: Path | None = None) -> LeagueConfig:
    """Validates a parsed league table (see :func:`load_config`)."""
    import games as games_pkg

    def fail(msg: str) -> ConfigError:
        return ConfigError(f"{where}: {msg}")

    unknown = [k for k in data if k not in _KEYS]
    if unknown:
        raise fail(f"unknown key {unknown[0]!r}; valid keys: {', '.join(_KEYS)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise fail("'name' must be a non-empty string (the league's name in the store)")

    raw_games = data.get("games", data.get("game"))
    if isinstance(raw_games, str):
        raw_games = [raw_games]
    if not isinstance(raw_games, list) or not raw_games or not all(isinstance(g, str) for g in raw_games):
        raise fail("'games' must be a non-empty list of game specs, e.g. games = [\"nim\", \"hex(size=5)\"]")
    specs: list[str] = []
    seat_counts: dict[str, int] = {}
    for raw in raw_games:
        try:
            game = games_pkg.load(raw)
        except GameSpecError as exc:
            raise fail(str(exc)) from None
        except ImportError as exc:
            raise fail(str(exc).splitlines()[0]) from None
        spec = str(game)
        if match_game(spec, specs):
            raise fail(f"game {spec!r} is listed twice")
        specs.append(spec)
        seat_counts[spec] = game.num_players()

    gpp = data.get("games_per_pairing", math.lcm(*seat_counts.values()))
    if not _is_int(gpp) or gpp < 1:
        raise fail(f"'games_per_pairing' must be a positive integer, got {gpp!r}")
    for spec, k in seat_counts.items():
        if gpp % k:
            raise fail(f"'games_per_pairing' ({gpp}) must be a multiple of the {k} seats of {spec} so every bot "
                       "plays every seat equally often")

    seed = data.get("seed", 0)
    if not _is_int(seed) or not 0 <= seed < 2**63:
        raise fail(f"'seed' must be an integer in 0..2**63-1, got {seed!r}")
    limits_data = data.get("limits", {})
    if not isinstance(limits_data, dict):
        raise fail("'limits' must be a table, e.g. [limits] move_time = 1.0")
    try:
        limits = Limits.from_dict(limits_data)
    except (ConfigError, TypeError) as exc:
        raise fail(str(exc)) from None
    concurrency = data.get("concurrency")
    if concurrency is not None and (not _is_int(concurrency) or concurrency < 1):
        raise fail(f"'concurrency' must be a positive integer, got {concurrency!r}")
    database = data.get("database")
    if database is not None and (not isinstance(database, str) or not database):
        raise fail("'database' must be a path string")
    on_failure = data.get("on_failure", "lose")
    if on_failure not in ON_FAILURE:
        raise fail(f"'on_failure' must be one of {', '.join(ON_FAILURE)}, got {on_failure!r}")
    probation = data.get("probation_after", DEFAULT_PROBATION_AFTER)
    if not _is_int(probation) or probation < 0:
        raise fail(f"'probation_after' must be a non-negative integer (0: never), got {probation!r}")
    tables = data.get("tables", "auto")
    if tables not in TABLES:
        raise fail(f"'tables' must be one of {', '.join(TABLES)}, got {tables!r}")

    bots = _parse_bots(data.get("bots"), specs, base, fail)
    for spec, k in seat_counts.items():
        players = [b for b in bots if b.games is None or spec in b.games]
        if len(players) < k:
            raise fail(f"{spec} needs at least {k} bots that play it, the league has {len(players)}")
    return LeagueConfig(name=name.strip(), games=tuple(specs), bots=tuple(bots), games_per_pairing=gpp, seed=seed,
                        limits=limits, concurrency=concurrency,
                        database=None if database is None else (base / database),
                        on_failure=on_failure, probation_after=probation, tables=tables, path=path)


def _parse_bots(raw: Any, specs: list[str], base: Path, fail: Any) -> list[BotEntry]:
    import games as games_pkg
    from bots.registry import bot_class, parse_bot_spec

    if not isinstance(raw, list) or not raw:
        raise fail("'bots' must be a non-empty list: bot specs (\"random\") or tables "
                   "({name = \"mine\", file = \"my_bot.py\"})")
    entries: list[BotEntry] = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            item = {"spec": item}
        if not isinstance(item, dict):
            raise fail(f"bots[{i}] must be a spec string or a table with spec or file")
        unknown = [k for k in item if k not in _BOT_KEYS]
        if unknown:
            raise fail(f"bots[{i}]: unknown key {unknown[0]!r}; valid keys: {', '.join(_BOT_KEYS)}")
        spec, file = item.get("spec"), item.get("file")
        if (spec is None) == (file is None):
            raise fail(f"bots[{i}] needs exactly one of 'spec' (a built-in bot) or 'file' (a bot file)")
        plays = item.get("games")
        if plays is not None:
            if isinstance(plays, str):
                plays = [plays]
            if not isinstance(plays, list) or not plays:
                raise fail(f"bots[{i}]: 'games' must be a non-empty list of the league's game specs")
            canon = []
            for g in plays:
                c = match_game(g, specs)
                if c is None:
                    raise fail(f"bots[{i}]: game {g!r} is not in the league; league games: {', '.join(specs)}")
                canon.append(c)
            plays = tuple(canon)
        trusted = item.get("trusted", False)
        if not isinstance(trusted, bool):
            raise fail(f"bots[{i}]: 'trusted' must be true or false")
        source = path = None
        if spec is not None:
            if not isinstance(spec, str):
                raise fail(f"bots[{i}]: 'spec' must be a string")
            try:
                bot_name, params = parse_bot_spec(spec)
                cls, _ = bot_class(bot_name)
            except GameSpecError as exc:
                raise fail(f"bots[{i}]: {exc}") from None
            supports = getattr(cls, "supports", None)
            for g in plays or specs:
                problem = supports(games_pkg.load(g), params) if supports else None
                if problem:
                    raise fail(f"bot {spec!r} cannot play {g}: {problem.split(' (')[0]}; restrict it with "
                               f"games = [...]")
        else:
            if not isinstance(file, str):
                raise fail(f"bots[{i}]: 'file' must be a path string")
            path = (base / file).resolve()
            if not path.is_file():
                raise fail(f"bot file {file!r} not found (looked for {path})")
            source = path.read_text()
        name = item.get("name", spec if spec is not None else Path(str(file)).stem)
        if not isinstance(name, str) or not name.strip():
            raise fail(f"bots[{i}]: 'name' must be a non-empty string")
        if any(e.name == name for e in entries):
            raise fail(f"bot name {name!r} is used twice; give each bot a unique name = \"...\"")
        entries.append(BotEntry(name=name.strip(), spec=spec, file=path, source=source, games=plays, trusted=trusted))
    return entries


def _game_identity(spec: str) -> tuple[str, tuple[tuple[str, Any], ...]] | None:
    import games as games_pkg
    try:
        game = games_pkg.load(spec)
    except (GameSpecError, ImportError):
        return None
    return game.name, tuple(sorted(game.get_parameters().items()))


def match_game(spec: Any, specs: list[str] | tuple[str, ...]) -> str | None:
    """The league spec naming the same game as ``spec`` (``nim(k=3)`` is ``nim``), or None."""
    if not isinstance(spec, str):
        return None
    ident = _game_identity(spec)
    return next((s for s in specs if ident is not None and _game_identity(s) == ident), None)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)
