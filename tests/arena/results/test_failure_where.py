"""Every failure says where (issue 23 §2): every kind of bot (file, folder, COMP424 agent, OpenSpiel wrapper) gets the
traceback of its own code with paths relative to its snapshot; a bot that cannot start in `arena match` is one line
with the reason and exit 2; a COMP424 checkout given without `comp424:` is recognised; failure positions are the
replay's 1-based move numbers everywhere."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import arena as arena_pkg
from tests.leaderboards.support import arena, write

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "comp424"
CHECKOUT = FIXTURES / "checkout"
INSTALL = os.path.dirname(os.path.dirname(os.path.abspath(arena_pkg.__file__)))

pytestmark = pytest.mark.xdist_group("failure_where")

HELPER_BOT = """
class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        return helper()


def helper():
    raise ValueError("boom in the helper")
"""

OPENSPIEL_BOT = """
from bots.openspiel_bots import wrap


class Broken:
    def step(self, state):
        return search(state)


def search(state):
    raise KeyError("no such node")


Bot = wrap(lambda game, seat, seed: Broken())
"""


def _failure(tmp_path: Path, game: str, bot: str) -> dict:
    out = arena(tmp_path, "match", game, bot, "random", "--games", "1", "--json", "-q")
    assert out.returncode == 0, out.stderr
    failures = json.loads(out.stdout)["games"][0]["failures"]
    assert failures, out.stdout
    return failures[0]


def _assert_own_traceback(detail: str, frames: list[str]) -> None:
    for frame in frames:
        assert frame in detail, detail
    assert INSTALL not in detail and "/bot/" not in detail and "arena/sandbox/host.py" not in detail, detail


def test_a_file_bots_traceback_names_its_own_file_relative_to_its_snapshot(tmp_path):
    write(tmp_path / "helperbot.py", HELPER_BOT)
    f = _failure(tmp_path, "hex(size=4)", "helperbot.py")
    assert f["reason"] == "crash"
    _assert_own_traceback(f["detail"], ['File "helperbot.py", line 6, in step',
                                        'File "helperbot.py", line 10, in helper',
                                        "ValueError: boom in the helper"])


def test_a_folder_bots_traceback_names_its_helper_module(tmp_path):
    (tmp_path / "folder" / "lib").mkdir(parents=True)
    write(tmp_path / "folder" / "lib" / "__init__.py", "")
    write(tmp_path / "folder" / "lib" / "search.py", "def best(state):\n    return state.nothing_here\n")
    write(tmp_path / "folder" / "bot.py", """
        from lib.search import best

        class Bot:
            def __init__(self, game, seat, seed):
                pass

            def step(self, state, limit):
                return best(state)
        """)
    f = _failure(tmp_path, "hex(size=4)", "folder")
    _assert_own_traceback(f["detail"], ['File "bot.py", line 8, in step', 'File "lib/search.py", line 2, in best',
                                        "AttributeError"])


def test_a_comp424_agent_that_raises_has_its_traceback_in_the_detail(tmp_path):
    f = _failure(tmp_path, "colosseum(size=6)", f"comp424:{CHECKOUT}@raising_agent")
    assert f["reason"] == "illegal"
    _assert_own_traceback(f["detail"], ["the agent raised ValueError: my search has a bug",
                                        'File "agents/bad_agents.py", line 9, in step'])
    assert "comp424.py" not in f["detail"]


def test_an_openspiel_wrapped_bots_traceback_is_its_own_code(tmp_path):
    pytest.importorskip("pyspiel", reason="the OpenSpiel wrapper needs open_spiel")
    write(tmp_path / "osbot.py", OPENSPIEL_BOT)
    f = _failure(tmp_path, "hex(size=4)", "osbot.py")
    _assert_own_traceback(f["detail"], ['File "osbot.py", line 6, in step', 'File "osbot.py", line 10, in search',
                                        "KeyError: 'no such node'"])
    assert "openspiel_bots.py" not in f["detail"]


@pytest.mark.parametrize("bot, text, cause", [
    ("nobot.py", "x = 1\n", "defines no class Bot"),
    ("binary.py", "\x00\x01 not python", "SyntaxError"),
    ("comp424:{checkout}@studentagent", None, "no agent registered as 'studentagent'"),
])
def test_a_bot_that_cannot_start_in_a_match_is_one_line_and_exit_2(tmp_path, bot, text, cause):
    if text is not None:
        (tmp_path / bot).write_text(text)
    game = "colosseum(size=5)" if bot.startswith("comp424:") else "hex(size=4)"
    out = arena(tmp_path, "match", game, bot.format(checkout=CHECKOUT), "random", "--games", "2", "-q")
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot start" in lines[0] and cause in lines[0], out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


@pytest.mark.parametrize("folder", ["checkout", "handin"])
def test_a_comp424_folder_given_without_the_prefix_is_recognised(tmp_path, folder):
    path = FIXTURES / folder
    out = arena(tmp_path, "match", "colosseum(size=5)", str(path), "random", "--games", "1", "-q")
    assert out.returncode == 2
    line = out.stderr.strip()
    assert len(line.splitlines()) == 1 and f"comp424:{path}" in line and "bot.py" not in line, line


def test_a_league_bot_that_is_a_comp424_checkout_is_told_its_format(tmp_path):
    config = write(tmp_path / "league.toml", f"""
        name = "course"
        games = ["colosseum(size=5)"]
        [[bots]]
        name = "alice"
        file = "{CHECKOUT}"
        [[bots]]
        name = "r"
        spec = "random"
        """)
    out = arena(tmp_path, "league", "run", str(config), "-q")
    assert out.returncode == 2
    assert 'format = "comp424"' in out.stderr and "bot.py" not in out.stderr, out.stderr


# -- one numbering of moves: the replays, the report, the dashboard and the failure texts ---------------------------
SECOND_MOVE_ILLEGAL = """
class Bot:
    def __init__(self, game, seat, seed):
        self.n = 0

    def step(self, state, limit):
        self.n += 1
        return 999 if self.n == 2 else state.legal_actions()[0]
"""


@pytest.fixture(scope="module")
def opened(tmp_path_factory):
    """A league with a two-move opening whose file bot answers illegally on its second move (random_move: a random
    move is played for it), run, with its store."""
    d = tmp_path_factory.mktemp("opened")
    write(d / "twice.py", SECOND_MOVE_ILLEGAL)
    config = write(d / "league.toml", """
        name = "opened"
        games = ["hex(size=4)"]
        games_per_pairing = 2
        seed = 3
        database = "o.sqlite"
        on_failure = "random_move"
        openings = { plies = 2 }
        [[bots]]
        name = "twice"
        file = "twice.py"
        [[bots]]
        name = "alice"
        spec = "random"
        """)
    run = arena(d, "league", "run", str(config), "-q")
    assert run.returncode == 0, run.stderr
    from leaderboards.store import Store
    with Store.open(d / "o.sqlite", readonly=True) as store:
        games = store.games(store.find_league("opened").id)
    return d, [g for g in games if g.failures]


def _replay_lines(d: Path, game_id: int) -> dict[int, str]:
    out = arena(d, "replay", str(game_id), "--db", "o.sqlite", "--no-board")
    assert out.returncode == 0, out.stderr
    lines = {}
    for line in out.stdout.splitlines():
        head, _, rest = line.strip().partition(". ")
        if head.isdigit():
            lines[int(head)] = rest
    return lines, out.stdout


@pytest.mark.slow
def test_opening_moves_are_the_openings_and_every_time_is_its_moves(opened):
    d, games = opened
    g = games[0]
    lines, _ = _replay_lines(d, g.id)
    assert lines[1].startswith("opening: ") and lines[2].startswith("opening: "), lines
    assert "ms]" not in lines[1] + lines[2]
    first = lines[3]  # the first decision: the seat to move after the opening, with the first measured time
    assert first.startswith(f"seat {g.move_seats[0]} ") and first.endswith(f"[{1000 * g.wall_times[0]:.1f} ms]"), first


def test_a_failure_is_the_same_move_number_in_every_display(opened):
    d, games = opened
    for g in games[:2]:
        f = g.failures[0]
        n = f.move_number + 1
        lines, text = _replay_lines(d, g.id)
        # the move played in the failing bot's place is the replay's line n, by the failing seat
        assert lines[n].startswith(f"seat {f.seat} "), (n, lines)
        assert f"({f.substituted})" in lines[n]
        assert f"illegal at move {n}" in text
        export = arena(d, "export", "games", "--db", "o.sqlite", "--csv")
        assert export.returncode == 0, export.stderr
        row = next(r for r in export.stdout.splitlines() if r.startswith(f"{g.id},"))
        assert f"illegal at move {n}" in row, row
    report = arena(d, "report", "--db", "o.sqlite", "--out", "site")
    assert report.returncode == 0, report.stderr
    twice = next(b for b in games[0].seats if games[0].players[games[0].seats.index(b)] == "twice")
    page = (d / "site" / "bots" / f"bot-{twice}.html").read_text()
    assert f"illegal at move {games[0].failures[0].move_number + 1}" in page
    data = (d / "site" / "data" / "replays-0.js").read_text()
    replays = json.loads(data[data.index("{"):data.rindex("}") + 1])
    shown = replays[str(games[0].id)]
    assert shown["failures"][0]["move"] == games[0].failures[0].move_number + 1
    assert [fr.get("opening", False) for fr in shown["frames"][1:4]] == [True, True, False]
    assert shown["frames"][1]["ms"] is None and shown["frames"][3]["ms"] == round(1000 * games[0].wall_times[0], 1)


def test_the_dashboards_replay_counts_the_same_moves(opened):
    from arena.tui.data import StoreReader
    from arena.tui.replay import Replay
    d, games = opened
    g = games[0]
    reader = StoreReader(d / "o.sqlite")
    try:
        data = reader.replay(g.id)
    finally:
        reader.close()
    replay = Replay(data.spec, data.history, data.opening)
    last = len(replay) - 1
    assert replay.is_opening(1) and replay.is_opening(2) and not replay.is_opening(3)
    assert replay.bot_move(1) is None and replay.bot_move(3) == 0  # the first time is the first decision's
    assert replay.bot_moves_until(last) == len(g.move_seats) == data.moves
