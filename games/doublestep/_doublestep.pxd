from games._core cimport CoreState

cdef class DoubleStepState(CoreState):
    cdef int pos[2]          # squares covered by each stone
    cdef int length[2]       # each player's goal square
    cdef bint overshoot_pass # True: a 2-step from distance 1 is a pass; False: it is illegal
    cdef int player          # seat to move
    cdef int winner          # -1 while running
