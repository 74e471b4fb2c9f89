"""Inline SVG pictures (no script, nothing from elsewhere): a bot's rating over time with its interval band, the
head-to-head as a colour matrix, a bot's move times against its limit. Every text in them (bot names) is
HTML-escaped here; numbers are formatted by us, so the markup is safe to embed as is (the figures come as
:class:`markupsafe.Markup`, which the templates' autoescape leaves alone). Drawn from :mod:`arena.output.views`' typed
rows, on `arena serve`'s pages and `arena report`'s alike."""
from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from arena.limits import DAY
from arena.output.views import H2HCell, Standing
from arena.text import shown


def _t(value: object) -> str:
    return html.escape(shown(value), quote=True)


def rating_history(points: Sequence[tuple[float, float]], *, width: int = 480, height: int = 160) -> str:
    """mu over the bot's rated games, with the band mu +- 2 sigma (``points``: (mu, sigma) per game in order)."""
    if not points:
        return '<svg class="pic" width="0" height="0" role="img" aria-label="no rated games yet"></svg>'
    lo = min(m - 2 * s for m, s in points)
    hi = max(m + 2 * s for m, s in points)
    span = (hi - lo) or 1.0
    n = max(len(points) - 1, 1)

    def xy(i: int, v: float) -> str:
        return f"{8 + (width - 16) * i / n:.1f},{8 + (height - 16) * (hi - v) / span:.1f}"

    upper = [xy(i, m + 2 * s) for i, (m, s) in enumerate(points)]
    lower = [xy(i, m - 2 * s) for i, (m, s) in reversed(list(enumerate(points)))]
    line = " ".join(xy(i, m) for i, (m, _) in enumerate(points))
    return (f'<svg class="pic rating" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="rating over {len(points)} games">'
            f'<polygon points="{" ".join(upper + lower)}" fill="#9ecae1" fill-opacity="0.5"/>'
            f'<polyline points="{line}" fill="none" stroke="#08519c" stroke-width="1.5"/>'
            f'<text x="8" y="{height - 2}" font-size="10">{lo:.1f}</text>'
            f'<text x="8" y="12" font-size="10">{hi:.1f}</text></svg>')


LABEL = 24
"""Characters of a bot's name shown in the matrix (the rest is in the cell's tooltip and the tables)."""
CHAR = 7
"""Pixels a character of a label may take (monospace at 11 px is 0.6 em, 6.6 px): the room the labels get."""


def h2h_matrix(names: Sequence[str], cells: Sequence[H2HCell], *, cell: int = 26) -> str:
    """Rows beat columns: red (loses) to green (wins) by the row's score rate, written in the cell (percent);
    grey when they have not met. The picture is as large as its labels: row labels end left of the cells, column
    labels lean up and right at 60 degrees over them (the last one's end is right of the last column)."""
    index = {n: i for i, n in enumerate(names)}
    label = CHAR * min(max((len(n) for n in names), default=1), LABEL)
    pad = 12 + label  # row labels' room on the left; column labels' height (sin 60 of their length) on top
    width, height = pad + cell * len(names) + label // 2 + 12, pad + cell * len(names) + 4
    font = 'font-size="11" font-family="monospace"'
    parts = [f'<svg class="pic h2h" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
             'aria-label="head-to-head score rates">']
    for n, i in index.items():
        parts.append(f'<text x="{pad - 4}" y="{pad + cell * i + cell * 0.65:.0f}" {font} '
                     f'text-anchor="end">{_t(n[:LABEL])}</text>')
        x = pad + cell * i + cell * 0.6
        parts.append(f'<text x="{x:.0f}" y="{pad - 4}" {font} '
                     f'transform="rotate(-60 {x:.0f} {pad - 4})">{_t(n[:LABEL])}</text>')
    for c in cells:
        if c.bot not in index or c.opponent not in index:
            continue
        r, k = index[c.bot], index[c.opponent]
        rate = c.win_rate
        fill = "#dddddd" if rate is None else f"rgb({int(230 * (1 - rate)) + 20},{int(200 * rate) + 30},60)"
        title = (f"{_t(c.bot)} vs {_t(c.opponent)}: not met" if rate is None else
                 f"{_t(c.bot)} vs {_t(c.opponent)}: {c.wins}-{c.draws}-{c.losses} ({rate:.0%})")
        parts.append(f'<rect x="{pad + cell * k}" y="{pad + cell * r}" width="{cell - 1}" height="{cell - 1}" '
                     f'fill="{fill}"><title>{title}</title></rect>')
        if rate is not None:
            parts.append(f'<text class="score" x="{pad + cell * k + (cell - 1) / 2:.1f}" '
                         f'y="{pad + cell * r + cell * 0.65:.1f}" font-size="10" text-anchor="middle">'
                         f'{100 * rate:.0f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def move_times(times: Sequence[float], limit: float | None, *, width: int = 480, height: int = 120,
               what: str = "move times", name: str = "limit") -> str:
    """Each move's wall time (a bar, in order) against its limit (a dashed red line): red bars are over it. A limit
    of DAY or more (a game clock's uncapped move) or None: no line, nothing red, the bars to their own scale."""
    if not times:
        return f'<svg class="pic" width="0" height="0" role="img" aria-label="no {what} yet"></svg>'
    capped = limit is not None and limit < DAY
    top = max(max(times), limit if capped and limit is not None else 0.0) * 1.05 or 1.0
    w = (width - 16) / len(times)
    bars = "".join(f'<rect x="{8 + i * w:.1f}" y="{8 + (height - 16) * (1 - t / top):.1f}" '
                   f'width="{max(w - 0.5, 0.5):.1f}" '
                   f'height="{(height - 16) * t / top:.1f}" '
                   f'fill="{"#de2d26" if capped and limit is not None and t > limit else "#3182bd"}"/>'
                   for i, t in enumerate(times))
    head = f'<svg class="pic moves" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
    if not capped or limit is None:
        return f'{head}aria-label="{len(times)} {what} (a game clock: no {name} per move)">{bars}</svg>'
    y = 8 + (height - 16) * (1 - limit / top)
    return (f'{head}aria-label="{len(times)} {what} against the {limit:g} s {name}">{bars}'
            f'<line x1="8" x2="{width - 8}" y1="{y:.1f}" y2="{y:.1f}" stroke="#de2d26" stroke-dasharray="4 2"/>'
            f'<text x="{width - 8}" y="{y - 2:.1f}" font-size="10" text-anchor="end">{name} {limit:g} s</text></svg>')


# -- what the pictures show, read from the store (shared by `arena serve`'s pages and `arena report`) ----------
def histories(store: Any, league_id: int) -> dict[int, list[tuple[float, float]]]:
    """Each bot's (mu, sigma) after each of its rated games, in order (the whole history read once)."""
    out: dict[int, list[tuple[float, float]]] = {}
    for row in store.rating_history(league_id, 0, 1 << 62):
        out.setdefault(row.bot_id, []).append((row.mu, row.sigma))
    return out


def bot_move_times(store: Any, bot_id: int, games: int = 50) -> list[tuple[float, bool]]:
    """The bot's moves (wall time in s, whether it was its first move of the game: start-up included, under the
    first-move limit) in its newest ``games`` games, oldest first."""
    out = []
    for m in reversed(store.bot_moves(bot_id, games)):
        first = True
        for t, s in zip(m.wall_times, m.move_seats):
            if s < len(m.seats) and m.seats[s] == bot_id:
                out.append((t, first))
                first = False
    return out


def bot_figures(history: Sequence[tuple[float, float]], moves: Sequence[tuple[float, bool]], limit: float,
                first_limit: float) -> Markup:
    """A bot page's pictures with their headings (HTML): its rating, then its first moves (start-up included)
    against the first-move limit apart from its later moves against the move limit."""
    recent = list(moves)[-300:]
    first = [t for t, is_first in recent if is_first]
    later = [t for t, is_first in recent if not is_first]
    return Markup(f"<h2>Rating over time</h2>{rating_history(history)}"  # (every text in them escaped by _t)
                  f"<h2>Move times</h2><p>First moves (the bot's start-up included):</p>"
                  f"{move_times(first, first_limit, what='first moves', name='first-move limit')}"
                  f"<p>Later moves:</p>{move_times(later, limit, what='later moves', name='move limit')}")


def matrix_figure(rows: Sequence[Standing], cells: Sequence[H2HCell], top: int = 30) -> Markup:
    """The leaderboard's head-to-head matrix of its first ``top`` bots, with its heading (HTML)."""
    names = [r.bot for r in rows][:top]
    if not names:
        return Markup("")
    return Markup("<h2>Head to head</h2><p>Each row's score rate against each column, in percent (a draw counts "
                  "half; green: wins).</p>"
                  f"{h2h_matrix(names, cells)}")
