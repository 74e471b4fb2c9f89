# Small inline helpers shared by the compiled bots (no .pyx: everything here is inline).
from libc.time cimport timespec
from games._rng cimport Rng, rng_below

cdef extern from "<time.h>" nogil:
    int clock_gettime(int clk_id, timespec* tp)
    enum: CLOCK_MONOTONIC

cdef enum TieBreak:
    TIE_RANDOM = 0
    TIE_FIRST = 1
    TIE_LAST = 2


cdef inline double now() noexcept nogil:
    """Monotonic seconds (for time budgets inside compiled loops)."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef inline int argmax_tie(const double* scores, int n, int tie_break, Rng* rng) noexcept nogil:
    """Index of the best score; ties go to the first, the last, or a uniformly random one (reservoir)."""
    cdef int i, best = 0, count = 1
    for i in range(1, n):
        if scores[i] > scores[best]:
            best = i
            count = 1
        elif scores[i] == scores[best]:
            if tie_break == TIE_LAST:
                best = i
            elif tie_break == TIE_RANDOM:
                count += 1
                if rng_below(rng, count) == 0:
                    best = i
    return best


cdef inline double win_share(const double* returns, int n_players, int p) noexcept nogil:
    """Seat p's share of the win in a terminal returns vector: 1 for the sole best return, 1/k when k
    seats share it (a two-player draw gives 1/2), 0 otherwise (with 3-4 players only winning counts)."""
    cdef int i, k = 0
    cdef double best = returns[0]
    for i in range(1, n_players):
        if returns[i] > best:
            best = returns[i]
    if returns[p] != best:
        return 0.0
    for i in range(n_players):
        if returns[i] == best:
            k += 1
    return 1.0 / k
