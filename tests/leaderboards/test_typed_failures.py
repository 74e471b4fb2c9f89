"""Issue 34 §1: stored failures come out of the store typed (:class:`arena.results.records.Failure`), decoded in one
place, and old or unknown rows never fail a reader."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.output import replays, views
from arena.results.outcome import FAILURES, Termination
from arena.results.records import Failure
from leaderboards import ledger
from leaderboards.schema import load_failures
from leaderboards.store import Store
from tests.leaderboards.support import arena, store_game, tamper
from tests.tui.storefix import timeout_record

ROOT = Path(__file__).resolve().parents[2]
FIELDS = {"seat", "reason", "move_number", "detail", "substituted"}
DECODER = "arena/results/records.py"


def test_every_reason_round_trips_through_the_one_decoder() -> None:
    for reason in FAILURES:
        failure = Failure(1, reason, 7, "why", 3)
        stored = {"seat": 1, "reason": str(reason), "move_number": 7, "detail": "why", "substituted": 3}
        assert Failure.from_dict(stored) == failure
        assert type(Failure.from_dict(stored).reason) is Termination


def test_an_old_row_takes_the_defaults_of_what_it_lacks() -> None:
    """A row without ``detail``, ``substituted`` or ``move_number`` (a shorter shape, or a hand-written one)."""
    assert Failure.from_dict({"seat": 0, "reason": "timeout"}) == Failure(0, Termination.TIMEOUT, 0, "", None)
    assert Failure.from_dict({"seat": 1, "reason": "illegal", "move_number": 4, "detail": None}) == \
        Failure(1, Termination.ILLEGAL, 4, "", None)


@pytest.mark.parametrize("word", ["segfault", "", "normal", "adjudicated", "TIMEOUT"])
def test_an_unknown_reason_reads_as_a_crash_that_keeps_its_word(word: str) -> None:
    """A word that is no failure (a newer arena's, a hand-edited store's; ``normal`` is no failure either) becomes
    a crash, its word at the head of the detail, the old detail kept after it."""
    f = Failure.from_dict({"seat": 1, "reason": word, "move_number": 2, "detail": "the old text"})
    assert f.reason is Termination.CRASH and (f.seat, f.move_number) == (1, 2)
    assert f.detail == f"stored reason {word!r}, unknown to this arena; the old text"
    assert Failure.from_dict({"seat": 0, "reason": word}).detail == f"stored reason {word!r}, unknown to this arena"


def test_load_failures_reads_the_column_text_or_parsed_json() -> None:
    text = '[{"seat": 0, "reason": "memory", "move_number": 1, "detail": "", "substituted": null}]'
    assert load_failures(text) == load_failures([{"seat": 0, "reason": "memory", "move_number": 1}]) == \
        [Failure(0, Termination.MEMORY, 1)]
    assert load_failures("[]") == []


@pytest.fixture
def tampered(tmp_path: Path) -> Iterator[tuple[Path, Store, int, list[int]]]:
    """A real store with one game whose loser timed out, its failures column then rewritten by hand: an unknown
    reason and an old row without detail or substituted."""
    path = tmp_path / "t.sqlite"
    store = Store.open(path, create=True)
    league = store.ensure_league("typed", {"games": ["nim"]})
    bots = [store.upsert_bot(league.id, name, origin="config", spec="random")[0].id for name in ("alice", "bob")]
    game_id = store_game(store, league.id, "00000", "nim", 0, bots, timeout_record("nim", 5, ["alice", "bob"], 1))
    assert game_id is not None
    move = store.game(game_id).failures[0].move_number  # type: ignore[union-attr]
    tamper(store, game_id, failures=[{"seat": 1, "reason": "segfault", "move_number": move, "detail": "core dumped"},
                                     {"seat": 1, "reason": "timeout", "move_number": move}])
    try:
        yield path, store, game_id, bots
    finally:
        store.close()


def test_every_store_read_gives_typed_failures(tampered: tuple[Path, Store, int, list[int]]) -> None:
    _, store, game_id, bots = tampered
    league = store.find_league("typed").id
    game = store.game(game_id)
    assert game is not None
    crash, timeout = game.failures
    assert crash == Failure(1, Termination.CRASH, crash.move_number,
                            "stored reason 'segfault', unknown to this arena; core dumped")
    assert timeout == Failure(1, Termination.TIMEOUT, crash.move_number, "", None)
    reads = {
        "games": [f for g in store.games(league) for f in g.failures],
        "iter_games": [f for g in store.iter_games(league, bot_id=bots[1]) for f in g.failures],
        "bot_moves": [f for g in store.bot_moves(bots[1]) for f in g.failures],
        "rated_games": [f for _, g in store.rated_games(league) for f in g.failures],
        "latest_outcomes": [f for _, fs, _ in store.latest_outcomes(bots[1], 10) for f in fs],
    }
    assert {name: got for name, got in reads.items() if got != [crash, timeout]} == {}


def test_the_readers_show_an_unknown_reason_as_a_crash(tampered: tuple[Path, Store, int, list[int]]) -> None:
    """The report's bot facts and game list, the replay viewer, the rating fold and `arena replay` read the
    tampered game without failing; the unknown word shows in the detail, the crash counts as one."""
    path, store, game_id, bots = tampered
    game = store.game(game_id)
    assert game is not None
    facts, listing = views.bot_facts([game])
    assert [f.where for f in facts[bots[1]].failures] == [f"crash at move {game.failures[0].move_number + 1}",
                                                          f"timeout at move {game.failures[0].move_number + 1}"]
    assert [f.reason for f in listing[0].failures] == ["crash", "timeout"]
    shown = replays.replay(game, {})
    assert shown is not None and "segfault" in shown["failures"][0]["detail"]
    rating = ledger.recompute_ratings(store, store.find_league("typed").id)[bots[1]]
    assert (rating.timeouts, rating.crashes, rating.illegal) == (1, 1, 0)  # (one failed game: each kind once)
    out = arena(path.parent, "replay", str(game_id), "--db", str(path), "--no-board")
    assert out.returncode == 0, out.stderr
    assert "failed: crash at move" in out.stdout and "stored reason 'segfault'" in out.stdout, out.stdout


def _dict_reads_of_failures(tree: ast.AST) -> list[int]:
    """Lines where a failure taken from a ``.failures`` attribute or a ``failures`` variable (a loop or
    comprehension variable, or an index of it) is read as a dict: subscripted with a field's name, or asked
    ``.get(field)``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name) and (
                isinstance(node.iter, ast.Attribute) and node.iter.attr == "failures"
                or isinstance(node.iter, ast.Name) and node.iter.id == "failures"):
            names.add(node.target.id)

    def failure(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in names
        return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
            and node.value.attr == "failures"

    def field(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and node.value in FIELDS

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and failure(node.value) and field(node.slice):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and failure(node.func.value) and node.args and field(node.args[0]):
            lines.append(node.lineno)
    return sorted(lines)


def test_the_scan_finds_a_dict_read_of_a_failure() -> None:
    """The scan below is not vacuous: the reads the modules made before issue 34 are found."""
    before = ('for f in g.failures:\n    print(f["seat"], f.get("reason", "?"))\n'
              'x = [f["detail"] for f in game.failures]\nn = g.failures[0]["move_number"]\n'
              'ok = [f.seat for f in g.failures]\nrow = {"seat": 1}["seat"]\n'
              'reasons = {f["reason"] for f in failures if f.get("seat") == seat}\n')
    assert _dict_reads_of_failures(ast.parse(before)) == [2, 2, 3, 4, 7, 7]


def test_no_module_outside_the_decoder_reads_a_failure_as_a_dict() -> None:
    modules = [p for pkg in ("arena", "leaderboards", "bots", "games") for p in sorted((ROOT / pkg).rglob("*.py"))]
    assert len(modules) > 100
    offenders = {str(p.relative_to(ROOT)): lines for p in modules if str(p.relative_to(ROOT)) != DECODER
                 if (lines := _dict_reads_of_failures(ast.parse(p.read_text())))}
    assert offenders == {}
