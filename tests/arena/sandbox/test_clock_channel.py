"""Think time is a channel the sandbox cannot close (issue 31 §5): a bot sees the wall clock, and the time between
the end of its move and the start of its next one is its opponent's move. A sender encodes a 64-bit secret in its
think time (tests/arena/hostile/clock_channel.py) and the receiver decodes it; each game is played with the secret and
with its complement, and a bit decoded right both times crossed. docs/sandbox.md ("The clock") states the bound
measured here; docs/audit.md what the organiser sees of its use (`arena audit`)."""
from __future__ import annotations

import random
import re

import pytest

from arena.referee.sandboxed import play_game
from arena.sandbox import check
from tests.arena.sandbox.test_covert_channels import MASK, crossed
from tests.arena.sandbox_helpers import FAST, assert_nothing_left, place

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(bool(check.missing_mandatory()),
                                 reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}")]
GAME = "nim(n=200,k=1)"
LIMITS = FAST.with_(move_time=2.0, first_move_time=5.0)


def transfer(tmp_path, bits: int, step: float) -> tuple[int, int, list[str]]:
    """(bits that crossed, moves the sender used, the receiver's gaps in ms)."""
    secret = random.getrandbits(64) | 1
    runs, gaps = [], []
    for n, value in enumerate((secret, ~secret & MASK)):
        d = tmp_path / f"run{n}"
        d.mkdir()
        d.chmod(0o755)
        (d / "s").mkdir()
        (d / "r").mkdir()
        sender = place("clock_channel", d / "s", files={"role.txt": f"sender {value:016x} {bits} {step}"})
        receiver = place("clock_channel", d / "r", files={"role.txt": f"receiver - {bits} {step}"})
        record = play_game(GAME, [sender, receiver], 7, LIMITS)
        assert_nothing_left(record)
        assert not [f for f in record.failures if f.seat == 0], record.failures  # the sender ran to the end
        failure = next(f for f in record.failures if f.seat == 1)
        match = re.search(r"DECODED ([01]{64}) GAPS (\S*)", failure.detail)
        assert match, failure.detail
        runs.append(match[1])
        gaps.append(match[2])
    return crossed(secret, runs), -(-64 // bits), gaps


@pytest.mark.parametrize(("bits", "step"), [(3, 0.1), (6, 0.01)])
@pytest.mark.slow
def test_think_time_carries_bits_to_the_opponent(tmp_path, bits, step):
    got, moves, gaps = transfer(tmp_path, bits, step)
    print(f"{bits} bits a move in steps of {step * 1000:g} ms (at most {((1 << bits) - 1) * step:.2f} s a move): "
          f"{got} of 64 bits crossed in {moves} moves ({got / moves:.2f} bits a move); gaps (ms): {gaps[0]}")
    # coarse steps: (nearly) every bit crosses, on a loaded machine too (a referee delay of 90 ms costs one symbol);
    # fine steps: most bits cross, the count is the machine's jitter. docs/sandbox.md states both figures.
    assert got >= (60 if step >= 0.1 else 32), (got, gaps)
