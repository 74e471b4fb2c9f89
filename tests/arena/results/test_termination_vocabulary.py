"""One vocabulary for why a game ended: :class:`arena.results.outcome.Termination` lists the reasons, and every list,
counter,
column and label of them derives from it, so a new reason is one edit there (plus, being a bot's failure, a store
migration for its counter column, which the literal ``CREATE TABLE ratings`` check below asks for).

Two ways to fail: a place that lists the reasons differs from the enum, or the source lists them again by hand (a
tuple, set, list or dict of two or more of the words, counter names or members, or a class with two or more counter
fields) anywhere but arena/results/outcome.py.
"""
from __future__ import annotations

import ast
import dataclasses
import sqlite3
from pathlib import Path

from arena import errors
from arena.commands import leaderboard
from arena.commands.match import totals
from arena.output import views
from arena.results import records
from arena.results.outcome import COUNTERS, FAILURES, SEAT_TERMINATIONS, Termination
from arena.results.records import Failure
from leaderboards import ratings, schema
from leaderboards.ratings import BotRating, RatedGame, Rater

ROOT = Path(__file__).resolve().parents[3]
SCANNED = ("arena", "leaderboards", "games", "bots")
HOME = ROOT / "arena" / "results" / "outcome.py"
"""The one place the reasons are listed."""
TYPED_ROWS = {("arena/output/views.py", "Standing")}
"""Rows whose counters are typed fields (``Standing(timeouts=0, ...)``, what a type checker sees): listed by hand,
so checked equal to the enum's counters below (a new reason fails here until its field is added)."""

WORDS = {t.value for t in FAILURES} | set(COUNTERS)
MEMBERS = {t.name for t in FAILURES}


def test_the_vocabulary_is_the_enum() -> None:
    assert FAILURES == tuple(t for t in Termination if t not in (Termination.NORMAL, Termination.ADJUDICATED))
    assert SEAT_TERMINATIONS == (Termination.NORMAL, *FAILURES)
    assert COUNTERS == tuple(t.counter for t in FAILURES)
    assert len(set(COUNTERS)) == len(COUNTERS), "two reasons share a counter name"


def test_every_list_of_reasons_is_derived_from_termination() -> None:
    assert records.REASONS == SEAT_TERMINATIONS
    assert ratings.FAILURE_REASONS == FAILURES
    rating = BotRating()
    assert tuple(rating.failed) == FAILURES
    assert tuple(rating.as_dict())[-len(COUNTERS):] == COUNTERS
    assert [getattr(rating, c) for c in COUNTERS] == [0] * len(COUNTERS)  # each counter readable by its name
    assert schema.RATING_FIELDS[-len(COUNTERS):] == COUNTERS
    assert tuple(rating.as_dict()) == schema.RATING_FIELDS
    assert tuple(totals([], ["a"])["a"]["failures"]) == FAILURES  # arena match's per-bot failures by reason
    assert views.FAILURE_COUNTS == COUNTERS
    assert tuple(f for f in leaderboard.CSV_FIELDS if f in COUNTERS) == COUNTERS


def test_the_typed_rows_have_one_field_per_counter() -> None:
    fields = [f.name for f in dataclasses.fields(views.Standing)]
    assert fields[fields.index("losses") + 1:fields.index("failures")] == list(COUNTERS)


def test_every_bot_error_records_a_failure_reason() -> None:
    def subclasses(cls: type) -> list[type]:
        return [cls, *(s for sub in cls.__subclasses__() for s in subclasses(sub))]

    for cls in subclasses(errors.BotError):
        assert type(cls.reason) is Termination and cls.reason in FAILURES, cls


def test_the_stored_ratings_table_has_one_column_per_failure_reason() -> None:
    """``CREATE TABLE ratings`` stays literal (the store compares a file's schema with it, and derives the older
    schemas from it): a new reason needs its column there and a migration that adds it."""
    conn = sqlite3.connect(":memory:")
    schema.script(conn, schema.SCHEMA)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(ratings)")]
    assert columns[columns.index("losses") + 1:columns.index("updated")] == list(COUNTERS)


def test_each_failure_counts_in_its_own_counter() -> None:
    """The rater counts every reason of the enum (a substituted move's one too), each in the counter of its name."""
    for reason in FAILURES:
        rater = Rater()
        rater.apply(RatedGame("k", "nim", [1, 2], [-1.0, 1.0], [str(reason), "normal"]))
        rater.apply(RatedGame("l", "nim", [1, 2], [1.0, -1.0], ["normal", "normal"],
                              [Failure(0, reason, 0)]))
        counts = rater.get(ratings.ALL, 1).as_dict()
        assert {c: counts[c] for c in COUNTERS} == {c: 2 if c == reason.counter else 0 for c in COUNTERS}
        assert rater.get(ratings.ALL, 1).failures == 2


def _reason_like(node: ast.AST) -> str | None:
    """The reason a literal element names: a word or counter name, or a member (``TIMEOUT``, ``Termination.CRASH``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in WORDS:
        return node.value
    if isinstance(node, ast.Name) and node.id in MEMBERS:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr in MEMBERS:
        return node.attr
    return None


def _elements(node: ast.AST) -> list[ast.AST]:
    """The elements of a literal collection, nested literals included (``(("timeouts", "timeouts"), ...)``)."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e for elt in node.elts for e in (_elements(elt) or [elt])]
    if isinstance(node, ast.Dict):
        return [e for part in (*node.keys, *node.values) if part is not None for e in (_elements(part) or [part])]
    return []


def hand_lists(source: str, typed_rows: frozenset[str] = frozenset()) -> list[str]:
    """Where ``source`` lists failure reasons by hand: line and what it lists (the classes ``typed_rows`` aside)."""
    found: dict[int, set[str]] = {}
    for node in ast.walk(ast.parse(source)):
        named = {r for r in map(_reason_like, _elements(node)) if r}
        if isinstance(node, ast.ClassDef) and node.name not in typed_rows:  # counter fields: ``timeouts: int = 0``
            named = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)
                     and isinstance(s.target, ast.Name) and s.target.id in COUNTERS}
        elif isinstance(node, ast.BinOp):  # a sum of counters: ``self.timeouts + self.crashes + ...``
            named = {a.attr for a in ast.walk(node) if isinstance(a, ast.Attribute) and a.attr in COUNTERS}
        if len(named) >= 2:  # (per line: a sum's inner sums are found again on its line)
            found[node.lineno] = found.get(node.lineno, set()) | named
    return [f"{line}: {', '.join(sorted(named))}" for line, named in sorted(found.items())]


def test_the_scan_sees_a_hand_made_list() -> None:
    """The scanner itself, on the shapes the reasons were listed in before they derived from the enum."""
    assert hand_lists('FAILURE_REASONS = ("timeout", "crash", "illegal", "memory", "protocol")')
    assert hand_lists('C = {"timeout": "timeouts", "crash": "crashes"}')
    assert hand_lists('x = ", ".join(f"{r[k]} {l}" for k, l in (("timeouts", "timeouts"), ("crashes", "crashes")))')
    assert hand_lists("REASONS = (NORMAL, TIMEOUT, CRASH)")
    assert hand_lists("class R:\n    timeouts: int = 0\n    crashes: int = 0\n")
    assert hand_lists("n = self.timeouts + self.crashes + self.illegal")
    assert not hand_lists('MODES = ("memory", "pids")\nLAYERS = {"timeout": 1, "seccomp": 2}')


def test_no_source_lists_the_reasons_again() -> None:
    found = []
    for package in SCANNED:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            rows = frozenset(cls for file, cls in TYPED_ROWS if file == name)
            if path != HOME:
                found += [f"{name}:{where}" for where in hand_lists(path.read_text(), rows)]
    assert not found, ("failure reasons listed by hand (derive them from arena.results.outcome: FAILURES, COUNTERS, "
                       "Termination.counter):\n" + "\n".join(found))
