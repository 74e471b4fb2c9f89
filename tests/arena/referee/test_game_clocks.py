"""Game clocks (``[limits] time_control``): each bot's clock is charged what a move is charged, a bot that plays
fast banks time for later moves, the increment and the periods give time back, a flag fall is a timeout, and
``arena match --time-control`` plays with them end to end (docs/leagues.md, "Game clocks").

Real sandboxed bots: each test bot sleeps a planned number of seconds per move (sleeping is charged in full: a
sleeping bot does not wait for a CPU), so the clocks are known to within the referee's few ms per move; every
margin below is a tenth of a second or more.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.league.config import load_config, stored_limits
from arena.limits import DAY, GameClock, Limits, TimeControl
from arena.referee.sandboxed import play_game
from arena.results.records import GameRecord
from bots.base import Limit, clock_share
from leaderboards.store import Store
from tests.leaderboards.support import arena, write

pytestmark = pytest.mark.xdist_group("sandbox")

GAME = "hex(size=5)"
"""Seat 0 makes at least 5 moves (no one connects 5 rows in fewer)."""

SLEEPER = '''
import time

PLAN = {plan!r}
CHECKS = {checks!r}


class Bot:
    def __init__(self, game, seat, seed):
        self.n = 0

    def step(self, state, limit):
        # what the bot is told: its clock, the increment, the moves to go; its move may use all of the clock
        told = {{"clock": limit.clock, "increment": limit.increment, "moves_to_go": limit.moves_to_go,
                 "time": limit.time}}
        for key, want in CHECKS.items():
            if key == "uncapped":  # no move time: the move may use the whole clock
                key, want = "time", limit.clock
            if key == "moves_to_go":
                want = want[self.n % len(want)]
            if told[key] != want:
                raise AssertionError(f"move {{self.n}}: told {{key}} = {{told[key]!r}}, not {{want!r}} ({{told}})")
        if limit.clock is not None and limit.time > limit.clock + 1e-9:
            raise AssertionError(f"a move may use more than the clock: {{told}}")
        time.sleep(PLAN[min(self.n, len(PLAN) - 1)])
        self.n += 1
        return state.legal_actions()[0]
'''


def sleeper(tmp_path: Path, name: str, plan: list[float], checks: dict | None = None) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(SLEEPER.format(plan=plan, checks=checks or {}))
    return str(path)


def own(record, what: str, seat: int = 0) -> list:
    """One seat's entries of a per-decision list of the record."""
    values = record.info[what] if what in record.info else getattr(record, what)
    return [v for s, v in zip(record.move_seats, values) if s == seat]


def flag(record, seat: int = 0):
    failures = [f for f in record.failures if f.seat == seat]
    assert len(failures) == 1, record.failures
    return failures[0]


def play(bot: str, tc: str, **limits: float) -> GameRecord:
    return play_game(GAME, [bot, "random"], 1, Limits(time_control=tc, memory_mb=200, **limits))


# -- flagging and banking ------------------------------------------------------------------------------------------
def test_a_bot_that_spends_its_clock_over_a_few_moves_flags_though_each_move_is_short(tmp_path):
    # 0.3 s a move, far under the old 2 s move time; its 1 s clock is gone on its 4th move (0.1 s left for it)
    record = play(sleeper(tmp_path, "steady", [0.3]), "1+0")
    f = flag(record)
    assert f.reason == "timeout" and record.terminations[0] == "timeout" and record.returns[0] < 0, record.failures
    assert "the clock ran out (time control 1+0)" in f.detail, f.detail
    moves = len(own(record, "wall_times"))
    assert 3 <= moves <= 4, f"flagged on its move {moves}: {f.detail}"
    assert max(own(record, "wall_times")[:-1]) < 0.6  # every move it made in time was short
    left = own(record, "clock_left")
    assert left[-1] == 0.0 and record.info["clocks_end"][0] == 0.0, left
    assert all(a > b for a, b in zip(left[:-1], left[1:])), left  # charged each move: its clock only went down


def test_a_bot_that_plays_fast_banks_time_for_a_long_move_and_one_that_spends_evenly_flags(tmp_path):
    # a 2 s clock: three instant moves, then 1.2 s (more than half the clock, more than the average of a 5-move
    # game); spending 0.6 s on every move (less than that 1.2 s) flags on the 4th
    banker = play(sleeper(tmp_path, "banker", [0.0, 0.0, 0.0, 1.2, 0.0]), "2+0")
    assert banker.failures == [] and banker.terminations == ["normal", "normal"], banker.failures
    walls = own(banker, "wall_times")
    assert walls[3] > 1.1 and walls[3] > 2 * sum(walls) / len(walls), walls
    left = own(banker, "clock_left")
    assert 0.4 < left[3] < 1.0 and left[2] > 1.8, left  # what it banked paid for the long move
    even = play(sleeper(tmp_path, "even", [0.6]), "2+0")
    f = flag(even)
    assert f.reason == "timeout" and "clock ran out" in f.detail, f.detail
    assert len(own(even, "wall_times")) in (3, 4), own(even, "wall_times")


@pytest.mark.slow
def test_the_increment_is_added_after_every_move(tmp_path):
    # 0.3 s a move: 0.5 s with no increment flags on the 2nd move (0.2 s left); with 0.35 s back after each move the
    # clock grows by ~0.05 s a move, and the bot is told the increment and its clock, which its move may use whole
    steady = [0.3]
    none = play(sleeper(tmp_path, "plain", steady), "0.5+0")
    assert flag(none).reason == "timeout" and len(own(none, "wall_times")) == 2, none.failures
    record = play(sleeper(tmp_path, "inc", steady, {"increment": 0.35}), "0.5+0.35")
    assert record.failures == [], record.failures
    left = own(record, "clock_left")
    assert len(left) >= 5 and all(x > 0.45 for x in left), left
    assert left[-1] > left[0] + 0.05, left  # 4+ moves of +0.05 s each (less a few ms of the referee's per move)
    assert record.info["time_control"] == "0.5+0.35"


def test_periods_add_the_base_again_and_the_bot_is_told_its_moves_to_go(tmp_path):
    # 0.15 s a move on a 0.5 s clock: it flags on the 4th move without periods; with 2 moves a period the base
    # comes back after every 2nd move
    steady = [0.15]
    none = play(sleeper(tmp_path, "plain", steady), "0.5")
    assert flag(none).reason == "timeout" and len(own(none, "wall_times")) in (3, 4), none.failures
    record = play(sleeper(tmp_path, "periods", steady, {"moves_to_go": [2, 1]}), "2/0.5")
    assert record.failures == [], record.failures
    left = own(record, "clock_left")
    assert len(left) >= 5, left
    assert all(left[i] > left[i - 1] for i in range(1, len(left), 2)), left  # refilled after moves 2, 4, ...
    assert all(left[i] < left[i - 1] for i in range(2, len(left), 2)), left  # and charged on the others
    assert left[1] > 0.6 and min(left) > 0.3, left


def test_an_explicit_move_time_caps_one_move_within_the_clock(tmp_path):
    # the banker's 1.2 s move holds on a 2 s clock, but not when the league also caps a move at 0.5 s: that is a
    # move timeout, not a flag (its clock had time left)
    bot = sleeper(tmp_path, "capped", [0.0, 0.0, 0.0, 1.2, 0.0])
    record = play(bot, "2+0", move_time=0.5)
    f = flag(record)
    assert f.reason == "timeout" and "no answer within the move time (0.5 s)" in f.detail, f.detail
    assert "clock ran out" not in f.detail


def test_the_bot_is_told_its_clock_and_may_use_all_of_it_without_a_move_time(tmp_path):
    # with time_control alone no move time caps a move: a move's time is the whole clock (the bot checks it)
    record = play(sleeper(tmp_path, "told", [0.05], {"increment": 0.0, "moves_to_go": [None], "uncapped": True}), "3+0")
    assert record.failures == [], record.failures
    limits = Limits(time_control="3+0")
    assert limits.move_time == DAY and limits.first_move_time == DAY  # left out: no cap


def test_the_first_move_pays_for_start_up(tmp_path):
    # a bot that takes 0.8 s to load (its module sleeps) on a 1 s clock: the load is charged to its first move (less
    # arena's own 0.1 s of it), so a 0.5 s first move flags (0.7 + 0.5 > 1 s), though the move itself is short
    path = tmp_path / "slow_start.py"
    path.write_text("import time\ntime.sleep(0.8)\n" + SLEEPER.format(plan=[0.5], checks={}))
    record = play(str(path), "1+0")
    f = flag(record)
    assert f.reason == "timeout" and "clock ran out" in f.detail and len(own(record, "wall_times")) == 1, f.detail


@pytest.mark.parametrize("bot", ["uct", "mc(n=0)"])
def test_built_in_bots_share_their_clock_and_finish_a_game(bot):
    record = play_game(GAME, [bot, "random"], 2, Limits(time_control="1.5+0.05"))
    assert record.failures == [] and record.terminations == ["normal", "normal"], record.failures
    walls = own(record, "wall_times")
    assert sum(walls) < 1.5 + 0.05 * len(walls), walls
    assert max(walls) < 0.9, walls  # never more than half of what is left (plus start-up on the first move)


# -- the time control, the clock, the policy --------------------------------------------------------------------
@pytest.mark.parametrize("text,parsed", [
    ("60+0.5", TimeControl(60.0, 0.5, None)), ("40/60+0.5", TimeControl(60.0, 0.5, 40)),
    ("60", TimeControl(60.0, 0.0, None)), ("40/60", TimeControl(60.0, 0.0, 40)), (".5+.1", TimeControl(0.5, 0.1)),
    (" 40 / 60 + 0.5 ", TimeControl(60.0, 0.5, 40)),
])
def test_time_controls_parse(text, parsed):
    assert TimeControl.parse(text) == parsed
    assert TimeControl.parse(str(parsed)) == parsed


@pytest.mark.parametrize("value", ["abc", "", "0+1", "60+", "+1", "60+-1", "0/60", "40/0", "1e3+1", "60+0.5+1",
                                   "100001/60", "90000+0", "40.5/60"])
def test_a_bad_time_control_is_one_line_naming_the_forms(value):
    with pytest.raises(ConfigError) as info:
        Limits.from_dict({"time_control": value})
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"limits.time_control = {json.dumps(value)} is not allowed")
    assert '"BASE+INCREMENT" or "MOVES/BASE+INCREMENT"' in message and "40/60+0.5" in message


def test_a_number_is_not_a_time_control():
    with pytest.raises(ConfigError, match=r'^limits\.time_control = 60 is not allowed: "BASE\+INCREMENT"'):
        Limits.from_dict({"time_control": 60})


def test_a_clock_refills_and_counts_its_moves():
    clock = GameClock(TimeControl(1.0, 0.25, 3))
    assert clock.left == 1.0 and clock.moves_to_go == 3
    clock.charge(0.5)
    assert clock.left == pytest.approx(0.75) and clock.moves_to_go == 2
    clock.charge(0.8)  # a move within its deadline's grace: 0.05 s of debt, paid by the increment first
    assert clock.left == pytest.approx(0.2) and clock.moves_to_go == 1
    clock.charge(0.1)  # the period's last move: the base comes back
    assert clock.left == pytest.approx(1.35) and clock.moves_to_go == 3 and clock.after == [0.75, 0.2, 1.35]
    clock.flag()
    assert clock.flagged and clock.left == 0.0 and clock.after[-1] == 0.0


def test_limits_stored_without_a_clock_read_as_before_and_with_one_round_trip():
    assert "time_control" not in Limits().to_dict()  # old stored configs and records are unchanged
    assert Limits.from_dict(Limits().to_dict()) == Limits()
    capped = Limits(time_control="40/60+0.5", move_time=5.0)
    assert Limits.from_dict(capped.to_dict()) == capped and capped.first_move_time == DAY
    assert Limits(move_time=1.0).with_(time_control="10+1").move_time == DAY  # turning a clock on: no cap left
    assert Limits(time_control="10+1").with_(move_time=1.0).move_time == 1.0


def test_the_game_bound_accounts_for_the_clocks():
    # two seats, 100 decisions: twice the clocks and the increments (and a tenth of a second a decision), a minute
    limits = Limits(time_control="10+1")
    assert limits.game_seconds(2, 100) == pytest.approx(2 * (2 * 10 + 100 * 1) + 10 + 60)
    periods = Limits(time_control="40/10")  # 100 decisions: at most 2 refills in all
    assert periods.game_seconds(2, 100) == pytest.approx(2 * (2 * 10 + 2 * 10) + 10 + 60)
    capped = Limits(time_control="600+0", move_time=0.1, first_move_time=1.0)  # the caps bound it first
    assert capped.game_seconds(2, 100) == pytest.approx(2 * 1.0 + 2 * 100 * 0.1 + 60)
    assert limits.startup_time() == 10.0 and Limits().startup_time() == 30.0
    assert limits.bot_seconds(100) == pytest.approx(10 + 100 + 10)


def test_the_clock_policy_shares_what_is_left():
    assert clock_share(60.0, 0.0, None) == pytest.approx(2.0)  # an even share over 30 moves
    assert clock_share(60.0, 1.0, 40) == pytest.approx(1.5 + 0.75)
    assert clock_share(1.0, 5.0, None) == pytest.approx(0.5)  # never more than half of what is left
    assert clock_share(1.0, 0.0, 1) == pytest.approx(0.8)  # the period's last move: the base comes back
    limit = Limit(time=1.0, clock=60.0, increment=0.0)
    assert limit.think_time == pytest.approx(1.0)  # never past the move's own time
    assert Limit(time=60.0, clock=60.0, think=0.5).think_time == pytest.approx(0.5)
    assert Limit(time=60.0, clock=60.0).think_time == pytest.approx(2.0)


# -- arena match --time-control ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_match_time_control_end_to_end(tmp_path):
    bot = sleeper(tmp_path, "steady", [0.3])
    p = arena(tmp_path, "match", GAME, bot, "random", "--games", "1", "--time-control", "1+0", "--json", "-q")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["limits"]["time_control"] == "1+0" and out["limits"]["move_time"] == DAY
    game = out["games"][0]
    assert game["terminations"][0] == "timeout" and "the clock ran out" in game["failures"][0]["detail"], game
    # --move-time given alongside caps a move; the banker's long move is then a move timeout
    banker = sleeper(tmp_path, "banker", [0.0, 0.0, 0.0, 1.2, 0.0])
    p = arena(tmp_path, "match", GAME, banker, "random", "--games", "1", "--time-control", "2+0", "--json", "-q")
    assert p.returncode == 0 and json.loads(p.stdout)["games"][0]["failures"] == [], p.stdout + p.stderr
    game = json.loads(p.stdout)["games"][0]  # the clocks are in the JSON as in the store's record
    assert game["time_control"] in ("2", "2+0") and len(game["clock_left"]) == len(game["move_seats"])
    assert len(game["clocks_end"]) == 2 and 0 < game["clocks_end"][0] < 2.0
    p = arena(tmp_path, "match", GAME, banker, "random", "--games", "1", "--time-control", "2+0", "--move-time",
              "0.5", "--json", "-q")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["limits"]["move_time"] == 0.5 and "move time (0.5 s)" in out["games"][0]["failures"][0]["detail"]


@pytest.mark.parametrize("value", ["60+x", "0", "abc"])
def test_match_refuses_a_bad_time_control_in_one_line(tmp_path, value):
    p = arena(tmp_path, "match", "nim", "random", "random", "--games", "1", "--time-control", value)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "--time-control" in lines[0] and "MOVES/BASE+INCREMENT" in lines[0], p.stderr


# -- a league's [limits] ------------------------------------------------------------------------------------------
LEAGUE = """
name = "clocks"
games = ["nim"]
games_per_pairing = 2
database = "clocks.sqlite"
bots = ["random", "uct"]
[limits]
time_control = "{tc}"
"""


@pytest.mark.slow
def test_a_league_plays_with_clocks_and_the_replay_shows_them(tmp_path):
    write(tmp_path / "league.toml", LEAGUE.format(tc="3/2+0.1"))
    done = arena(tmp_path, "league", "run", "league.toml", "-q", "-j", "1")
    assert done.returncode == 0, done.stderr
    with Store.open(tmp_path / "clocks.sqlite") as store:
        league = store.find_league("clocks")
        assert stored_limits(league.config).clock() == TimeControl(2.0, 0.1, 3)
        games = store.games(league.id)
    assert len(games) == 2 and all(g.failures == [] for g in games)
    for g in games:
        assert g.info["time_control"] == "3/2+0.1" and len(g.info["clock_left"]) == len(g.move_seats)
        most = TimeControl(2.0, 0.1, 3).total(len(g.move_seats) + 1)  # never more than the base, refills, increments
        assert all(0 < x <= most for x in g.info["clock_left"]), g.info["clock_left"]
    shown = arena(tmp_path, "replay", str(games[0].id), "--no-board", "--db", "clocks.sqlite")
    assert shown.returncode == 0, shown.stderr
    assert "time control: 3/2+0.1" in shown.stdout and shown.stdout.count(", clock ") == len(games[0].move_seats)


def test_a_league_file_with_a_bad_time_control_is_one_line_naming_the_file(tmp_path):
    write(tmp_path / "league.toml", LEAGUE.format(tc="40/60s"))
    p = arena(tmp_path, "league", "run", "league.toml", "-q")
    assert p.returncode == 2 and not (tmp_path / "clocks.sqlite").exists(), p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and 'league.toml: limits.time_control = "40/60s" is not allowed' in lines[0], p.stderr
    with pytest.raises(ConfigError, match="MOVES/BASE"):
        load_config(tmp_path / "league.toml")


def test_answering_within_the_grace_every_move_gains_no_time():
    """A bot that always answers just past its clock, within the deadline's grace (2% + 50 ms), ran a 1+0.1 game
    on 0.139 s a move and never flagged: the clock was set to 0 before the increment, so each overrun was free.
    The overrun is now a debt: over any number of moves, the bot spends no more than the clock gave it (its base
    and increments) and one grace."""
    limits = Limits(time_control="1+0.1")
    clock = GameClock(TimeControl.parse("1+0.1"))
    spent, moves = 0.0, 0
    for move in range(200):
        allowed = limits.allowance(move, clock)
        if allowed.clock is not None and allowed.clock <= 0:
            break  # (the proxy flags a move that starts on an empty clock)
        used = allowed.time * 1.02 + 0.035  # inside the grace the deadline gives
        clock.charge(used)
        spent, moves = spent + used, moves + 1
    assert moves > 20
    assert spent <= 1.0 + 0.1 * moves + 0.02 * 1.0 + 0.05, (spent, moves)
