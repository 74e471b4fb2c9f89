# Hex on an N x N rhombus (OpenSpiel's conventions; rules: shared/specs/games.md).
#
# The board is stored padded: row r, column c of the game lives at index (r+1)*W + (c+1) with
# W = N+2, so the six neighbours of a cell are fixed offsets and no edge test is needed. The
# border rows hold player 0's colour (top, bottom), the border columns player 1's (left, right);
# each border cell's union-find parent is one of four virtual nodes after the padded cells, so
# "player 0 has won" is find(TOP) == find(BOTTOM).
from games._core cimport CoreState
from games._rng cimport Rng

cdef enum:
    HEX_MAX_SIZE = 25
    HEX_MAX_PADDED = (HEX_MAX_SIZE + 2) * (HEX_MAX_SIZE + 2)
    HEX_MAX_NODES = HEX_MAX_PADDED + 4
    # cell values
    HEX_P0 = 0          # player 0, 'x' (also the top and bottom border)
    HEX_P1 = 1          # player 1, 'o' (also the left and right border)
    HEX_EMPTY = 2
    HEX_OFF = 3         # the four padding corners: nobody's
    HEX_MARK = 4        # transient mark of the fill playout's flood fill


cdef class HexState(CoreState):
    cdef int size            # N
    cdef int width           # N + 2, the padded row length
    cdef int n_padded        # (N + 2)**2; the virtual nodes TOP, BOTTOM, LEFT, RIGHT follow
    cdef bint pie            # player 1's first decision may be the swap (action N*N)
    cdef int player          # seat to move (meaningless once winner >= 0)
    cdef int winner          # -1 while the game runs
    cdef int n_empty         # empty cells left
    cdef signed char board[HEX_MAX_PADDED]
    cdef int parent[HEX_MAX_NODES]   # union-find over padded cells + 4 virtual nodes

    cdef void reset(self) noexcept
    cdef bint swap_pending(self) noexcept
    cdef void place(self, int cell, int p) noexcept
    cdef int collect_empty(self, int* out) noexcept
    cdef int fill_winner(self, int* queue) noexcept
    cdef int random_first_reply(self, Rng* rng) noexcept
    cdef int c_playout_moves(self, Rng* rng) noexcept
    cdef int c_playout_fill(self, Rng* rng) noexcept
