"""A tournament replayed from the store, and the runner's next batch of games.

The field is frozen when the tournament starts (stored as its first schedule decision: bots entered later do not
join it); each Swiss round's pairings are stored when the round is paired and read back after, so an upgrade of
arena between two runs never re-pairs a round already played. Everything else (each match's state, the next games,
the bracket, places) is worked out again from the stored games whenever it is needed: a run killed at any point
and started again plays exactly the games still missing.
"""
from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.errors import ConfigError
from arena.league.schedule import Fixture
from arena.tournament import FORMATS, brackets, swiss
from arena.tournament.matches import Match, MatchRules, Played, fixtures, points, settle
from leaderboards.ratings import conservative

if TYPE_CHECKING:
    from leaderboards.store import Store



@dataclass(frozen=True)
class Settings:
    """A tournament's settings, read from the league's stored config (so ``arena bracket`` needs no league file)."""

    format: str
    rules: MatchRules
    seed: int = 0
    rounds: int | None = None
    """Swiss rounds (None: :func:`arena.tournament.swiss.default_rounds`)."""
    bye_points: float = 1.0
    bracket_reset: bool = True

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Settings:
        fmt = config.get("format", "round_robin")
        t = config.get("tournament", {})
        rules = MatchRules(tuple(config["games"]), int(config.get("games_per_pairing", 2)),
                           decisive=fmt != "swiss", tiebreak_games=int(t.get("tiebreak_games", 2)),
                           sudden_death=int(t.get("sudden_death", 10)))
        return cls(fmt, rules, int(config.get("seed", 0)), t.get("rounds"), float(t.get("bye_points", 1.0)),
                   bool(t.get("bracket_reset", True)))


def expected_games(settings: Settings, entrants: int) -> int:
    """The games a tournament of ``entrants`` plays when no match needs a tie-break (a progress bar's total): a
    knockout's every match but the byes puts one bot out (n - 1 matches), a double elimination's puts one bot one
    loss nearer out (2n - 2, one more with a bracket reset), a Swiss round pairs everyone."""
    if entrants < 2:
        return 0
    matches = {"knockout": entrants - 1, "double_elimination": 2 * entrants - 2 + int(settings.bracket_reset),
               "swiss": (settings.rounds or swiss.default_rounds(entrants)) * (entrants // 2)}[settings.format]
    return matches * settings.rules.base_games


def is_tournament(config: Mapping[str, Any]) -> bool:
    return config.get("format") in FORMATS


@dataclass
class State:
    """Where a tournament stands."""

    format: str
    entrants: list[int]
    """The field, in seeding order."""
    rounds: list[list[Match]] = field(default_factory=list)
    """The matches, round by round (a bracket's rounds: its matches grouped by label, in play order)."""
    finished: bool = False
    placings: list[list[int]] = field(default_factory=list)
    """Bots by place, best first (bots sharing a place share a list); empty until the tournament is finished."""
    standings: list[swiss.Entry] = field(default_factory=list)
    """Swiss: the standings after the finished rounds."""
    pending: list[Fixture] = field(default_factory=list)
    """The games to play next."""
    waiting: int = 0
    """Bracket matches whose entrants are not known yet."""


def frozen_field(store: Store, league_id: int) -> list[int] | None:
    """The field stored when the tournament started (seeding order), or None before it started."""
    for decision in store.decisions(league_id):
        if "tournament_field" in decision:
            return [int(b) for b in decision["tournament_field"]]
    return None


def stored_pairings(store: Store, league_id: int) -> dict[int, dict[str, Any]]:
    """Swiss round -> its stored pairing (``pairs`` and ``bye``)."""
    return {int(d["swiss_round"]): d for d in store.decisions(league_id) if "swiss_round" in d}


def seeded_field(store: Store, league_id: int, names: Sequence[str], seeding: str, seeding_league: str | None,
                 base: Path | None = None) -> list[int]:
    """The active bots of the league in seeding order: ``order`` (``names``, the league file's order, then bots
    entered otherwise by when they entered), ``ratings`` (by their conservative rating in ``seeding_league``, the
    same store, bots matched by name; unrated bots after, in file order) or a CSV file (a bot name per line, first
    seed first; bots it does not name after, in file order)."""
    active = [b for b in store.bots(league_id, include_retired=False, source=False) if b.status != "retired"]
    position = {n: i for i, n in enumerate(names)}
    active.sort(key=lambda b: (position.get(b.name, len(position)), b.id))
    if seeding == "order":
        return [b.id for b in active]
    if seeding == "ratings":
        other = store.league(seeding_league or "")
        if other is None:
            raise ConfigError(f"seeding = \"ratings\" reads league {seeding_league!r}, which is not in this store; "
                              "set seeding_league to a league of the same database")
        rated = store.ratings(other.id)
        score = {b.name: conservative(rated[b.id].mu, rated[b.id].sigma)
                 for b in store.bots(other.id, source=False) if b.id in rated}
        return [b.id for b in sorted(active, key=lambda b: (b.name not in score, -score.get(b.name, 0.0)))]
    path = Path(seeding) if base is None else base / seeding
    try:
        with open(path, newline="", encoding="utf-8") as f:
            listed = [row[0].strip() for row in csv.reader(f) if row and row[0].strip() and
                      not row[0].lstrip().startswith("#")]
    except OSError as exc:
        raise ConfigError(f"cannot read the seeding file {str(path)!r}: {exc.strerror}; seeding is \"order\", "
                          "\"ratings\" or a CSV file of bot names, first seed first") from None
    by_name = {b.name: b.id for b in active}
    unknown = [n for n in listed if n not in by_name]
    if unknown:
        raise ConfigError(f"the seeding file {str(path)!r} names {unknown[0]!r}, which is not an active bot of the "
                          "league; list the league's bot names, first seed first")
    order = {n: i for i, n in enumerate(listed)}
    return [b.id for b in sorted(active, key=lambda b: order.get(b.name, len(order)))]


REPLACED = "replaced by version"
"""How the store retires a bot's version when a newer one enters (``Store.upsert_bot``): the bot is still there."""
FORFEIT = "a forfeit: the other bot left the tournament"


def leavers(store: Store, league_id: int) -> set[int]:
    """The tournament's bots that have left it and forfeit the matches they have not finished: retired in it for
    any reason but a newer version (removed from the league file, withdrawn, revoked); in a final (``field_from``),
    also those whose newest version in that league was retired so (withdrawn by an organiser, its account revoked,
    its team emptied). Unchanged after the fact: a match finished before stays as it was played."""
    bots = store.bots(league_id, source=False)
    gone = {b.id for b in bots if b.status == "retired" and not b.status_reason.startswith(REPLACED)}
    config = next((lg.config for lg in store.leagues() if lg.id == league_id), {})
    source = store.league(str(config.get("tournament", {}).get("field_from") or ""))
    if source is not None:
        newest: dict[str, Any] = {}
        for b in store.bots(source.id, source=False):
            if b.name not in newest or b.version > newest[b.name].version:
                newest[b.name] = b
        left = {n for n, b in newest.items() if b.status == "retired" and not b.status_reason.startswith(REPLACED)}
        gone |= {b.id for b in bots if b.origin == "submit" and b.name in left}
    return gone


def _games_by_match(store: Store, league_id: int) -> dict[tuple[int, tuple[int, int]], dict[int, Played]]:
    """(key round, table) -> the match's stored games by index."""
    out: dict[tuple[int, tuple[int, int]], dict[int, Played]] = {}
    for game_id, key, seats, returns in store.keyed_outcomes(league_id):
        if len(seats) != 2:
            continue
        head, table, index = key.rsplit("|", 2)
        a, b = (int(x) for x in table.split("."))
        i = int(index)
        first = seats[0] if i % 2 == 0 else seats[1]  # the match's first bot: seat 0 in its even games
        out.setdefault((int(head.split("|", 1)[0]), (a, b)), {})[i] = Played(i, game_id, points(seats, returns, first))
    return out


def replay(store: Store, league_id: int, settings: Settings, field_: Sequence[int], *,
           record: bool = False) -> State:
    """The tournament as its stored games leave it. ``record``: a Swiss round paired now is stored (the runner)."""
    games = _games_by_match(store, league_id)
    rules = settings.rules
    gone = leavers(store, league_id)

    def settled(m: Match) -> Match:
        if m.is_bye:
            return settle(m, rules, {})
        m = settle(m, rules, games.get((m.round, m.table()), {}))
        a, b = m.bots
        if not m.done and (a in gone or b in gone):  # a bot that left loses what it has not finished
            m.done, m.needed, m.winner = True, [], b if a in gone and b not in gone else a
            m.note = FORFEIT
        return m

    state = State(settings.format, list(field_))
    if settings.format == "swiss":
        _swiss(store, league_id, settings, state, settled, record, gone)
    else:
        _bracket(settings, state, settled)
    for matches in state.rounds:
        for m in matches:
            if not m.done and m.needed:
                state.pending += fixtures(m, rules, settings.seed)
    state.pending.sort(key=lambda f: f.key)
    return state


def _swiss(store: Store, league_id: int, settings: Settings, state: State, settled: Any, record: bool,
           gone: set[int]) -> None:
    total = settings.rounds or swiss.default_rounds(len(state.entrants))
    stored = stored_pairings(store, league_id)
    odd_games = settings.rules.base_games % 2 == 1
    for r in range(1, total + 1):
        state.standings = swiss.standings(state.entrants, state.rounds, settings.bye_points)
        if r in stored:
            pairs = [(int(a), int(b)) for a, b in stored[r]["pairs"]]
            bye = stored[r].get("bye")
        else:
            # a bot that left is paired no more (its standing stays)
            pairs, bye = swiss.pair([e for e in state.standings if e.bot not in gone], r, odd_games)
            if record:
                store.record_decision(league_id, {"swiss_round": r, "pairs": pairs, "bye": bye})
        matches = [settled(Match(f"R{r}", r, (a, b))) for a, b in pairs]
        if bye is not None:
            matches.append(settled(Match(f"R{r}", r, (int(bye), None))))
        state.rounds.append(matches)
        if not all(m.done for m in matches):
            return
    state.standings = swiss.standings(state.entrants, state.rounds, settings.bye_points)
    state.finished = True
    state.placings = swiss.places(state.standings)


def _bracket(settings: Settings, state: State, settled: Any) -> None:
    final = None
    if settings.format == "knockout":
        nodes = brackets.knockout_nodes(len(state.entrants))
    else:
        nodes, final = brackets.double_elimination_nodes(len(state.entrants))
    played = brackets.play(nodes, state.entrants, settled, final=final, bracket_reset=settings.bracket_reset)
    by_label: dict[str, list[Match]] = {}
    for node, m in zip(played.nodes, played.matches):
        if m is None:
            state.waiting += 1
        elif m.bots != (None, None):  # (two empty slots of a small field: nobody plays)
            by_label.setdefault(node.label, []).append(m)
    state.rounds = [by_label[label] for label in sorted(by_label, key=_label_order)]
    state.finished, state.placings = played.finished, played.placings


def _label_order(label: str) -> tuple[int, int]:
    """Rounds in play order: winners' and losers' rounds by number, then the finals."""
    kind = {"R": 0, "W": 0, "L": 1}.get(label[0], 2)
    number = int(label[1:]) if label[1:].isdigit() else (0 if label == "GF" else 1)
    return (number if kind < 2 else 10_000 + number, kind)


def batches(store: Store, league_id: int, settings: Settings,
            seeded: Callable[[], Sequence[int]]) -> Iterator[list[Fixture]]:
    """The games of each next batch (the runner plays one, then asks again), until the tournament is finished; the
    field is ``seeded()`` unless one was frozen before (a resumed tournament). A batch that comes back unplayed
    (games the referee could not play) ends the run: the next run tries them again."""
    field_ = frozen_field(store, league_id)
    if field_ is None:
        field_ = list(seeded())
        store.record_decision(league_id, {"tournament_field": field_, "format": settings.format})
    last: list[str] | None = None
    while True:
        state = replay(store, league_id, settings, field_, record=True)
        keys = [f.key for f in state.pending]
        if state.finished or not keys or keys == last:
            return
        last = keys
        yield state.pending


def view(state: State, labels: Mapping[int, str]) -> dict[str, Any]:
    """``arena bracket --json``: the rounds and places with bot labels (see docs/tournaments.md)."""

    def name(b: int | None) -> str | None:
        return None if b is None else labels.get(b, str(b))

    rounds = []
    for matches in state.rounds:
        rounds.append([{"label": m.label, "bots": [name(b) for b in m.bots if b is not None],
                        "score": list(m.score) if not m.is_bye else [],
                        "winner": name(m.winner) if m.done else None, "done": m.done,
                        "games": [g.game_id for g in m.games], **({"note": m.note} if m.note else {})}
                       for m in matches])
    out: dict[str, Any] = {"format": state.format, "finished": state.finished, "rounds": rounds,
                           "placings": [[name(b) for b in group] for group in state.placings]}
    if state.format == "swiss":
        out["standings"] = [{"bot": name(e.bot), "points": e.points, "buchholz": e.buchholz,
                             "sonneborn_berger": e.sonneborn_berger, "byes": e.byes} for e in state.standings]
    return out


def current(store: Store, league_id: int, config: Mapping[str, Any]) -> State | None:
    """The tournament of a stored league (``config``: its stored config) as it stands; None when the league is not a
    tournament or has not started."""
    if not is_tournament(config):
        return None
    field_ = frozen_field(store, league_id)
    return None if field_ is None else replay(store, league_id, Settings.of(config), field_)


@dataclass(frozen=True)
class Place:
    """One bot's line in a tournament's places (``arena leaderboard``)."""

    place: int | None
    """1 first (bots sharing a place share it); None while the tournament goes on."""
    bot: int
    won: int
    drawn: int
    lost: int
    points: float | None = None
    """Swiss: points, Buchholz and Sonneborn-Berger."""
    buchholz: float | None = None
    sonneborn_berger: float | None = None
    last: str = ""
    """The label of the bot's last match (where a bracket's loser went out)."""

    def as_json(self, labels: Mapping[int, str]) -> dict[str, Any]:
        out: dict[str, Any] = {"place": self.place, "bot": labels.get(self.bot, str(self.bot)), "won": self.won,
                               "drawn": self.drawn, "lost": self.lost, "last_match": self.last}
        if self.points is not None:
            out |= {"points": self.points, "buchholz": self.buchholz, "sonneborn_berger": self.sonneborn_berger}
        return out


def places(state: State) -> list[Place]:
    """Every entrant's place and record, best first: by place when finished, else by the standings (Swiss) or the
    matches won."""
    record: dict[int, list[int]] = {b: [0, 0, 0] for b in state.entrants}
    last: dict[int, str] = {}
    for matches in state.rounds:
        for m in matches:
            if m.is_bye or not m.done:
                for b in m.bots:
                    if b is not None and not m.is_bye:
                        last[b] = m.label
                continue
            for b in m.bots:
                assert b is not None
                record[b][0 if m.winner == b else 1 if m.winner is None else 2] += 1
                last[b] = m.label
    where = {b: i for i, group in enumerate(state.placings) for b in group}
    numbers = {}
    n = 1
    for group in state.placings:
        for b in group:
            numbers[b] = n
        n += len(group)
    swiss_rank = {e.bot: i for i, e in enumerate(state.standings)}
    entry = {e.bot: e for e in state.standings}
    order = sorted(state.entrants, key=lambda b: (where.get(b, len(where)), swiss_rank.get(b, 0),
                                                  -record[b][0], record[b][2], state.entrants.index(b)))
    return [Place(numbers.get(b), b, record[b][0], record[b][1], record[b][2],
                  entry[b].points if b in entry else None, entry[b].buchholz if b in entry else None,
                  entry[b].sonneborn_berger if b in entry else None, last.get(b, "")) for b in order]
