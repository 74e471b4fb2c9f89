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
