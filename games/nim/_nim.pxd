from games._core cimport CoreState

cdef class NimState(CoreState):
    cdef int pile          # counters left
    cdef int k             # most counters one move may take
    cdef bint coin         # coin variant: a chance node (the flip) after every move
    cdef bint at_chance    # waiting for the coin flip of last_mover
    cdef int player        # seat to move (when not at chance and not over)
    cdef int last_mover    # seat that made the last decision
    cdef int winner        # -1 while running
