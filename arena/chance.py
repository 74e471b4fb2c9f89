"""Chance the bots cannot foresee: draws keyed by a secret no bot process ever sees (docs/sandbox.md, "Chance").

A game's seed is public (it is a game parameter, so every bot gets it). Drawing chance from the seed alone
lets a bot repeat the draw and know every card before it is turned, so the sandboxed referee draws from a
*chance key*: 32 random bytes kept by whoever runs the games (a league's key lives in its store; ``arena
match`` makes one per run and prints it with ``--json``). Each game's streams are keyed by
``HMAC-SHA256(key, purpose | seed)``:

- the same key and seed give the same draws (duplicate seeds: every seating of a fixture sees the same
  cards; ``arena replay --verify`` re-draws them);
- without the key, the draws are unpredictable (a PRF), and what a bot does get from the key, its own
  seed, is another HMAC output that tells nothing about the chance stream (or the other bots' seeds).

In-process play without a key (tests, experiments) keeps the old reproducible ``random.Random(seed)``.
"""
from __future__ import annotations

import hashlib
import hmac
import random
import secrets
from typing import Any

from arena.errors import ConfigError
from games.seeding import seeded_int

KEY_BYTES = 32


def new_key() -> bytes:
    """A fresh chance key from the OS's CSPRNG."""
    return secrets.token_bytes(KEY_BYTES)


def key_id(key: bytes) -> str:
    """A public fingerprint of a key (a hash; it reveals nothing of the key): records keep it so a verifier
    knows which key drew their chance."""
    return hashlib.sha256(b"arena-chance-key-id|" + key).hexdigest()[:16]


def parse_key(text: str) -> bytes:
    """A key from its hex form (``--chance-key``).

    Raises:
        ConfigError: not 64 hex digits (a usage error: the key is the user's input).
    """
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise ConfigError(f"a chance key is {2 * KEY_BYTES} hex digits (as printed in 'chance_key' by arena match "
                         f"--json), got {text[:80]!r}")
    return key


def _derive(key: bytes, purpose: str, seed: int) -> bytes:
    return hmac.new(key, f"arena|{purpose}|{seed}".encode(), hashlib.sha256).digest()


class KeyedRandom(random.Random):
    """A ``random.Random`` whose every bit comes from BLAKE2b keyed by a 32-byte secret, in counter mode: a
    stream nobody without the secret can predict, however many outputs they have seen (the Mersenne
    Twister behind ``random.Random`` can be recovered from its outputs)."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self._counter = 0
        super().__init__()

    def seed(self, *args: object, **kwargs: object) -> None:  # the stream is fixed by the secret
        self._counter = 0

    def _block(self) -> bytes:
        self._counter += 1
        return hashlib.blake2b(self._counter.to_bytes(8, "big"), key=self._secret, digest_size=64).digest()

    def random(self) -> float:
        return (int.from_bytes(self._block()[:8], "big") >> 11) * (1.0 / (1 << 53))

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        data = b""
        while len(data) * 8 < k:
            data += self._block()
        return int.from_bytes(data, "big") >> (len(data) * 8 - k)

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle: the same stream at the same place
        return type(self), (self._secret,), self.getstate()

    def getstate(self) -> tuple[bytes, int]:  # type: ignore[override]
        return self._secret, self._counter

    def setstate(self, state: tuple[bytes, int]) -> None:  # type: ignore[override]
        self._secret, self._counter = state


def chance_rng(seed: int, key: bytes | None = None) -> random.Random:
    """The referee's chance draws for the game with this seed: keyed by ``key``, or (no key: in-process
    tests and experiments only) the public ``random.Random(seed)``."""
    return random.Random(seed) if key is None else KeyedRandom(_derive(key, "chance", seed))


def substitute_rng(seed: int, key: bytes | None = None) -> random.Random:
    """The random moves played for a failed bot (``on_failure = "random_move"``), keyed like chance."""
    return random.Random(seed ^ 0x5EED) if key is None else KeyedRandom(_derive(key, "substitute", seed))


def bot_seed(seed: int, seat: int, key: bytes | None = None) -> int:
    """Each bot's seed (0 .. 2**31-1): an HMAC of the seed and seat under the key, so a bot learns nothing
    from it about the chance stream or the other bots' seeds; without a key, derived from the seed alone."""
    if key is None:
        return seeded_int(seed, 0, 2**31 - 1, stream=1000 + seat)
    return int.from_bytes(_derive(key, f"bot|{seat}", seed)[:8], "big") % 2**31
