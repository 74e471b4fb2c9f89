"""The keys of a league file, their types, defaults, ranges and meanings: one schema that validates the file
(arena/league/config.py) and generates the key tables of docs/leagues.md (``python -m arena.league.keys``).

Only what a key *is* lives here; what it must agree with (a game spec that loads, ``games_per_pairing`` a
multiple of the seats, a bot that can play its games) is checked by arena/league/config.py.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field

from arena.limits import Limits
from arena.schema import STRICT, docs_rows, docs_table

DEFAULT_PROBATION_AFTER = 5
DEFAULT_PROBATION_WINDOW = 10
DEFAULT_PROBATION_FAILURES = 5


def _one_or_many(value: Any) -> Any:
    """``game = "nim"`` and ``games = ["nim"]`` are the same thing."""
    return [value] if isinstance(value, str) else value


NonEmpty = Annotated[str, Field(min_length=1)]
Specs = Annotated[list[NonEmpty], BeforeValidator(_one_or_many), Field(min_length=1)]
_SPECS: dict[str, Any] = {"type": "string or list of strings",
                          "allowed": "a game spec or a non-empty list of game specs"}


class Openings(BaseModel):
    """The `openings` table: games start from varied positions (docs/ratings.md)."""

    model_config = STRICT

    plies: Annotated[int, Field(ge=1, le=200)] | None = None
    """Each pair of games starts from a random (seeded) opening of this many legal moves, played once in each
    seat order."""
    file: NonEmpty | None = None
    """A file of openings, relative to the league file: one per line, the actions as integers separated by spaces
    or commas (`#` starts a comment); exactly one of `plies` and `file`."""


class Stop(BaseModel):
    """The `stop` table of an adaptive schedule: when the ranking is certain enough."""

    model_config = STRICT

    top: Annotated[int, Field(ge=1, le=100_000)] | None = None
    """Stop when the set of the best `top` bots is certain (left out with `rank_all` false: 10)."""
    rank_all: bool = False
    """Stop only when every neighbouring pair of the whole order is certain."""
    confidence: Annotated[float, Field(ge=0.5, le=0.9999)] = 0.95
    """How sure the answer must be: the probability, sampled from the fitted ratings, that the top set is right (with
    `rank_all`: that the least certain neighbouring pair is in order)."""
    batch: Annotated[int, Field(ge=1, le=100_000)] | None = None
    """Pairings per batch (left out: the number of bots)."""


class LeagueFile(BaseModel):
    """The top level of a league file."""

    model_config = STRICT

    name: NonEmpty
    """The league's name in the store."""
    games: Specs | None = Field(None, json_schema_extra=_SPECS)
    """Game specs such as `hex(size=7)`; one string or a list (required: `games` or `game`)."""
    game: Specs | None = Field(None, json_schema_extra=_SPECS)
    """Another spelling of `games`, for a league of one game."""
    bots: list[Any] = Field(default_factory=list, json_schema_extra={
        "type": "list of strings or tables", "default": "none (then field_from is required)",
        "allowed": "a list of bot specs or [[bots]] tables"})
    """The bots: built-in specs (`"random"`) or `[[bots]]` tables (below); required unless a tournament takes its
    field from another league (`field_from`)."""
    games_per_pairing: Annotated[int, Field(ge=1, le=100_000)] | None = None
    """Games per table of bots and per game spec, a multiple of the game's seats (left out: the least common
    multiple of the seat counts)."""
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] = 0
    """Base seed: every game's seed derives from it, the game spec and the round."""
    limits: dict[str, Any] = Field(default_factory=dict, json_schema_extra={
        "type": "table", "default": "the defaults below", "allowed": "a table of the [limits] keys below"})
    """The `[limits]` table (below), for every bot of every game."""
    concurrency: Annotated[int, Field(ge=1, le=1024)] | None = None
    """Games at once (left out: the number of cores; `--concurrency` overrides)."""
    database: NonEmpty | None = None
    """The store, relative to the league file (left out: arena.sqlite in the current directory; `--db`
    overrides)."""
    on_failure: Literal["lose", "random_move"] = "lose"
    """What a failed move costs: the game (`lose`), or a random legal move is played instead (`random_move`; a
    crash or memory kill still loses)."""
    probation_after: Annotated[int, Field(ge=0, le=100_000)] = DEFAULT_PROBATION_AFTER
    """Probation after this many failed games in a row (0: never for a run of failures)."""
    probation_window: Annotated[int, Field(ge=1, le=100_000)] = DEFAULT_PROBATION_WINDOW
    """The recent games the failure rate counts: a bot's last `probation_window` games."""
    probation_failures: Annotated[int, Field(ge=0, le=100_000)] = DEFAULT_PROBATION_FAILURES
    """Probation when at least this many of the bot's last `probation_window` games failed, in a row or not
    (0: never for a rate; at most `probation_window`)."""
    tables: Literal["auto", "all", "balanced"] = "auto"
    """Tables of 3-4 player games: every combination, a balanced subset, or `auto` (see Schedule)."""
    format: Literal["round_robin", "gauntlet", "swiss", "knockout", "double_elimination"] = "round_robin"
    """`round_robin`: every table of bots plays; `gauntlet`: only tables with a challenger in them (the field does
    not play itself); `swiss`, `knockout`, `double_elimination`: a tournament of matches of `games_per_pairing`
    games per game spec, two bots a match (docs/tournaments.md)."""
    rounds: Annotated[int, Field(ge=1, le=1000)] | None = None
    """`format = "swiss"`: rounds (left out: ceil(log2 n) + 1, at most n - 1, for n entrants)."""
    seeding: NonEmpty = "order"
    """A tournament's seeding: `order` (the league file's order, then bots entered later), `ratings` (the
    conservative ratings of `seeding_league` in the same database) or a CSV file of bot names, first seed first."""
    seeding_league: NonEmpty | None = None
    """With `seeding = "ratings"`: the league whose ratings seed the tournament (e.g. the course's ladder)."""
    bye_points: Annotated[float, Field(ge=0, le=1)] = 1.0
    """`format = "swiss"`: what a bye scores (an odd field: the lowest-ranked bot without a bye sits a round out)."""
    tiebreak_games: Annotated[int, Field(ge=0, le=100)] = 2
    """Knockout and double elimination: games a tied match adds (seats alternated) before sudden death."""
    sudden_death: Annotated[int, Field(ge=0, le=1000)] = 10
    """Knockout and double elimination: then single games until one is won, at most this many; after that many
    draws the higher seed goes through (in a grand final, the winners' bracket champion)."""
    field_from: NonEmpty | None = None
    """A tournament's entrants from another league of the same database: the current version of every bot entered
    there by `arena submit` or `arena serve` (active, not on probation), copied when the tournament starts (a
    course's final from its ladder; `arena final` writes such a file); the league file's own bots join them."""
    bracket_reset: bool = True
    """Double elimination: when the losers' bracket champion wins the grand final, a second final decides."""
    challengers: list[NonEmpty] | None = Field(None, json_schema_extra={
        "type": "list of strings", "allowed": "names of the league's bots (with format = \"gauntlet\")"})
    """The bots under test in a gauntlet: each plays every other bot."""
    openings: Openings | None = Field(None, json_schema_extra={
        "type": "table", "default": "none: every game from the start", "allowed": "a table of the keys below"})
    """Varied openings (the `openings` table below), recorded in each game and replayed."""
    schedule: Literal["full", "adaptive"] = "full"
    """`full`: every fixture is played; `adaptive`: batches of pairings where the ranking is least certain, until
    `stop` holds (docs/ratings.md)."""
    deadline: NonEmpty | None = Field(None, json_schema_extra={
        "type": "string", "default": "none: no deadline", "allowed": "an RFC 3339 time, e.g. 2026-12-01T23:59:00Z"})
    """`arena serve`: uploads after this time are refused with a line saying so (the league goes on playing)."""
    max_submissions_per_hour: Annotated[int, Field(ge=1, le=10_000)] = 10
    """`arena serve`: uploads per account in any hour; more are refused (HTTP 429)."""
    upload_format: Literal["arena", "comp424"] = "arena"
    """`arena serve`: what a `.zip` upload is: `arena` (a folder bot with `bot.py` at its top) or `comp424` (a
    COMP424 course checkout or hand-in, run as its `student_agent`; docs/comp424.md)."""
    leaderboard_public: bool = True
    """`arena serve`: the leaderboard, bot pages and replays are shown without logging in (false: to accounts
    only)."""
    stop: Stop | None = Field(None, json_schema_extra={
        "type": "table", "default": "top = 10, confidence = 0.95", "allowed": "a table of the keys below"})
    """When an adaptive schedule stops (the `stop` table below)."""


class BotTable(BaseModel):
    """One `[[bots]]` table."""

    model_config = STRICT

    name: NonEmpty | None = None
    """Display name, unique in the league (left out: the spec, or the file's name without `.py`)."""
    spec: NonEmpty | None = None
    """A built-in bot spec such as `mc(n=100)` (`arena bots` lists them); exactly one of `spec` and `file`."""
    file: NonEmpty | None = None
    """A bot file or folder, relative to the league file."""
    entry: NonEmpty | None = None
    """For a folder bot: its entry module, relative to the folder (left out: `bot.py`)."""
    format: Literal["arena", "comp424"] = "arena"
    """How `file` runs: `arena` (a bot file, or a folder with `class Bot` in its entry) or `comp424` (a COMP424
    course checkout or hand-in, unchanged; colosseum only; docs/comp424.md)."""
    agent: NonEmpty | None = None
    """With `format = "comp424"`: the registered name of the agent to run (left out: `student_agent`)."""
    games: Specs | None = Field(None, json_schema_extra=_SPECS)
    """Only these of the league's games (left out: all of them)."""
    trusted: bool = False
    """SANDBOX RELAXED: this bot file runs even when mandatory sandbox layers are missing. Only for code you
    trust."""


def tables() -> str:
    """The three key tables of docs/leagues.md, as generated from the schema."""
    return "\n\n".join([
        "Top level:\n\n" + docs_table(docs_rows(LeagueFile)),
        "`[limits]`:\n\n" + docs_table(docs_rows(Limits, "limits.")),
        "`openings` (e.g. `openings = { plies = 4 }`):\n\n" + docs_table(docs_rows(Openings, "openings.")),
        "`stop` (e.g. `stop = { top = 10, confidence = 0.95 }`):\n\n" + docs_table(docs_rows(Stop, "stop.")),
        "`[[bots]]` (or a bare spec string):\n\n" + docs_table(docs_rows(BotTable, "bots[].")),
    ])


if __name__ == "__main__":
    print(tables())
