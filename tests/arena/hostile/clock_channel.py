"""The one channel the sandbox leaves open by design: think time. A sender bot encodes a 64-bit secret, BITS bits a
move, as how long it thinks (symbol x STEP seconds); the receiver reads the wall clock between the end of its own
move and the start of its next one, which is the sender's move and a few milliseconds of the referee's.

``role.txt`` beside it: ``sender SECRET_HEX BITS STEP`` or ``receiver - BITS STEP``. Both play the first legal
action (the game must last: ``nim(n=200,k=1)``). The sender's move m (m >= 1) carries chunk m-1, which the
receiver reads at its move m (the sender moves first). The receiver ends the game by raising
``RuntimeError("DECODED <bits> GAPS <ms,...>")`` once it has every chunk.
"""
import os
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NBITS = 64


class Bot:
    def __init__(self, game, seat, seed):
        with open(os.path.join(HERE, "role.txt")) as f:
            role, secret, bits, step = f.read().split()
        self.role, self.bits, self.unit = role, int(bits), float(step)
        self.secret = int(secret, 16) if secret != "-" else 0
        self.chunks = -(-NBITS // self.bits)
        self.moves = 0
        self.decoded = []
        self.gaps = []
        self.last = None

    def symbol(self, chunk):
        return self.secret >> (chunk * self.bits) & ((1 << self.bits) - 1)

    def step_sender(self):
        if 1 <= self.moves <= self.chunks:
            time.sleep(self.symbol(self.moves - 1) * self.unit)

    def step_receiver(self, now):
        if self.last is not None and 1 <= self.moves <= self.chunks:
            gap = now - self.last
            self.gaps.append(gap)
            # the referee's own part (a few ms, more on a loaded machine) only adds: round down
            value = min(int(gap / self.unit + 0.1), (1 << self.bits) - 1)
            self.decoded.append(value)
        if self.moves == self.chunks:
            bits = "".join(str(self.decoded[i // self.bits] >> (i % self.bits) & 1) for i in range(NBITS))
            raise RuntimeError(f"DECODED {bits} GAPS {','.join(f'{g * 1000:.1f}' for g in self.gaps)}")

    def step(self, state, limit):
        now = time.monotonic()
        if self.role == "sender":
            self.step_sender()
        else:
            self.step_receiver(now)
        self.moves += 1
        self.last = time.monotonic()
        return state.legal_actions()[0]
