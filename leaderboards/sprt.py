"""The sequential probability ratio test of ``arena match A B --sprt ...`` (docs/ratings.md).

H0: A is ``elo0`` stronger than B; H1: A is ``elo1`` stronger. After each observation the log-likelihood ratio
is compared with Wald's bounds ``ln(beta / (1 - alpha))`` (accept H0) and ``ln((1 - beta) / alpha)`` (accept H1).

The LLR is the generalised SPRT of fishtest and fastchess (M. Van den Bergh's approximation of the multinomial
maximum-likelihood ratio): with outcome scores ``x_i`` seen with frequencies ``p_i`` over ``N`` observations, and
the expected score ``s`` under a hypothesis, ``var(s) = sum p_i (x_i - s)^2`` and
``LLR = N / 2 * ln(var(s0) / var(s1))``.

- **Observations.** Pentanomial: a pair of games on one seed with the seats swapped is one observation whose
  score is A's points over the pair / 2 (0, 1/4, 1/2, 3/4, 1): the pair cancels the seat's and the seed's luck,
  so its variance is honest (the trinomial model overstates it and needs more games). Trinomial (one game is one
  observation, scores 0, 1/2, 1) when the games are not all in such pairs.
- **Models.** ``logistic``: ``s = 1 / (1 + 10^(-elo / 400))``. ``normalized``: Elo per standard deviation of the
  result (fastchess's nElo), ``s = 1/2 + elo * sd / (800 / ln 10)`` with ``sd`` the observed standard deviation of
  a game (``sqrt(2 var)`` for a pair's score).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from arena.errors import ConfigError

TRINOMIAL = (0.0, 0.5, 1.0)
PENTANOMIAL = (0.0, 0.25, 0.5, 0.75, 1.0)
NELO = 800 / math.log(10)


@dataclass(frozen=True)
class Sprt:
    """The test's settings (``elo0=0,elo1=50,alpha=0.05,beta=0.05,model=logistic``)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    @classmethod
    def parse(cls, text: str) -> Sprt:
        """Parses ``--sprt``; a bad value is one ConfigError line saying what is allowed."""
        usage = "--sprt takes elo0=E0,elo1=E1[,alpha=A,beta=B,model=logistic|normalized], e.g. elo0=0,elo1=50"
        values: dict[str, str] = {}
        for part in text.split(","):
            key, eq, value = part.partition("=")
            key = key.strip()
            if not eq or key not in ("elo0", "elo1", "alpha", "beta", "model") or key in values:
                raise ConfigError(f"{usage}; got {part.strip()!r}")
            values[key] = value.strip()
        if "elo0" not in values or "elo1" not in values:
            raise ConfigError(f"{usage}; elo0 and elo1 are required")
        try:
            numbers = {k: float(v) for k, v in values.items() if k != "model"}
        except ValueError:
            raise ConfigError(f"{usage}; {text!r} has a value that is not a number") from None
        if not all(math.isfinite(v) for v in numbers.values()):
            raise ConfigError(f"{usage}; values must be finite numbers")
        model = values.get("model", "logistic")
        if model not in ("logistic", "normalized"):
            raise ConfigError(f"--sprt model={model!r} is not allowed: logistic or normalized")
        sprt = cls(numbers["elo0"], numbers["elo1"], numbers.get("alpha", 0.05), numbers.get("beta", 0.05), model)
        if not sprt.elo0 < sprt.elo1:
            raise ConfigError(f"--sprt needs elo0 < elo1, got elo0={sprt.elo0:g}, elo1={sprt.elo1:g}")
        if not (0 < sprt.alpha < 1 and 0 < sprt.beta < 1 and sprt.alpha + sprt.beta < 1):
            raise ConfigError("--sprt needs 0 < alpha, beta < 1 and alpha + beta < 1")
        return sprt

    def llr(self, counts: Sequence[int], scores: Sequence[float]) -> float:
        """The LLR of ``counts[i]`` observations of score ``scores[i]`` (0 while it is undefined: no observation,
        or every observation the same)."""
        n = sum(counts)
        if n == 0:
            return 0.0
        p = [c / n for c in counts]
        mean = sum(pi * x for pi, x in zip(p, scores))
        var = sum(pi * (x - mean) ** 2 for pi, x in zip(p, scores))
        if self.model == "normalized":
            if var == 0:
                return 0.0
            sd = math.sqrt(var * (2 if len(scores) == 5 else 1))  # a pair's score is the mean of two games
            s0, s1 = (0.5 + e * sd / NELO for e in (self.elo0, self.elo1))
        else:
            s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (self.elo0, self.elo1))
        var0, var1 = (sum(pi * (x - s) ** 2 for pi, x in zip(p, scores)) for s in (s0, s1))
        if var0 == 0 or var1 == 0:
            return 0.0
        return 0.5 * n * math.log(var0 / var1)

    def decision(self, llr: float) -> str | None:
        """``H1`` (A is elo1 stronger), ``H0`` (A is elo0 stronger), or None (go on)."""
        return "H1" if llr >= self.upper else "H0" if llr <= self.lower else None


@dataclass(frozen=True)
class SprtResult:
    llr: float
    lower: float
    upper: float
    decision: str
    """``H0``, ``H1`` or ``inconclusive`` (the games ran out first)."""
    stats: str
    """``pentanomial`` or ``trinomial``."""
    counts: tuple[int, ...]
    """Observations per score: LL, LD, DD+WL, WD, WW pairs (pentanomial) or L, D, W games (trinomial)."""
    games: int
    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def verdict(self, a: str, b: str) -> str:
        """The decision in words for bots named ``a`` (the first) and ``b``: which is stronger, by how much (the
        accepted hypothesis) and how sure (the LLR against its bound), e.g. ``H1: greedy is stronger than random
        (elo1=50 accepted, LLR 3.08 >= 2.94)``. ``a`` and ``b`` are shown as given: escape untrusted names first."""
        if self.decision == "inconclusive":
            return (f"inconclusive: {self.games} games did not decide between elo0={self.elo0:g} and "
                    f"elo1={self.elo1:g} (LLR {self.llr:.2f}, bounds {self.lower:.2f} and {self.upper:.2f}); "
                    "more --games would")
        low, high = sorted((self.elo0, self.elo1))
        if self.decision == "H1":  # A is nearer elo1 than elo0: read against 0, where "stronger" begins
            claim = ("is stronger than" if low >= 0 else "is not weaker than" if high > 0 else
                     f"is not {-low:g} Elo weaker than")
            why = f"elo1={self.elo1:g} accepted, LLR {self.llr:.2f} >= {self.upper:.2f}"
        else:
            claim = ("is weaker than" if high <= 0 else "is not stronger than" if low < 0 else
                     f"is not {high:g} Elo stronger than")
            why = f"elo0={self.elo0:g} accepted, LLR {self.llr:.2f} <= {self.lower:.2f}"
        return f"{self.decision}: {a} {claim} {b} ({why})"


def evaluate(sprt: Sprt, points: Sequence[float], *, paired: bool) -> SprtResult:
    """The test on A's points per game (1 win, 1/2 draw, 0 loss) in play order. ``paired``: games 2i and 2i+1 share
    a seed with the seats swapped (arena match's order), so whole pairs are pentanomial observations (an odd last
    game waits for its partner); otherwise every game is a trinomial observation."""
    if paired and len(points) >= 2:
        pairs = [(points[i] + points[i + 1]) / 2 for i in range(0, len(points) - 1, 2)]
        scores: tuple[float, ...] = PENTANOMIAL
        stats, used = "pentanomial", 2 * len(pairs)
        observed = pairs
    else:
        scores, stats, used = TRINOMIAL, "trinomial", len(points)
        observed = list(points)
    counts = tuple(sum(1 for o in observed if abs(o - x) < 1e-9) for x in scores)
    llr = sprt.llr(counts, scores)
    return SprtResult(llr, sprt.lower, sprt.upper, sprt.decision(llr) or "inconclusive", stats, counts, used,
                      sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta, sprt.model)
