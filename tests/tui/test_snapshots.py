"""SVG snapshots (pytest-textual-snapshot) of every screen at 80x24, on the deterministic store.

Update them after an intended change with ``pytest tests/tui/test_snapshots.py --snapshot-update`` and
look at the report before committing.
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from arena.tui import boards
from arena.tui.app import ArenaApp
from arena.tui.data import ReplayData
from arena.tui.replay import Replay
from arena.tui.screens import BotDetailScreen, PickerScreen, ReplayScreen
from leaderboards.store import SCHEMA_VERSION, Store
from tests.tui.pilot import wait_for
from tests.tui.test_boards import random_state

SIZE = (80, 24)


@pytest.fixture
def db(store_file: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture store by a relative path (the tmp directory must not reach the screen)."""
    monkeypatch.chdir(store_file.parent)
    return Path(store_file.name)


def loaded(app: ArenaApp, *keys: str, until: Any = None) -> Any:
    """A run_before that waits for the first snapshot, presses ``keys``, then waits for ``until(app)``."""
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_for(pilot, lambda: (app.snapshot is not None and app.snapshot.trends_complete)
                       or app.message is not None)
        if keys:
            await pilot.press(*keys)
        if until is not None:
            await wait_for(pilot, lambda: until(app))
        await settled(pilot)
    return run_before


async def settled(pilot, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    """Waits until two screenshots 0.1 s apart are equal: under CI load a footer or table refresh can
    still be queued when the awaited condition first holds, and the snapshot must not catch it half-drawn."""
    deadline = time.monotonic() + timeout
    previous = None
    while time.monotonic() < deadline:
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.1)
        current = pilot.app.export_screenshot()
        if current == previous:
            return
        previous = current
    raise AssertionError(f"the screen kept changing for {timeout}s")


def test_leaderboard(db: Path, snap_compare: Any) -> None:
    app = ArenaApp(db, poll_interval=0.05)
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded(app))


def test_head_to_head(db: Path, snap_compare: Any) -> None:
    app = ArenaApp(db, poll_interval=0.05)
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded(app, "2", until=lambda a: a.snapshot.h2h))


def test_games(db: Path, snap_compare: Any) -> None:
    app = ArenaApp(db, poll_interval=0.05)
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded(app, "3"))


def test_game_filter_nim(db: Path, snap_compare: Any) -> None:
    app = ArenaApp(db, poll_interval=0.05)
    run = loaded(app, "g", "down", "down", "enter", until=lambda a: a.snapshot.scope == "nim")
    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_game_picker(db: Path, snap_compare: Any) -> None:
    app = ArenaApp(db, poll_interval=0.05)
    assert snap_compare(app, terminal_size=SIZE,
                        run_before=loaded(app, "g", until=lambda a: isinstance(a.screen, PickerScreen)))


def test_league_picker(db: Path, snap_compare: Any) -> None:
    app = ArenaApp(db, poll_interval=0.05)
    assert snap_compare(app, terminal_size=SIZE,
                        run_before=loaded(app, "l", until=lambda a: isinstance(a.screen, PickerScreen)))


def test_bot_detail(db: Path, snap_compare: Any) -> None:
    app = ArenaApp(db, poll_interval=0.05)
    run = loaded(app, "down", "enter", until=lambda a: isinstance(a.screen, BotDetailScreen))
    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_help(db: Path, snap_compare: Any) -> None:
    app = ArenaApp(db, poll_interval=0.05)
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded(app, "question_mark"))


def test_replay_from_the_store(db: Path, snap_compare: Any) -> None:
    """The newest game (doublestep), five steps in."""
    app = ArenaApp(db, poll_interval=0.05)
    run = loaded(app, "3", "enter", until=lambda a: isinstance(a.screen, ReplayScreen))

    async def then_step(pilot) -> None:  # type: ignore[no-untyped-def]
        await run(pilot)
        await pilot.press(*["right"] * 5)
        await settled(pilot)
    assert snap_compare(app, terminal_size=SIZE, run_before=then_step)


def test_replay_of_a_timeout_at_its_end(db: Path, snap_compare: Any) -> None:
    app = ArenaApp(db, poll_interval=0.05)

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_for(pilot, lambda: app.snapshot is not None)
        row = next(i for i, g in enumerate(app.snapshot.games) if g.reason != "normal")
        await pilot.press("3", *["down"] * row, "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("end")
        await settled(pilot)
    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_message_missing_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, snap_compare: Any) -> None:
    monkeypatch.chdir(tmp_path)
    app = ArenaApp("missing.sqlite", poll_interval=0.05)
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded(app))


def test_message_empty_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, snap_compare: Any) -> None:
    monkeypatch.chdir(tmp_path)
    Store.open("empty.sqlite", create=True).close()
    app = ArenaApp("empty.sqlite", poll_interval=0.05)
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded(app))


def test_message_newer_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, snap_compare: Any) -> None:
    monkeypatch.chdir(tmp_path)
    Store.open("newer.sqlite", create=True).close()
    conn = sqlite3.connect("newer.sqlite")
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    app = ArenaApp("newer.sqlite", poll_interval=0.05)
    assert snap_compare(app, terminal_size=SIZE, run_before=loaded(app))


# -- the replay viewer on every game, from seeded random games (no store needed) --------------------------
class ReplayOnly(App[None]):
    """Hosts one ReplayScreen with the dashboard's stylesheet."""

    CSS_PATH = ArenaApp.CSS_PATH

    def __init__(self, data: ReplayData) -> None:
        super().__init__()
        self.data = data

    def on_mount(self) -> None:
        self.push_screen(ReplayScreen(self.data, Replay(self.data.spec, self.data.history)))


def random_game(spec: str, seed: int, moves: int) -> ReplayData:
    state = random_state(spec, seed, moves)
    players = [f"bot{i}" for i in range(len(state.returns()))]
    return ReplayData(1, spec, state.history(), players, state.returns(), ["normal"] * len(players), [])


@pytest.mark.parametrize("spec,moves", [("nim(n=23,coin=true)", 6), ("hex(size=7)", 30)])
def test_replay_board(spec: str, moves: int, snap_compare: Any) -> None:
    """The last step of a seeded random game (these rules and action numbers are fixed by convention)."""
    data = random_game(spec, seed=3, moves=moves)
    app = ReplayOnly(data)

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("end")
        await settled(pilot)
    assert snap_compare(app, terminal_size=SIZE, run_before=run)


class BoardOnly(App[None]):
    """One board from a fixed observation: snapshots that do not move when an engine's seeding changes
    (replays of real Colosseum and Sorry! games are checked in test_boards.py)."""

    CSS_PATH = ReplayOnly.CSS_PATH

    def __init__(self, game: str, obs: dict[str, Any], names: list[str]) -> None:
        super().__init__()
        self.board = boards.render(game, obs, names)

    def compose(self) -> ComposeResult:
        yield Static(self.board)


def colosseum_position() -> dict[str, Any]:
    m = 8
    walls = [[[r == 0, c == m - 1, r == m - 1, c == 0] for c in range(m)] for r in range(m)]
    for r, c, d in [(1, 1, 1), (1, 2, 2), (3, 3, 0), (3, 3, 1), (4, 4, 2), (5, 2, 3), (6, 6, 0), (2, 5, 2)]:
        dr, dc = [(-1, 0), (0, 1), (1, 0), (0, -1)][d]
        walls[r][c][d] = True
        walls[r + dr][c + dc][(d + 2) % 4] = True
    return {"size": m, "max_step": 4, "positions": [[2, 2], [5, 6]], "walls": walls, "scores": [30, 34],
            "current_player": 1}


def sorry_position() -> dict[str, Any]:
    return {"colors": ["red", "blue", "yellow", "green"], "card": "11", "current_player": 2,
            "pawns": [[-1, 12, 61, 65], [17, -1, -1, 40], [65, 65, 63, 33], [-1, -1, -1, 50]],
            "draw_pile": {"1": 3, "2": 2, "3": 4, "4": 1, "5": 2, "7": 3, "8": 4, "10": 2, "11": 1, "12": 4,
                          "sorry": 2}}


@pytest.mark.parametrize("game,obs", [("colosseum", colosseum_position()), ("sorry", sorry_position())])
def test_board(game: str, obs: dict[str, Any], snap_compare: Any) -> None:
    names = ["ann", "bob", "cy", "dee"][:len(obs.get("pawns", obs.get("positions", [])))]
    assert snap_compare(BoardOnly(game, obs, names), terminal_size=SIZE)
