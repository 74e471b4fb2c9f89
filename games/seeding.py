"""Deterministic integers from a game's ``seed`` parameter (the same on every platform and Python)."""
from __future__ import annotations

_MASK = (1 << 64) - 1


def splitmix64(x: int) -> int:
    """One step of splitmix64 (the same function games/_rng.pxd uses to seed)."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def seeded_int(seed: int, lo: int, hi: int, stream: int = 0) -> int:
    """A uniform-enough integer in [lo, hi] determined by ``seed`` (and an optional stream number)."""
    return lo + splitmix64((seed * 0x100000001B3 + stream) & _MASK) % (hi - lo + 1)
