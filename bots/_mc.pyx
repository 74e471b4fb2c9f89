# Flat and nested Monte Carlo (MC(n), HMC(n); Althöfer 2008, Rafiq 2013), compiled and generic.
#
# One search object per bot owns everything a search needs, allocated once: one scratch state per
# nesting depth (reset with c_copy_from, never allocated per playout) and per-depth buffers for the
# legal actions and the scores. A decision at depth d copies its state into pool[d] for each playout;
# a nested playout at depth d asks decide(d+1, pool[d]) for every move, which uses pool[d+1]. Python is
# touched once per move (MCSearch.search), never per playout.
from libc.stdlib cimport calloc, free
from libc.stdint cimport uint64_t

from games._core cimport CoreState, CHANCE, TERMINAL, MAX_PLAYERS
from games._rng cimport Rng, rng_seed
from bots._common cimport now, argmax_tie, win_share, TIE_RANDOM, TIE_FIRST, TIE_LAST

TIE_BREAKS = {"random": TIE_RANDOM, "first": TIE_FIRST, "last": TIE_LAST}

# A nested playout longer than this many decisions is stopped and scored as a draw: a safety net for
# games where playouts driven by MC players could cycle (none of ours do).
cdef enum:
    MAX_NESTED_MOVES = 100000
# Under a deadline the clock is read every `check_every` playouts, adapted so that reads come roughly every
# 10-40 microseconds: a read costs about 20 ns, a Double Step playout 30 ns, a Colosseum playout 100+ us.
cdef double CHECK_MIN = 10e-6
cdef double CHECK_MAX = 40e-6


cdef class MCSearch:
    """Flat (level 1) or nested (level >= 2) Monte Carlo search over any compiled game.

    ``search(root, n, tie_break, seed, deadline)`` returns the chosen action; the scores of the top-level
    candidates stay readable through :meth:`stats` until the next search.
    """
    cdef readonly int level
    cdef readonly int n_actions
    cdef int n_players
    cdef list pool                   # one scratch state per depth 0..level-1
    cdef object state_type
    cdef int* acts                   # per depth: the legal actions being scored
    cdef double* wins                # per depth: the mover's wins per candidate (draw = share)
    cdef double* rates               # per depth: wins / visits, the argmax input
    cdef long* visits                # per depth: playouts per candidate
    cdef char* settled               # per depth: 1 if the candidate ends the game at once
    cdef int top_count               # candidates at the root in the last search
    cdef Rng rng
    cdef int tie_break
    cdef long n                      # playouts per candidate inside nested playouts
    cdef double deadline             # CLOCK_MONOTONIC seconds; 0: no deadline
    cdef bint aborted
    cdef long work                   # playouts since the last clock read
    cdef long check_every
    cdef double last_check
    cdef readonly long long playouts     # random playouts in the last search, all depths
    cdef readonly long long decisions    # nested decisions in the last search (level >= 2)
    cdef readonly long rounds            # completed round-robin rounds at the root in the last search

    def __init__(self, CoreState proto, int level):
        if level < 1:
            raise ValueError(f"level must be >= 1, not {level}")
        self.level = level
        self.n_actions = proto.n_actions
        self.n_players = proto.n_players
        self.state_type = type(proto)
        self.pool = [proto.c_clone() for _ in range(level)]
        cdef size_t size = <size_t>level * <size_t>proto.n_actions
        self.acts = <int*>calloc(size, sizeof(int))
        self.wins = <double*>calloc(size, sizeof(double))
        self.rates = <double*>calloc(size, sizeof(double))
        self.visits = <long*>calloc(size, sizeof(long))
        self.settled = <char*>calloc(size, sizeof(char))
        if not (self.acts and self.wins and self.rates and self.visits and self.settled):
            raise MemoryError()

    def __dealloc__(self):
        free(self.acts)
        free(self.wins)
        free(self.rates)
        free(self.visits)
        free(self.settled)

    def fits(self, CoreState state) -> bool:
        """True if this search's scratch states can hold ``state`` (same game class and action count)."""
        return type(state) is self.state_type and state.n_actions == self.n_actions \
            and state.n_players == self.n_players

    def search(self, CoreState root, long n, int tie_break, uint64_t seed, double deadline=0.0) -> int:
        """The action MC(n) (nested ``level`` deep) plays at ``root``; ``root`` is left unchanged.

        Args:
            n: playouts per candidate; at the root, 0 means "round-robin until ``deadline``".
            tie_break: TIE_RANDOM, TIE_FIRST or TIE_LAST.
            seed: seeds this search's random numbers (same seed, same n: same move).
            deadline: CLOCK_MONOTONIC time (``time.monotonic()``) to stop at; 0 for none.
        """
        if not self.fits(root):
            raise ValueError(f"this search was built for {self.state_type.__name__}, "
                             f"not {type(root).__name__}")
        if root.c_current_player() < 0:
            raise ValueError("search needs a state where a player is to move (not chance, not terminal)")
        if n == 0 and deadline <= 0:
            raise ValueError("n=0 (play until the deadline) needs a deadline")
        rng_seed(&self.rng, seed)
        self.tie_break = tie_break
        self.n = n if n > 0 else 1      # (n=0 is meant for flat searches; nested ones get n >= 1)
        self.deadline = deadline
        self.aborted = False
        self.work = 0
        self.check_every = 1
        self.last_check = now()
        self.playouts = 0
        self.decisions = 0
        self.rounds = 0
        return self.decide(0, root, n)

    def stats(self) -> dict:
        """The last search's root candidates: ``{"actions", "wins", "visits", "settled", ...}``."""
        cdef int i
        k = self.top_count
        return {
            "actions": [self.acts[i] for i in range(k)],
            "wins": [self.wins[i] for i in range(k)],
            "visits": [self.visits[i] for i in range(k)],
            "settled": [bool(self.settled[i]) for i in range(k)],
            "playouts": self.playouts,
            "decisions": self.decisions,
            "rounds": self.rounds,
            "stopped_by_deadline": bool(self.aborted),
        }

    # ----- the compiled core ---------------------------------------------------------------------
    cdef inline bint out_of_time(self) noexcept:
        cdef double t
        if self.deadline > 0:
            self.work += 1
            if self.work >= self.check_every:
                self.work = 0
                t = now()
                if t >= self.deadline:
                    self.aborted = True
                elif t - self.last_check > CHECK_MAX and self.check_every > 1:
                    self.check_every >>= 1
                elif t - self.last_check < CHECK_MIN and self.check_every < (1 << 20):
                    self.check_every <<= 1
                self.last_check = t
        return self.aborted

    cdef int decide(self, int depth, CoreState s, long rounds) except -2:  # (playouts may fail)
        """MC's choice at ``s`` (a player to move): ``rounds`` playouts per candidate (0: until the
        deadline), each random at the last depth and nested above it. Returns -1 when the deadline hit
        a nested decision (depth > 0); the root always returns its best action so far."""
        cdef int na = self.n_actions
        cdef int* acts = self.acts + depth * na
        cdef double* wins = self.wins + depth * na
        cdef double* rates = self.rates + depth * na
        cdef long* visits = self.visits + depth * na
        cdef char* settled = self.settled + depth * na
        cdef CoreState play = <CoreState>self.pool[depth]
        cdef int p = s.c_current_player()
        cdef int count = s.c_legal_actions(acts)
        cdef int i, open_count = 0
        cdef long r = 0
        cdef bint leaf = depth + 1 >= self.level
        cdef double ret[MAX_PLAYERS]
        cdef double share
        if depth == 0:
            self.top_count = count
        else:
            self.decisions += 1
        if count <= 1:         # a forced move (playouts cannot change it), or a broken game with none
            if count == 1:
                wins[0] = 0.0
                visits[0] = 0
                settled[0] = 0
                return acts[0]
            return -1
        # Candidates that end the game at once are scored exactly, without playouts (n wins for a win).
        for i in range(count):
            wins[i] = 0.0
            visits[i] = 0
            settled[i] = 0
            play.c_copy_from(s)
            play.c_apply(acts[i])
            if play.c_current_player() == TERMINAL:
                play.c_returns(ret)
                settled[i] = 1
                visits[i] = rounds if rounds > 0 else 1
                wins[i] = win_share(ret, self.n_players, p) * visits[i]
            else:
                open_count += 1
        # Round-robin: one playout per open candidate per round, so a deadline leaves them all evenly sampled.
        while open_count > 0 and (rounds == 0 or r < rounds):
            for i in range(count):
                if settled[i]:
                    continue
                play.c_copy_from(s)
                play.c_apply(acts[i])
                if leaf:
                    play.c_playout(&self.rng)
                    self.playouts += 1
                    play.c_returns(ret)
                    share = win_share(ret, self.n_players, p)
                elif self.nested_playout(depth, play):
                    play.c_returns(ret)
                    share = win_share(ret, self.n_players, p)
                elif self.aborted:
                    break           # an unfinished nested playout is not counted
                else:
                    share = 1.0 / self.n_players    # stopped by MAX_NESTED_MOVES: a draw
                wins[i] += share
                visits[i] += 1
                if self.out_of_time():
                    break
            if self.aborted:
                break
            r += 1
            if depth == 0:
                self.rounds = r
        if self.aborted and depth > 0:
            return -1
        for i in range(count):
            if settled[i] and wins[i] == 0.0:
                rates[i] = -2.0   # a proven loss: below every open candidate, even one a deadline left unsampled
            else:
                rates[i] = wins[i] / visits[i] if visits[i] > 0 else -1.0
        return acts[argmax_tie(rates, count, self.tie_break, &self.rng)]

    cdef int nested_playout(self, int depth, CoreState play) except -1:
        """Plays ``play`` (= pool[depth]) to the end with MC decisions one level down and chance sampled.
        Returns True when it reached a terminal state."""
        cdef int p, a
        cdef long moves = 0
        while True:
            p = play.c_current_player()
            if p == TERMINAL:
                return True
            if p == CHANCE:
                play.c_apply(play.c_sample_chance(&self.rng))
                continue
            if moves >= MAX_NESTED_MOVES:
                return False
            a = self.decide(depth + 1, play, self.n)
            if a < 0:
                return False
            play.c_apply(a)
            moves += 1


def _py_win_share(returns, int p) -> float:
    """Test hook for bots._common.win_share: seat p's share of the win in a terminal returns list."""
    cdef double buf[MAX_PLAYERS]
    cdef int i, k = len(returns)
    if not 1 <= k <= MAX_PLAYERS or not 0 <= p < k:
        raise ValueError(f"need 1..{MAX_PLAYERS} returns and a seat among them")
    for i in range(k):
        buf[i] = returns[i]
    return win_share(buf, k, p)
