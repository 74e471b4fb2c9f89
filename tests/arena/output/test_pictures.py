"""The move-time pictures: a bot's first moves (its start-up included) are drawn against the first-move limit,
apart from its later moves against the move limit, so a 25 s start-up under a 30 s first-move limit is no red bar
far above "limit 2 s"."""
from __future__ import annotations

import re
from types import SimpleNamespace

from arena.output import pictures

RED = 'fill="#de2d26"'


def charts(html: str) -> list[str]:
    return re.findall(r'<svg class="pic moves".*?</svg>', html)


def test_first_moves_are_drawn_against_the_first_move_limit_apart_from_the_others():
    bot = 7
    games = [SimpleNamespace(seats=[bot, 9], move_seats=[0, 1, 0, 1, 0], wall_times=[24.8, 0.1, 1.2, 0.1, 1.9]),
             SimpleNamespace(seats=[9, bot], move_seats=[0, 1, 0, 1], wall_times=[0.2, 23.0, 0.1, 1.5])]
    store = SimpleNamespace(bot_moves=lambda bot_id, limit: list(reversed(games)))  # (newest first, as the store)
    moves = pictures.bot_move_times(store, bot)
    assert moves == [(24.8, True), (1.2, False), (1.9, False), (23.0, True), (1.5, False)]
    first, later = charts(pictures.bot_figures([], moves, 2.0, 30.0))
    assert "2 first moves against the 30 s first-move limit" in first and RED not in first
    assert "3 later moves against the 2 s move limit" in later and RED not in later
    assert "first-move limit 30 s" in first and "move limit 2 s" in later
    # over their own limits they are red: a 31 s start-up, a 2.5 s later move
    first, later = charts(pictures.bot_figures([], moves + [(31.0, True), (2.5, False)], 2.0, 30.0))
    assert first.count(RED) == 1 and later.count(RED) == 1


NAMES = ["M" * 30, "random", "W" * 24, "greedy", "<b>x</b>"]


def test_the_head_to_head_matrix_shows_its_numbers_and_labels_unclipped_in_a_browser(tmp_path):
    """Every label (long and wide names included) and every cell's score lies inside the picture, drawn in a real
    browser; each cell that met shows its score rate as a number."""
    from arena.output.views import H2HCell
    from tests.browser import browser
    cells = [H2HCell(a, i, b, k, wins=i + 1, draws=1, losses=k + 1)
             for i, a in enumerate(NAMES) for k, b in enumerate(NAMES) if i != k and (i, k) != (1, 3)]
    svg = pictures.h2h_matrix(NAMES, cells)
    page = tmp_path / "m.html"
    page.write_text(f'<!DOCTYPE html><html><body style="margin:40px">{svg}</body></html>')
    b = browser(tmp_path)
    try:
        b.get(page.as_uri())
        report = b.execute_script("""
            const svg = document.querySelector('svg.h2h'), s = svg.getBoundingClientRect(), out = [];
            for (const t of svg.querySelectorAll('text')) {
              const r = t.getBoundingClientRect();
              if (r.left < s.left - 0.5 || r.right > s.right + 0.5 || r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5)
                out.push(['outside', t.textContent, r.left - s.left, s.right - r.right, r.top - s.top,
                          s.bottom - r.bottom]);
            }
            const numbers = [...svg.querySelectorAll('text.score')];
            for (const t of numbers) {
              const cell = t.previousElementSibling.getBoundingClientRect(), r = t.getBoundingClientRect();
              if (r.left < cell.left || r.right > cell.right || r.top < cell.top || r.bottom > cell.bottom)
                out.push(['outside its cell', t.textContent]);
            }
            return {problems: out, numbers: numbers.map(t => t.textContent)};""")
    finally:
        b.quit()
    assert not report["problems"], report["problems"]
    met = [c for c in cells if c.games]
    assert sorted(report["numbers"]) == sorted(f"{100 * c.win_rate:.0f}" for c in met)


def test_a_game_clock_league_draws_its_moves_without_a_per_move_limit():
    # with time_control and no move time given, the limits hold 86400 s (no cap): the bars are drawn to their own
    # scale, with no limit line and nothing red
    from arena.limits import Limits
    limits = Limits(time_control="60+0.5")
    first, later = charts(pictures.bot_figures([], [(3.0, True), (1.2, False), (4.5, False)], limits.move_time,
                                               limits.first_move_time))
    assert "a game clock: no move limit per move" in later and "<line" not in later and RED not in later
    assert 'height="0.0"' not in later  # the 1.2 s bar is visible (not squashed under an 86400 s scale)
    assert "a game clock" in first and "<line" not in first
