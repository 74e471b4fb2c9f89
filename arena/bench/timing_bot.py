"""The time-losses benchmark's bot (arena/bench/scale_timing.py): spins the CPU until 80% of its move time
by its own clock, then answers with a legal move (the largest take in Nim, so games stay short)."""
import time
from typing import Any

SHARE = 0.8


class Bot:
    def __init__(self, game: Any, seat: int, seed: int) -> None:
        pass

    def step(self, state: Any, limit: Any) -> int:
        end = time.perf_counter() + SHARE * limit.time
        while time.perf_counter() < end:
            pass
        return state.legal_actions()[-1]
