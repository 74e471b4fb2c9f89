"""The dashboard shows names and failure texts from the store literally (issue 13 §2): a league and bots whose
names carry control sequences and Rich markup, and a failure detail with a lone surrogate, are drawn
escaped in every table, screen, picker and message, and nothing crashes."""
from __future__ import annotations

import unicodedata
from pathlib import Path

from textual.widgets import DataTable, Static

from arena.limits import Limits
from arena.text import shown
from arena.tui.app import ArenaApp
from arena.tui.screens import BotDetailScreen, PickerScreen, ReplayScreen
from arena.tui.tables import GamesTable, HeadToHeadTable, LeaderboardTable
from leaderboards import ledger
from leaderboards.store import Store
from tests.leaderboards.support import store_game
from tests.tui.pilot import wait_for
from tests.tui.storefix import play_record, timeout_record

SIZE = (140, 40)
HOSTILE = "\x1b[2J\x1b]52;c;aGk=\x07\x9b31m\u202e\u200b"
BAD = "bel" + HOSTILE
MARKUP = "[@x=(]"
LEAGUE = f"{MARKUP} lg\x1b[2J"
DETAIL = f"Traceback (most recent call last):\nstderr:{HOSTILE} {MARKUP}\nRuntimeError: boom \ud800{HOSTILE}\n"


def unsafe(s: str) -> list[str]:
    return [ch for ch in s if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")]


def build(path: Path) -> dict[str, int]:
    """League LEAGUE: bots BAD (a bot file, on probation), MARKUP and ``random``; four nim games, one a timeout
    of BAD with DETAIL (a lone surrogate in it: JSON in the store can hold one)."""
    ids: dict[str, int] = {}
    with Store.open(path, create=True) as store:
        league = store.ensure_league(LEAGUE, {"games": ["nim"], "limits": Limits().to_dict()})
        for name, spec in ((BAD, None), (MARKUP, "random"), ("random", "greedy")):
            bot, _ = store.upsert_bot(league.id, name, origin="submit", spec=spec,
                                      filename=None if spec else f"evil{HOSTILE}.py",
                                      source=None if spec else "class Bot: pass\n")
            ids[name] = bot.id
        store.set_probation(ids[BAD], f"crashed {HOSTILE}")
        pairs = [(BAD, MARKUP), (MARKUP, "random"), ("random", BAD), (MARKUP, BAD)]
        for i, (a, b) in enumerate(pairs):
            if i == 0:
                record = timeout_record("nim", 10 + i, [a, b], loser=0)
                record["failures"][0]["detail"] = DETAIL
            else:
                record = play_record("nim", 10 + i, [a, b], winner_first=True)
            store_game(store, league.id, f"{i:05d}", "nim", 0, [ids[a], ids[b]], record)
        ledger.rate_pending(store, league.id)
    return ids


def cells(table: DataTable) -> list[str]:  # type: ignore[type-arg]
    return [getattr(c, "plain", str(c)) for row in table.ordered_rows for c in table.get_row(row.key)]


async def test_tables_screens_and_pickers_show_hostile_text_escaped(tmp_path: Path) -> None:
    db = tmp_path / "arena.sqlite"
    ids = build(db)
    app = ArenaApp(db, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.snapshot is not None)
        board = app.query_one(LeaderboardTable)
        texts = cells(board)
        assert f"{shown(BAD)} (probation)" in texts and MARKUP in texts
        await pilot.press("2")
        await wait_for(pilot, lambda: app.query_one(HeadToHeadTable).row_count == 3)
        texts += cells(app.query_one(HeadToHeadTable))
        await pilot.press("3")
        games = app.query_one(GamesTable)
        texts += cells(games)
        status = str(app.query_one("#status", Static).render())
        assert shown(LEAGUE) in status
        for t in texts + [status]:
            assert not unsafe(t), t

        # the replay of the timeout: names in the title, the failure's last line in the side panel
        row = next(i for i, g in enumerate(app.snapshot.games) if g.reason != "normal")
        await pilot.press(*["down"] * row, "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("end")
        drawn = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert shown(f"RuntimeError: boom \ud800{HOSTILE}") in drawn and shown(BAD) in drawn
        assert not unsafe(drawn)
        await pilot.press("escape")

        # the bad bot's detail: name, file name, probation reason and the failure excerpt, all escaped
        app.open_bot(ids[BAD])
        await wait_for(pilot, lambda: isinstance(app.screen, BotDetailScreen))
        drawn = " ".join(str(w.render()) for w in app.screen.query(Static))
        for expected in (shown(BAD), shown(f"evil{HOSTILE}.py"), shown(f"crashed {HOSTILE}"),
                         shown(f"stderr:{HOSTILE} {MARKUP}")):
            assert expected in drawn
        assert not unsafe(drawn)
        await pilot.press("escape")

        # the league picker lists the markup-and-escape league name as text
        await pilot.press("l")
        assert isinstance(app.screen, PickerScreen)
        await pilot.pause()
        await pilot.press("escape")
        screenshot = app.export_screenshot()
        assert "\x1b" not in screenshot and "\x07" not in screenshot


async def test_unknown_league_message_lists_hostile_names_literally(tmp_path: Path) -> None:
    db = tmp_path / "arena.sqlite"
    build(db)
    app = ArenaApp(db, league="nope", poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.message is not None)
        drawn = str(app.query_one("#message", Static).render())
        assert shown(LEAGUE) in drawn
        assert not unsafe(drawn)
        await pilot.press("l")
        assert isinstance(app.screen, PickerScreen)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.snapshot is not None)
        assert app.snapshot.league == LEAGUE  # the exact name still selects the league
