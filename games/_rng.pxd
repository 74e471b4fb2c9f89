# A small, fast, GIL-free random number generator shared by every compiled game and bot.
# splitmix64 to seed, xoshiro-style xorshift64* to draw: good enough for playouts, and identical
# on every platform so a seed replays exactly.
from libc.stdint cimport uint64_t, uint32_t

cdef struct Rng:
    uint64_t s


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x = x + <uint64_t>0x9E3779B97F4A7C15
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EB
    return x ^ (x >> 31)


cdef inline void rng_seed(Rng* r, uint64_t seed) noexcept nogil:
    r.s = splitmix64(seed)
    if r.s == 0:
        r.s = <uint64_t>0x9E3779B97F4A7C15


cdef inline uint64_t rng_next(Rng* r) noexcept nogil:
    # xorshift64*
    cdef uint64_t x = r.s
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    r.s = x
    return x * <uint64_t>0x2545F4914F6CDD1D


cdef inline int rng_below(Rng* r, int n) noexcept nogil:
    """Uniform integer in [0, n) for 0 < n < 2**31 (multiply-shift; bias below 2**-32)."""
    return <int>(((rng_next(r) >> 32) * <uint64_t>n) >> 32)


cdef inline double rng_uniform(Rng* r) noexcept nogil:
    """Uniform double in [0, 1)."""
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0)
