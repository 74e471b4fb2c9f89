# Whole games between flat Monte Carlo players (or random ones), played entirely in C.
#
# The experiments (arena/experiments) replay tables of hundreds of thousands of MC(n)-vs-MC(m) games;
# through the Python referee a game costs microseconds of interpreter time per move, which dwarfs a
# Double Step decision (2n playouts of ~30 ns). This loop plays many games over the C-level game interface
# with one RNG per call, so a batch of games is reproducible from its seed alone.
from libc.stdint cimport uint64_t

from games._core cimport CoreState, CHANCE, TERMINAL, MAX_PLAYERS
from games._rng cimport Rng, rng_seed, rng_below
from bots._common cimport argmax_tie, win_share

import array

cdef enum:
    MAX_SEATS = 4


cdef int mc_decide(CoreState s, CoreState play, int* acts, double* rates, long n, int tie_break,
                   Rng* rng) except -2:  # (playouts may fail)
    """MC(n) at ``s``: n random playouts per candidate (a candidate that ends the game is scored exactly),
    the best win rate wins, ties by ``tie_break``. n <= 0: a uniformly random legal action."""
    cdef int p = s.c_current_player()
    cdef int count = s.c_legal_actions(acts)
    cdef int i
    cdef long r
    cdef double wins
    cdef double ret[MAX_PLAYERS]
    if count <= 1 or n <= 0:
        return acts[rng_below(rng, count)] if count > 1 else acts[0]
    for i in range(count):
        play.c_copy_from(s)
        play.c_apply(acts[i])
        if play.c_current_player() == TERMINAL:
            play.c_returns(ret)
            rates[i] = win_share(ret, s.n_players, p)
            continue
        wins = 0.0
        for r in range(n):
            play.c_copy_from(s)
            play.c_apply(acts[i])
            play.c_playout(rng)
            play.c_returns(ret)
            wins += win_share(ret, s.n_players, p)
        rates[i] = wins / n
    return acts[argmax_tie(rates, count, tie_break, rng)]


def play_mc_games(CoreState root, list n_per_seat, list tie_per_seat, long games, uint64_t seed,
                  long max_moves=100000) -> list:
    """Plays ``games`` games from ``root`` where seat s is MC(n_per_seat[s]) with tie rule
    ``tie_per_seat[s]`` (TIE_* codes of bots/_common.pxd; n = 0: a uniformly random player).

    Chance is sampled by its probabilities. A game longer than ``max_moves`` decisions counts as a draw.
    Returns the win counts per seat followed by the draws (shared wins count as draws):
    ``[wins_0, ..., wins_{k-1}, draws]``.
    """
    cdef int k = root.n_players
    if len(n_per_seat) != k or len(tie_per_seat) != k:
        raise ValueError(f"need one n and one tie rule per seat ({k} seats)")
    if k > MAX_SEATS:
        raise ValueError(f"at most {MAX_SEATS} seats")
    cdef long ns[MAX_SEATS]
    cdef int ties[MAX_SEATS]
    cdef long wins[MAX_SEATS]
    cdef int i, p, best, n_best
    for i in range(k):
        ns[i] = n_per_seat[i]
        ties[i] = tie_per_seat[i]
        wins[i] = 0
    cdef long draws = 0, g, moves
    cdef CoreState s = root.c_clone()
    cdef CoreState play = root.c_clone()
    cdef int na = root.n_actions
    cdef int[:] acts_buf = array.array("i", [0] * na)
    cdef double[:] rates_buf = array.array("d", [0.0] * na)
    cdef double ret[MAX_PLAYERS]
    cdef Rng rng
    rng_seed(&rng, seed)
    for g in range(games):
        s.c_copy_from(root)
        moves = 0
        while True:
            p = s.c_current_player()
            if p == TERMINAL:
                s.c_returns(ret)
                best, n_best = 0, 1
                for i in range(1, k):
                    if ret[i] > ret[best]:
                        best, n_best = i, 1
                    elif ret[i] == ret[best]:
                        n_best += 1
                if n_best == 1:
                    wins[best] += 1
                else:
                    draws += 1
                break
            if p == CHANCE:
                s.c_apply(s.c_sample_chance(&rng))
                continue
            if moves >= max_moves:
                draws += 1
                break
            s.c_apply(mc_decide(s, play, &acts_buf[0], &rates_buf[0], ns[p], ties[p], &rng))
            moves += 1
    return [wins[i] for i in range(k)] + [draws]
