# The one compiled search tree behind `uct`, `mcts_reuse` and `determinized` (bots/_uct.pyx).
#
# Nodes live in one flat, growable C array (no Python objects). The children of a node form one
# contiguous block, allocated when the node is expanded; with expand=one only the first `n_open`
# children of the block are in the tree yet. There are no parent pointers: selection records the
# path it walked and backpropagation walks it back, so compaction after a move is a plain copy.
from games._core cimport CoreState
from games._rng cimport Rng


cdef struct Node:
    double wins             # sum over playouts through this node of the win score of `mover`
    int visits              # playouts through this node
    int first_child         # index of the child block in the pool, -1 before expansion
    int action              # the action or chance outcome that led here
    float inv_sqrt          # 1/sqrt(visits), kept by backpropagation so selection needs no sqrt
    unsigned short n_children   # size of the child block (legal actions, or chance outcomes)
    unsigned short n_open       # children in the tree (== n_children unless expand=one)
    signed char mover       # the seat that made that action (-1: a chance outcome, or the root)


cdef class Search:
    # --- the pool ---
    cdef Node* nodes
    cdef int size
    cdef int capacity
    cdef public int max_nodes
    cdef int* path
    cdef int path_cap
    cdef int* actions          # expansion buffer (max(n_actions, MAX_CHANCE) ints)
    cdef int* rbuf             # rollout buffer
    cdef int buf_cap
    cdef Rng rng
    # --- parameters ---
    cdef public double c
    cdef public bint annealed
    cdef public bint expand_all
    cdef public int sims_per_leaf
    cdef public bint greedy
    cdef public bint final_visits
    # --- determinized mode: every chance event is fixed by (seq, det_seed) ---
    cdef bint fixed_chance
    cdef int* seq
    cdef int seq_len
    cdef int seq_cap
    cdef unsigned long long det_seed
    # --- per-search scratch states and statistics ---
    cdef CoreState leaf
    cdef CoreState child
    cdef CoreState sim
    cdef int n_players
    cdef double deadline
    cdef bint has_deadline
    cdef readonly long long playouts
    cdef readonly long long iterations
    cdef readonly bint pool_full
    cdef readonly dict last_scores     # determinized: summed win rate per root action of the last move

    cdef int _alloc(self, int n, bint force) except -2
    cdef int _expand(self, int idx, CoreState st) except -1
    cdef int _select(self, int idx, int depth) noexcept
    cdef int _find_child(self, int idx, int action) noexcept
    cdef int _push(self, int* plen, int idx) except -1
    cdef void _determinize(self, CoreState root, int i) noexcept
    cdef int _fixed_outcome(self, CoreState s, int j) noexcept
    cdef int _resolve_chance(self, CoreState s, int j) noexcept
    cdef void _rollout(self, CoreState s, int j) except *
    cdef void _simulate(self, CoreState s, int j, int n, bint consume, double* acc) except *
    cdef void _backprop(self, int plen, int n, double* acc) noexcept
    cdef void _iterate(self, CoreState root) except *
    cdef void _prepare(self, CoreState root)
    cdef long long _run(self, CoreState root, long long iterations) except -1
    cdef int _best_child(self) noexcept
