# The C-level interface every compiled game implements and every compiled bot drives.
#
# A game subclasses CoreState and overrides the c_* methods. The Python-level State API
# (legal_actions(), apply_action(), clone(), ...) is written once, in _core.pyx, on top of them.
# Compiled bots cimport this file and never go through Python once per move.
from games._rng cimport Rng

cdef enum:
    CHANCE = -1
    TERMINAL = -4
    MAX_PLAYERS = 4
    MAX_CHANCE = 64     # most chance outcomes at one node


cdef class CoreState:
    cdef readonly object game      # the Game object this state belongs to
    cdef list _history              # every action applied through the Python API
    cdef public int n_players
    cdef public int n_actions     # action ids are 0 .. n_actions-1 (buffer size for c_legal_actions)

    # --- the C-level interface: each game overrides these -------------------------------------
    cdef int c_current_player(self) noexcept
    # Fills `out` with the legal actions in ascending order (chance outcomes at a chance node); returns the count.
    cdef int c_legal_actions(self, int* out) noexcept
    # Applies an action that is known to be legal. No check, no history.
    cdef void c_apply(self, int action) noexcept
    # Fills out[0..num_players-1]; valid only at a terminal state.
    cdef void c_returns(self, double* out) noexcept
    # Fills outcome actions and probabilities at a chance node; returns the count.
    cdef int c_chance_outcomes(self, int* actions, double* probs) noexcept
    # Draws one chance outcome by its probability (default: from c_chance_outcomes).
    cdef int c_sample_chance(self, Rng* rng) noexcept
    # A new, independent state of the same game (history is not copied).
    cdef CoreState c_clone(self)
    # Overwrites self with other (same game, same class): the cheap per-simulation reset of a search.
    cdef void c_copy_from(self, CoreState other) noexcept
    # Plays uniformly random moves (and samples chance) to the end; returns the number of actions applied.
    # May fail (except -1): the generic version allocates a buffer (a MemoryError propagates to the caller).
    cdef int c_playout(self, Rng* rng) except -1
    # A game-specific playout policy's move for the player to move, or -1 for "no preference"
    # (used by rollout=greedy; the default has no preference).
    cdef int c_heuristic_action(self, Rng* rng) noexcept
    # Samples the outcomes of the next n chance events *jointly*, consistent with what is known now
    # (for a deck: a random order of the cards left, then freshly shuffled decks), into out[0..n-1];
    # returns how many it filled. Used by determinized search. The default fills none, meaning
    # "chance is memoryless here: sample each event independently when it is reached".
    cdef int c_chance_sequence(self, Rng* rng, int* out, int n) noexcept

    # --- helpers available to every game ------------------------------------------------------
    cdef inline bint c_is_terminal(self) noexcept:
        return self.c_current_player() == TERMINAL
    cdef inline bint c_is_chance(self) noexcept:
        return self.c_current_player() == CHANCE
    cdef int c_random_action(self, Rng* rng) except -1  # (allocates: may raise MemoryError)
