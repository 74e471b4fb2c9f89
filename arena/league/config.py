"""League files: TOML → a validated :class:`LeagueConfig` (format: docs/leagues.md).

Everything is checked before anything is written: a bad file raises :class:`arena.errors.ConfigError`
with a one-line message naming the file, the problem and the valid values.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

import games as games_pkg
from arena.errors import ConfigError
from arena.league.keys import (
    DEFAULT_PROBATION_AFTER,
    DEFAULT_PROBATION_FAILURES,
    DEFAULT_PROBATION_WINDOW,
    BotTable,
    LeagueFile,
)
from arena.league.opening_books import make_book
from arena.limits import Limits
from arena.referee.openings import OpeningBook
from arena.schema import explain, show
from arena.text import name_problem, quoted
from arena.tournament import FORMATS
from bots.registry import bot_class, parse_bot_spec
from games.errors import GameSpecError


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
    entry: str | None = None
    """A folder bot's entry module (None: ``bot.py``)."""
    format: str = "arena"
    """``arena`` (a bot file or folder) or ``comp424`` (a COMP424 folder run unchanged,
    :mod:`arena.adapters.comp424`)."""
    agent: str | None = None
    """The COMP424 agent's registered name (None: ``student_agent``)."""


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
    probation_window: int = DEFAULT_PROBATION_WINDOW
    probation_failures: int = DEFAULT_PROBATION_FAILURES
    """A bot with at least this many failed games among its last ``probation_window`` is put on probation
    (0: never)."""
    tables: str = "auto"
    """Tables of 3-4 player games: all combinations, a balanced subset, or auto (docs/leagues.md)."""
    format: str = "round_robin"
    """``round_robin``, ``gauntlet`` (only tables with a challenger play) or a tournament: ``swiss``, ``knockout``,
    ``double_elimination`` (:mod:`arena.tournament`)."""
    tournament: dict[str, Any] = field(default_factory=dict)
    """A tournament's own keys: ``rounds``, ``seeding``, ``seeding_league``, ``bye_points``, ``tiebreak_games``,
    ``sudden_death``, ``bracket_reset`` (empty for other formats)."""
    challengers: tuple[str, ...] = ()
    """A gauntlet's bots under test (names)."""
    openings: OpeningBook | None = None
    """Varied openings (:mod:`arena.referee.openings`); None: every game from the start."""
    schedule: str = "full"
    """``full`` or ``adaptive`` (:mod:`arena.league.adaptive`)."""
    stop: dict[str, Any] = field(default_factory=dict)
    """An adaptive schedule's stopping rule: ``top`` (None with ``rank_all``), ``rank_all``, ``confidence``,
    ``batch``."""
    path: Path | None = None
    deadline: float | None = None
    """``arena serve``: uploads after this Unix time are refused (None: no deadline)."""
    max_submissions_per_hour: int = 10
    """``arena serve``: uploads per account in any hour."""
    upload_format: str = "arena"
    """``arena serve``: ``arena`` (a zip is a folder bot) or ``comp424`` (a zip is a COMP424 checkout)."""
    leaderboard_public: bool = True
    """``arena serve``: the leaderboard, bot pages and replays without logging in."""

    def seats(self, game: str) -> int:
        return games_pkg.load(game).num_players()

    def relaxed(self) -> list[str]:
        """The sandbox layers this league turns off or relaxes, in words (empty: the full sandbox for every bot).
        Said on every run and stored with the league, so its leaderboard says it too."""
        out = self.limits.relaxed()
        trusted = [b.name for b in self.bots if b.trusted and b.file is not None]
        if trusted and not self.limits.trusted:
            out.append(f"trusted bot files run without the mandatory sandbox layers: {', '.join(trusted)}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able summary stored with the league."""
        return {"name": self.name, "games": list(self.games), "games_per_pairing": self.games_per_pairing,
                "seed": self.seed, "limits": self.limits.to_dict(), "on_failure": self.on_failure,
                "probation_after": self.probation_after, "probation_window": self.probation_window,
                "probation_failures": self.probation_failures, "tables": self.tables,
                "sandbox_relaxed": self.relaxed(), "path": str(self.path.resolve()) if self.path else None,
                **({"format": self.format, "challengers": list(self.challengers)} if self.format != "round_robin"
                   else {}),
                **({"tournament": self.tournament} if self.tournament else {}),
                **({"openings": self.openings.to_dict()} if self.openings else {}),
                **({"schedule": self.schedule, "stop": self.stop} if self.schedule != "full" else {})}


def stored_move_time(config: dict[str, Any]) -> float:
    """The move time limit of a stored league config (:meth:`LeagueConfig.to_dict`); the default when unreadable."""
    return stored_limits(config).move_time


def stored_limits(config: dict[str, Any]) -> Limits:
    """The limits of a stored league config (:meth:`LeagueConfig.to_dict`); the defaults when unreadable."""
    try:
        return Limits.from_dict(config.get("limits", {}))
    except (ConfigError, AttributeError):
        return Limits()


def stored_relaxed(config: dict[str, Any]) -> list[str]:
    """What a stored league config (:meth:`LeagueConfig.to_dict`) says about a relaxed sandbox; a league stored
    before it was recorded: what its limits say."""
    if "sandbox_relaxed" in config:
        return [str(line) for line in config["sandbox_relaxed"]]
    limits = config.get("limits", {})
    try:
        return Limits.from_dict({k: v for k, v in limits.items() if k in ("debug", "trusted")}).relaxed()
    except (ConfigError, AttributeError):
        return ["limits: unreadable in the store, the sandbox may have been relaxed"]


def load_config(path: str | Path) -> LeagueConfig:
    """Reads and validates a league file.

    Raises:
        ConfigError: missing file, malformed TOML, unknown key, unknown game or bot, missing bot file, bad
            number.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"league file {path} not found") from None
    except OSError as exc:
        raise ConfigError(f"cannot read league file {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save the "
                          "league file as UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: malformed TOML: {exc}") from None
    return parse_config(data, base=path.parent, where=str(path), path=path)


def parse_config(data: dict[str, Any], *, base: Path = Path("."), where: str = "league",
                 path: Path | None = None) -> LeagueConfig:
    """Validates a parsed league table (see :func:`load_config`)."""
    def fail(msg: str) -> ConfigError:
        return ConfigError(f"{where}: {msg}")

    try:  # types and ranges of every key: the schema (arena/league/keys.py, the tables in docs/leagues.md)
        top = LeagueFile.model_validate(data)
    except ValidationError as exc:
        raise fail(explain(exc, LeagueFile)) from None
    try:
        limits = Limits.from_dict(top.limits)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if top.games is not None and top.game is not None:
        raise fail("give 'games' or 'game', not both")
    raw_games = top.games if top.games is not None else top.game
    if raw_games is None:
        raise fail("'games' is required: a game spec or a list of them, e.g. games = [\"nim\", \"hex(size=5)\"]")
    name = top.name.strip()
    if not name:
        raise fail("name must not be blank (it is the league's name in the store)")
    if (problem := name_problem(name)) is not None:  # names are shown everywhere: printable, short (arena/text.py)
        raise fail(f"name {quoted(name)} {problem}")
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

    gpp = top.games_per_pairing if top.games_per_pairing is not None else math.lcm(*seat_counts.values())
    tournament = _tournament_keys(top, seat_counts, base, fail)
    for spec, k in seat_counts.items():
        if gpp % k and not tournament:  # (a tournament's match alternates seats game by game: any length)
            raise fail(f"games_per_pairing = {gpp} must be a multiple of the {k} seats of {spec} so every bot "
                       "plays every seat equally often")
    if top.probation_failures > top.probation_window:
        raise fail(f"probation_failures = {top.probation_failures} is not allowed: at most probation_window "
                   f"({top.probation_window})")

    bots = _parse_bots(top.bots, specs, base, fail)
    if not bots and top.field_from is None:
        raise fail("bots is required: a list of bot specs or [[bots]] tables (a tournament may take its field from "
                   "another league with field_from = \"name\" instead)")
    for spec, k in seat_counts.items():
        players = [b for b in bots if b.games is None or spec in b.games]
        if len(players) < k and top.field_from is None:
            raise fail(f"{spec} needs at least {k} bots that play it, the league has {len(players)}")
    # a tournament's match plays every game of the league (arena.tournament.matches): a restriction cannot hold
    partial = next((b for b in bots if tournament and b.games is not None and any(s not in b.games for s in specs)),
                   None)
    if partial is not None:
        raise fail(f"bot {partial.name!r} plays only {', '.join(partial.games or ())}; a tournament's match plays "
                   "every game of the league (remove its games = [...], or play the others in a league of their own)")
    challengers, book, stop = _ranking_keys(top, bots, specs, seat_counts, base, fail)
    return LeagueConfig(name=name, games=tuple(specs), bots=tuple(bots), games_per_pairing=gpp, seed=top.seed,
                        limits=limits, concurrency=top.concurrency,
                        database=None if top.database is None else (base / top.database),
                        on_failure=top.on_failure, probation_after=top.probation_after,
                        probation_window=top.probation_window, probation_failures=top.probation_failures,
                        tables=top.tables, path=path, format=top.format, challengers=challengers, openings=book,
                        schedule=top.schedule, stop=stop, deadline=_deadline(top.deadline, fail),
                        max_submissions_per_hour=top.max_submissions_per_hour, upload_format=top.upload_format,
                        leaderboard_public=top.leaderboard_public, tournament=tournament)


TOURNAMENTS = FORMATS
"""The formats that are tournaments (:data:`arena.tournament.FORMATS`)."""
_TOURNAMENT_KEYS = ("rounds", "seeding", "seeding_league", "bye_points", "tiebreak_games", "sudden_death",
                    "bracket_reset", "field_from")


def _tournament_keys(top: LeagueFile, seat_counts: dict[str, int], base: Path, fail: Any) -> dict[str, Any]:
    """A tournament's keys (docs/tournaments.md), checked; empty for a round robin or a gauntlet (which refuse
    them)."""
    given = top.model_fields_set & set(_TOURNAMENT_KEYS)
    if top.format not in TOURNAMENTS:
        if given:
            raise fail(f"{sorted(given)[0]} is only for a tournament (format = \"swiss\", \"knockout\" or "
                       "\"double_elimination\"); remove it or set the format")
        return {}
    many = [s for s, k in seat_counts.items() if k != 2]
    if many:
        raise fail(f"format = {top.format!r} plays matches of two bots; {many[0]} has {seat_counts[many[0]]} seats "
                   "(use format = \"round_robin\" for 3-4 player games)")
    if top.schedule != "full":
        raise fail(f"schedule = {top.schedule!r} is for a round robin; a tournament plays its own rounds (remove "
                   "schedule)")
    if top.rounds is not None and top.format != "swiss":
        raise fail("rounds is only for format = \"swiss\" (a bracket has as many rounds as it takes)")
    for key in ("bye_points",):
        if key in given and top.format != "swiss":
            raise fail(f"{key} is only for format = \"swiss\"")
    for key in ("tiebreak_games", "sudden_death"):
        if key in given and top.format == "swiss":
            raise fail(f"{key} is for knockout and double elimination; a tied Swiss match is a draw")
    if "bracket_reset" in given and top.format != "double_elimination":
        raise fail("bracket_reset is only for format = \"double_elimination\"")
    seeding = top.seeding
    if seeding == "ratings" and top.seeding_league is None:
        raise fail('seeding = "ratings" needs seeding_league = "name": the league (same database) whose ratings '
                   "seed the tournament")
    if seeding not in ("order", "ratings"):
        path = base / seeding
        if not path.is_file():
            raise fail(f"seeding = {seeding!r}: no such file (looked for {path}); seeding is \"order\", "
                       "\"ratings\" or a CSV file of bot names, first seed first")
        seeding = str(path.resolve())
    elif top.seeding_league is not None and seeding != "ratings":
        raise fail('seeding_league is only read with seeding = "ratings"')
    if top.field_from is not None and top.field_from.strip() == top.name.strip():
        raise fail("field_from names this league itself; name the league whose bots enter (e.g. the ladder)")
    return {"rounds": top.rounds, "seeding": seeding, "seeding_league": top.seeding_league,
            "field_from": top.field_from,
            "bye_points": top.bye_points, "tiebreak_games": top.tiebreak_games, "sudden_death": top.sudden_death,
            "bracket_reset": top.bracket_reset}


def _deadline(value: str | None, fail: Any) -> float | None:
    """An RFC 3339 time (with its offset, or Z) as a Unix time."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        when = None
    if when is None or when.tzinfo is None or not re.fullmatch(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?"
                                                                r"(Z|[+-]\d\d:\d\d)", value, re.I):
        raise fail(f"deadline = {value!r} is not an RFC 3339 time with its offset, e.g. 2026-12-01T23:59:00Z")
    return when.timestamp()


def _ranking_keys(top: LeagueFile, bots: list[BotEntry], specs: list[str], seat_counts: dict[str, int], base: Path,
                  fail: Any) -> tuple[tuple[str, ...], OpeningBook | None, dict[str, Any]]:
    """``format``/``challengers``, ``openings`` and ``schedule``/``stop`` (issue 17; docs/ratings.md), checked
    against the bots and games."""
    names = [b.name for b in bots]
    challengers: tuple[str, ...] = ()
    if top.format == "gauntlet":
        if not top.challengers:
            raise fail('format = "gauntlet" needs challengers = ["bot name", ...]: the bots under test')
        for c in top.challengers:
            if c not in names:
                raise fail(f"challengers: {quoted(c)} is not a bot of this league; its bots: "
                           f"{', '.join(quoted(n) for n in names)}")
        challengers = tuple(dict.fromkeys(top.challengers))
    elif top.challengers is not None:
        raise fail('challengers is only for format = "gauntlet"; add format = "gauntlet" or remove challengers')
    book = None
    if top.openings is not None:
        try:  # the same checks as arena match --openings (arena/referee/openings.py)
            book = make_book(top.openings, base, specs)
        except ConfigError as exc:
            raise fail(str(exc)) from None
    stop: dict[str, Any] = {}
    if top.schedule == "adaptive":
        if top.format == "gauntlet":
            raise fail('schedule = "adaptive" ranks the whole league; a gauntlet plays its fixed fixtures '
                       '(use schedule = "full")')
        many = [s for s, k in seat_counts.items() if k != 2]
        if many:
            raise fail(f'schedule = "adaptive" chooses pairings of two bots; {many[0]} has {seat_counts[many[0]]} '
                       'seats (use schedule = "full")')
        rule = top.stop
        stop = {"top": None if rule is not None and rule.rank_all and rule.top is None else
                min(rule.top if rule is not None and rule.top is not None else 10, len(bots)),
                "rank_all": bool(rule is not None and rule.rank_all),
                "confidence": rule.confidence if rule is not None else 0.95,
                "batch": rule.batch if rule is not None else None}
    elif top.stop is not None:
        raise fail('stop is only for schedule = "adaptive"; add schedule = "adaptive" or remove stop')
    return challengers, book, stop


def _parse_bots(raw: list[Any], specs: list[str], base: Path, fail: Any) -> list[BotEntry]:

    entries: list[BotEntry] = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            item = {"spec": item}
        if not isinstance(item, dict):
            raise fail(f"bots[{i}] = {show(item)} is not allowed: a bot spec string or a table with spec or file")
        try:
            table = BotTable.model_validate(item)
        except ValidationError as exc:
            raise fail(explain(exc, BotTable, where=lambda loc: f"bots[{i}]." + ".".join(map(str, loc)))) from None  # noqa: B023
        spec, file = table.spec, table.file
        if (spec is None) == (file is None):
            raise fail(f"bots[{i}] needs exactly one of 'spec' (a built-in bot) or 'file' (a bot file)")
        plays: tuple[str, ...] | None = None
        if table.games is not None:
            canon = []
            for g in table.games:
                c = match_game(g, specs)
                if c is None:
                    raise fail(f"bots[{i}]: game {g!r} is not in the league; league games: {', '.join(specs)}")
                canon.append(c)
            plays = tuple(canon)
        source = path = None
        if spec is not None and (table.format != "arena" or table.agent is not None):
            raise fail(f"bots[{i}].format and agent are for a bot file or folder (file = ...), not a built-in spec")
        if table.format == "comp424":
            # start-up: the COMP424 adapter loads only for its bots
            from arena.adapters.comp424 import check_entry
            try:
                path = check_entry(base, file, table.entry, plays or specs)
            except ValueError as exc:
                raise fail(f"bots[{i}]: {exc}") from None
        elif table.agent is not None:
            raise fail(f"bots[{i}].agent is for format = \"comp424\" only")
        elif spec is not None:
            if table.entry is not None:
                raise fail(f"bots[{i}].entry is only for a folder bot (file = \"folder\"), not a built-in spec")
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
            assert file is not None
            path = (base / file).resolve()
            if path.is_dir():  # a folder bot: its snapshot (arena.submissions.snapshot) is taken when the league runs
                from arena.adapters.comp424_names import (  # start-up: only for folder bots
                    COURSE_FILES,
                    is_course_folder,
                )
                if not (path / (table.entry or "bot.py")).is_file():
                    if table.entry is None and is_course_folder(n for n in COURSE_FILES if (path / n).is_file()):
                        raise fail(f"bot folder {file!r} is a COMP424 checkout (it has a student_agent.py), not an "
                                   "arena bot: add format = \"comp424\" to its [[bots]] entry (docs/comp424.md)")
                    raise fail(f"bot folder {file!r} has no {table.entry or 'bot.py'}: add it (it defines class Bot) "
                               "or name the entry file with entry = \"name.py\"")
            elif not path.is_file():
                raise fail(f"bot file {file!r} not found (looked for {path})")
            elif table.entry is not None:
                raise fail(f"bots[{i}].entry is only for a folder bot; {file!r} is a file")
            else:
                source = path.read_text()
        name = (table.name if table.name is not None else spec if spec is not None else Path(str(file)).stem).strip()
        if not name:
            raise fail(f"bots[{i}].name must not be blank")
        if (problem := name_problem(name)) is not None:
            raise fail(f"bots[{i}].name {quoted(name)} {problem}"
                       + ("" if table.name is not None else "; give the bot a name = \"...\""))
        if any(e.name == name for e in entries):
            raise fail(f"bot name {name!r} is used twice; give each bot a unique name = \"...\"")
        entries.append(BotEntry(name=name, spec=spec, file=path, source=source, games=plays, trusted=table.trusted,
                                entry=table.entry, format=table.format, agent=table.agent))
    return entries


def _game_identity(spec: str) -> tuple[str, tuple[tuple[str, Any], ...]] | None:
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
