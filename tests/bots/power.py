"""The statistics of the strength tests: a threshold that a bot of chance strength reaches rarely, and the
power of the test against the rate measured before (docs/bots-uct.md), so each test says what it can tell."""
from __future__ import annotations

from math import comb


def tail(n: int, k: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def threshold(n: int, chance: float, alpha: float = 0.05) -> int:
    """The fewest wins of ``n`` that a bot winning at the ``chance`` rate reaches with probability <= alpha."""
    return next(k for k in range(n + 2) if tail(n, k, chance) <= alpha)


def design(n: int, chance: float, measured: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The threshold for ``n`` games, after checking the test has at least ``power`` against a bot at the
    ``measured`` rate (else the test is too small to tell and says so)."""
    k = threshold(n, chance, alpha)
    got = tail(n, k, measured)
    assert got >= power, (f"{n} games cannot tell {measured:.0%} from {chance:.0%}: power {got:.2f} at "
                          f"threshold {k}; play more games")
    return k
