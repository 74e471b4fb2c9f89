"""What a league run plays, decided before its first game: the league file's bots entered (snapshots taken, changed
versions entered, removed bots retired), the schedule planned and compared with the stored games, and each missing
fixture made into a :class:`~arena.league.task.Task` (its seed, limits, opening and the bots' snapshots).

Nothing here plays a game or writes a result: the runner (:mod:`arena.league.runner`) does, through the one writer
(:mod:`arena.league.writer`).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from arena.adapters.comp424 import DEFAULT_AGENT, take_agent
from arena.errors import ConfigError
from arena.league.config import TOURNAMENTS, LeagueConfig
from arena.league.schedule import Fixture, keyed_seed, league_schedule
from arena.league.task import Task
from arena.limits import Limits
from arena.submissions.snapshot import MB, Snapshot
from arena.submissions.take import take
from arena.tournament.progress import Settings, frozen_field, replay, seeded_field
from arena.tournament.progress import batches as progress_batches
from leaderboards.store import Bot, Store


def take_snapshots(config: LeagueConfig) -> dict[str, Snapshot]:
    """Snapshots of the league file's file bots, by name (taken once, before anything is written).

    Raises:
        ConfigError: a bot over ``limits.max_bot_mb``, without its entry file, or with a symlink inside.
    """
    setting = "max_bot_mb in the league's [limits]"
    return {entry.name: take_agent(entry.file, entry.agent or DEFAULT_AGENT, int(config.limits.max_bot_mb * MB),
                                   setting=setting) if entry.format == "comp424" else
            take(entry.file, entry.entry, int(config.limits.max_bot_mb * MB), setting=setting)
            for entry in config.bots if entry.file is not None}


def sync_bots(store: Store, league_id: int, config: LeagueConfig,
              snapshots: dict[str, Snapshot] | None = None, entered: list[Bot] | None = None) -> list[Bot]:
    """Enters the league file's bots (a changed spec or snapshot becomes a new version) and retires config bots
    that were removed from the file. Submitted bots are left alone. Returns the bots not retired; the new
    versions are appended to ``entered``."""
    snapshots = take_snapshots(config) if snapshots is None else snapshots
    listed = set()
    for entry in config.bots:
        listed.add(entry.name)
        bot, new = store.upsert_bot(league_id, entry.name, origin="config", spec=entry.spec,
                                    snapshot=snapshots.get(entry.name), games=entry.games, trusted=entry.trusted)
        if new and entered is not None:
            entered.append(bot)
    for bot in store.bots(league_id, include_retired=False):
        if bot.origin == "config" and bot.name not in listed:
            store.retire_bot(bot.id, "removed from the league file")
    return store.bots(league_id, include_retired=False)


def enter_field_from(store: Store, league_id: int, source: str) -> list[Bot]:
    """Copies into the tournament the current version of every bot entered into league ``source`` (same store) by
    ``arena submit`` or ``arena serve``: active ones only (a bot on probation fails its games). Their game
    restrictions are the source league's and are not copied (a final may play other games).

    Raises:
        ConfigError: no league ``source`` in this store."""
    other = store.league(source)
    if other is None:
        raise ConfigError(f"field_from = {source!r}: no such league in {store.path}; name a league of the same "
                          "database (its submitted bots enter the tournament)")
    entered = []
    for bot in store.bots(other.id, include_retired=False):
        if bot.origin != "submit" or bot.status != "active":
            continue
        copy, new = store.upsert_bot(league_id, bot.name, origin="submit", spec=bot.spec, trusted=bot.trusted,
                                     snapshot=store.snapshot(bot.id) if bot.kind == "file" else None)
        if new:
            entered.append(copy)
    return entered


def plan(store: Store, league_id: int, config: LeagueConfig) -> list[Fixture]:
    """The league's whole schedule for its active bots (stored games included); a tournament's: the games of its
    current round (its later rounds depend on these)."""
    if config.format in TOURNAMENTS:
        field = frozen_field(store, league_id)
        return [] if field is None else replay(store, league_id, Settings.of(config.to_dict()), field).pending
    active = [b for b in store.bots(league_id, include_retired=False) if b.status == "active"]
    players = {g: [b.id for b in active if b.plays(g)] for g in config.games}
    return league_schedule([(g, config.seats(g)) for g in config.games], players, config.games_per_pairing,
                           config.seed, mode=config.tables,
                           challengers=([b.id for b in active if b.name in config.challengers]
                                        if config.challengers else None))


def missing(fixtures: list[Fixture], stored: Iterable[str]) -> list[Fixture]:
    """The fixtures (in key order) whose keys are not among ``stored`` (also in key order): one merge pass, no set
    of 100,000 stored keys (keys of games no longer scheduled, e.g. of a retired bot, are passed over)."""
    todo: list[Fixture] = []
    keys = iter(stored)
    current = next(keys, None)
    for fixture in fixtures:
        while current is not None and current < fixture.key:
            current = next(keys, None)
        if current == fixture.key:
            current = next(keys, None)
        else:
            todo.append(fixture)
    return todo


def make_task(fixture: Fixture, bots: dict[int, Bot], config: LeagueConfig, chance_key: bytes | None = None,
              snapshots: dict[int, Snapshot] | None = None, limits: dict[bool, Limits] | None = None,
              keyed: bool = False) -> Task:
    """The task of one fixture; ``snapshots`` holds each file bot's snapshot by bot id, ``limits`` the league's
    limits by ``trusted`` (:func:`task_limits`; computed here when not given); ``keyed``: the game's seed (and so
    its opening) is the fixture's under the chance key (:func:`keyed_seeds`)."""
    seed = keyed_seed(chance_key, fixture.seed) if keyed and chance_key is not None else fixture.seed
    files = {}
    specs = []
    for bot_id in fixture.seats:
        bot = bots[bot_id]
        if bot.kind == "file":
            files[bot.content_hash] = (snapshots or {})[bot_id]
            specs.append(f"file:{bot.content_hash}")
        else:
            specs.append(bot.spec or "")
    file_bots = [bots[b] for b in fixture.seats if bots[b].kind == "file"]
    trusted = config.limits.trusted or (bool(file_bots) and all(b.trusted for b in file_bots))
    return Task(fixture.key, fixture.game, fixture.round, fixture.seats, tuple(specs),
                tuple(bots[b].label for b in fixture.seats), seed, (limits or task_limits(config))[trusted],
                config.on_failure, files, chance_key,
                config.openings.opening(fixture.game, seed, fixture.round) if config.openings else ())


SEEDS_KEYED = {"seeds": "keyed"}
"""Marks a stored league config whose games are seeded under the league's key (:func:`keyed_seeds`)."""


def stored_config(store: Store, config: LeagueConfig) -> dict[str, Any]:
    """The league's config as the store keeps it (:meth:`LeagueConfig.to_dict`), with :data:`SEEDS_KEYED` for a
    league that seeds its games under its key: every league created since, and never one that stored a game
    before (its rounds keep the seeds their first games had: duplicate seeds stay duplicates).

    Raises:
        ConfigError: the league was played with another seed (checked before anything is written, by every caller:
            ``arena league run`` and ``arena serve``)."""
    existing = store.league(config.name)
    if existing is not None and existing.config.get("seed", config.seed) != config.seed:
        raise ConfigError(f"league {config.name!r} was played with seed {existing.config['seed']}, the file now "
                          f"says {config.seed}; stored games keep their seeds, so use a new league name or "
                          "database for a new seed")
    if existing is not None and existing.config.get("format") in TOURNAMENTS and \
            frozen_field(store, existing.id) is not None:
        _check_match_rules(config, existing.config)
    keyed = existing is None or existing.config.get("seeds") == "keyed" or store.count_games(existing.id) == 0
    return config.to_dict() | (SEEDS_KEYED if keyed else {})


MATCH_RULES = ("format", "games", "games_per_pairing", "tournament.tiebreak_games", "tournament.sudden_death",
               "tournament.bracket_reset", "tournament.bye_points")
"""A started tournament's keys that decide its matches: its bracket is replayed from the stored games under them,
so a changed one would decide played matches again (a finished knockout re-crowned). ``rounds`` may grow, and the
limits change what later games allow, not what earlier ones decided."""


def _check_match_rules(config: LeagueConfig, stored: dict[str, Any]) -> None:
    now = config.to_dict()
    for key in MATCH_RULES:
        head, _, sub = key.partition(".")
        old, new = (d.get(head) if not sub else (d.get(head) or {}).get(sub) for d in (stored, now))
        if old is not None and old != new:
            name = sub or head
            raise ConfigError(f"tournament {config.name!r} has started with {name} = {old!r}, the file now says "
                              f"{new!r}; its played matches would be decided again, so use a new league name or "
                              "database (limits may change)")


def keyed_seeds(store: Store, league_id: int) -> bool:
    """Whether the league's games are seeded under its secret key (:func:`stored_config`)."""
    return any(lg.id == league_id and lg.config.get("seeds") == "keyed" for lg in store.leagues())


def task_limits(config: LeagueConfig) -> dict[bool, Limits]:
    """The league's limits as a task carries them, for an untrusted and a trusted table: validated once per run,
    not once per game (a validation costs the writer ~0.1 ms a game); every task shares these objects."""
    return {trusted: config.limits.with_(trusted=trusted) for trusted in (False, True)}

def tournament_batches(store: Store, league_id: int, config: LeagueConfig) -> Iterator[list[Fixture]]:
    """A tournament's batches (:func:`arena.tournament.progress.batches`): its field seeded as the league file says
    when it starts, frozen after."""
    settings = Settings.of(stored_config(store, config))
    t = config.tournament
    return progress_batches(store, league_id, settings, lambda: seeded_field(
        store, league_id, [b.name for b in config.bots], t["seeding"], t["seeding_league"]))


def waiting_games(store: Store, league_id: int, config: LeagueConfig, planned: set[int]) -> int:
    """Unplayed scheduled games with a bot outside ``planned`` (the bots a run planned for at its start): the games
    of bots submitted during that run, which the next run plays."""
    todo = missing(plan(store, league_id, config), store.sorted_schedule_keys(league_id))
    return sum(any(b not in planned for b in f.seats) for f in todo)
