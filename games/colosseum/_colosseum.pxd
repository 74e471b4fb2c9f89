from games._core cimport CoreState
from games._rng cimport Rng

cdef enum:
    MAX_SIZE = 20
    MAX_CELLS = 400       # MAX_SIZE * MAX_SIZE
    MAX_CORNERS = 441     # (MAX_SIZE + 1)^2 lattice corners
    PW = 9                # bitboard words: 7 for 400 cells, plus a zero word at each end
    UP = 0
    RIGHT = 1
    DOWN = 2
    LEFT = 3
    RUNNING = -1          # `winner` while the game goes on
    DRAW = 2              # `winner` after a tie

cdef class ColosseumState(CoreState):
    cdef unsigned char walls[MAX_CELLS]  # per cell (index r*M + c): bit d set = wall or border on side d
    cdef readonly int size               # M
    cdef int ncells                      # M*M (only walls[0..ncells-1] are meaningful)
    cdef readonly int max_step           # K = (M + 1) // 2
    cdef int pos[2]                      # each seat's cell index
    cdef int player                      # seat to move
    cdef int winner                      # RUNNING, 0, 1 or DRAW
    cdef int score[2]                    # component sizes, valid once the game is over
    cdef int region                      # size of the players' common region while the game runs

    cdef _setup(self, game, int size)
    cdef void _clear_board(self) noexcept
    cdef void _generate(self, unsigned long long seed) noexcept
    cdef void _set_winner(self) noexcept
    cdef void _finish(self, int mover, int mine, int theirs) noexcept
    cdef int _distance(self, int target)
    cdef void c_place_wall(self, int cell, int d) noexcept
    cdef void c_after_move(self, int mover, int cell, int d) noexcept
    cdef bint c_full_check(self, int* s0, int* s1) noexcept
    cdef int c_random_walk(self, Rng* rng) noexcept
