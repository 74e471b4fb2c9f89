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
