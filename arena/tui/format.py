"""Small pure formatting helpers of the dashboard: sparklines, histograms, colours (its percentiles are the view
model's, arena.output.views.percentile: one rule for every screen).

Everything here is deterministic text built from data (no clocks), so the snapshot tests are stable.
"""
from __future__ import annotations

from collections.abc import Sequence

BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = 12, lo: float | None = None, hi: float | None = None) -> str:
    """``values`` squeezed into ``width`` block characters (each the mean of its slice), scaled lo..hi (default:
    their own min..max; give a shared lo..hi to draw several lines on one scale).

    >>> sparkline([0, 1, 2, 3], 4)
    '▁▃▆█'
    >>> sparkline([5, 5], 4)
    '▄▄'
    >>> sparkline([0, 1], 2, lo=0, hi=30)
    '▁▁'
    """
    if not values:
        return ""
    if len(values) > width:  # the mean of each of `width` equal slices
        step = len(values) / width
        values = [_mean(values[int(i * step):max(int((i + 1) * step), int(i * step) + 1)]) for i in range(width)]
    lo = min(values) if lo is None else lo
    hi = max(values) if hi is None else hi
    if hi - lo < 1e-12:
        return BARS[len(BARS) // 2 - 1] * len(values)
    return "".join(BARS[max(0, min(len(BARS) - 1, int((v - lo) / (hi - lo) * (len(BARS) - 1) + 0.5)))]
                   for v in values)


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def histogram(values: Sequence[float], bins: int = 10, lo: float | None = None,
              hi: float | None = None) -> tuple[list[int], float, float]:
    """Counts of ``values`` in ``bins`` equal bins over [lo, hi] (default: min..max of the values)."""
    if not values:
        return [0] * bins, 0.0, 0.0
    lo = min(values) if lo is None else lo
    hi = max(values) if hi is None else hi
    counts = [0] * bins
    span = hi - lo
    for v in values:
        i = 0 if span <= 0 else int((v - lo) / span * bins)
        counts[min(max(i, 0), bins - 1)] += 1
    return counts, lo, hi


def seconds(value: float) -> str:
    """A duration compactly: ``850us``, ``12.3ms``, ``1.25s``.

    >>> seconds(0.0123), seconds(2.5), seconds(0.00085)
    ('12.3ms', '2.50s', '850us')
    """
    if value < 1e-3:
        return f"{value * 1e6:.0f}us"
    if value < 1.0:
        return f"{value * 1e3:.1f}ms"
    return f"{value:.2f}s"


def clock_text(value: float) -> str:
    """A game clock's reading as minutes and seconds, as the replay viewer shows it.

    >>> clock_text(29.94), clock_text(75.0), clock_text(0.04)
    ('0:29.9', '1:15.0', '0:00.0')
    """
    minutes, rest = divmod(round(max(value, 0.0), 1), 60)
    return f"{int(minutes)}:{rest:04.1f}"


def rate_style(rate: float) -> str:
    """A colour for a win rate: red (0) through yellow (0.5) to green (1)."""
    if rate >= 0.65:
        return "bold green"
    if rate >= 0.55:
        return "green"
    if rate > 0.45:
        return "yellow"
    if rate > 0.35:
        return "red"
    return "bold red"


def excerpt(text: str, lines: int = 3, width: int = 70) -> str:
    """The last ``lines`` non-empty lines of ``text`` (stderr tails), each cut to ``width``."""
    kept = [ln.rstrip() for ln in text.splitlines() if ln.strip()][-lines:]
    return "\n".join(ln if len(ln) <= width else ln[:width - 1] + "…" for ln in kept)
