"""Progress of a run (issue 18 §1): done/total from the start, games/s, ETA, lines in a log, -q silences."""
from __future__ import annotations

import io
import re
import time

from arena.league.progress import Reporter, duration


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_the_total_is_shown_before_any_game_and_rate_and_eta_after():
    out, clock = io.StringIO(), Clock()
    rep = Reporter("league x", stream=out, terminal=False, clock=clock, interval=30)
    rep.start(40)
    assert "league x: 0/40 games (0%)" in out.getvalue()
    clock.now += 10
    rep.advance(4)  # 4 games in 10 s: 0.4 games/s, 36 to go: 90 s
    assert rep.line().startswith("league x: 4/40 games (10%), 0.40 games/s, ETA 1 min 30 s")
    assert out.getvalue().count("\n") == 1  # less than 30 s since the last line: none yet
    clock.now += 30
    rep.advance(5)
    assert out.getvalue().count("\n") == 2 and "5/40 games" in out.getvalue()
    rep.stop()


def test_a_line_comes_every_interval_even_while_no_game_finishes():
    out = io.StringIO()
    rep = Reporter("league slow", stream=out, terminal=False, interval=0.2)
    rep.start(3)
    deadline = time.monotonic() + 60
    while out.getvalue().count("\n") < 3 and time.monotonic() < deadline:  # the ticker thread writes them
        time.sleep(0.01)
    rep.stop()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3, lines
    assert all("0/3 games" in line and "no game finished yet" in line for line in lines)


def test_quiet_prints_nothing_and_a_label_is_shown_literally():
    out = io.StringIO()
    with Reporter("league \x1b[2J", stream=out, terminal=False, quiet=True) as rep:
        rep.start(2)
        rep.advance()
    assert out.getvalue() == ""
    loud = io.StringIO()
    with Reporter("league \x1b[2J", stream=loud, terminal=False) as rep:
        rep.start(2)
    assert "\x1b" not in loud.getvalue() and "\\x1b[2J" in loud.getvalue()


def test_on_a_terminal_the_bar_shows_total_rate_and_eta():
    out = io.StringIO()
    rep = Reporter("hex", stream=out, terminal=True, transient=False)
    rep.start(10)
    time.sleep(0.05)
    rep.advance(2)
    rep.stop()
    shown = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", out.getvalue())
    assert "2/10" in shown and "games/s" in shown and "ETA" in shown


def test_duration_reads_well():
    assert (duration(5), duration(65), duration(7500)) == ("5 s", "1 min 05 s", "2 h 05 min")


def test_the_terminal_bar_redraws_at_most_twice_a_second():
    # The runner draws the bar in its own process: at rich's default of 10 redraws a second the bar alone cost it
    # 30 ms of CPU a second on the 2-core VM (0.1-0.6 ms a game at 50-230 games/s; issue 26, docs/scale.md).
    stream = io.StringIO()
    reporter = Reporter("league x", stream=stream, terminal=True)
    reporter.start(10)
    try:
        assert reporter._bar is not None and reporter._bar.live.refresh_per_second <= 2
    finally:
        reporter.stop()
