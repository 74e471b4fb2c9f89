# Single-pile Nim (Telepchuk 2020): take 1..k counters; whoever takes the last counter wins.
# Coin variant: after every move the mover flips a fair coin; heads removes one more counter,
# and if that empties the pile the flipper wins. The flip is a chance node: action 0 tails, 1 heads.
from games._core cimport CoreState, CHANCE, TERMINAL
from games._rng cimport Rng, rng_below

from games.errors import InvalidActionError

TAILS, HEADS = 0, 1


cdef class NimState(CoreState):

    def __init__(self, game, int pile, int k, bint coin):
        self.game = game
        self.n_players = 2
        self.n_actions = k + 1
        self.pile = pile
        self.k = k
        self.coin = coin
        self.at_chance = False
        self.player = 0
        self.last_mover = -1
        self.winner = -1

    cdef int c_current_player(self) noexcept:
        if self.winner >= 0:
            return TERMINAL
        if self.at_chance:
            return CHANCE
        return self.player

    cdef int c_legal_actions(self, int* out) noexcept:
        cdef int i, n
        if self.winner >= 0:
            return 0
        if self.at_chance:
            out[0] = TAILS
            out[1] = HEADS
            return 2
        n = self.k if self.k < self.pile else self.pile
        for i in range(n):
            out[i] = i + 1
        return n

    cdef int c_chance_outcomes(self, int* actions, double* probs) noexcept:
        actions[0] = TAILS
        actions[1] = HEADS
        probs[0] = 0.5
        probs[1] = 0.5
        return 2

    cdef int c_sample_chance(self, Rng* rng) noexcept:
        return rng_below(rng, 2)

    cdef void c_apply(self, int action) noexcept:
        if self.at_chance:
            self.at_chance = False
            if action == HEADS:
                self.pile -= 1
                if self.pile == 0:
                    self.winner = self.last_mover
            return
        self.pile -= action
        self.last_mover = self.player
        self.player = 1 - self.player
        if self.pile == 0:
            self.winner = self.last_mover
        elif self.coin:
            self.at_chance = True

    cdef void c_returns(self, double* out) noexcept:
        out[self.winner] = 1.0
        out[1 - self.winner] = -1.0

    cdef CoreState c_clone(self):
        cdef NimState s = NimState.__new__(NimState)
        s.c_copy_from(self)
        s.game = self.game
        s.n_players = 2
        s.n_actions = self.n_actions
        return s

    cdef void c_copy_from(self, CoreState other) noexcept:
        cdef NimState o = <NimState>other
        self.pile = o.pile
        self.k = o.k
        self.coin = o.coin
        self.at_chance = o.at_chance
        self.player = o.player
        self.last_mover = o.last_mover
        self.winner = o.winner

    cdef int c_playout(self, Rng* rng) except -1:  # (the interface may fail; this one cannot)
        # Plain Nim runs on locals (no coin): the tight loop the benchmark measures.
        cdef int moves = 0, n, pile = self.pile, k = self.k, player = self.player
        if self.winner >= 0:
            return 0
        if not self.coin:
            while True:
                n = k if k < pile else pile
                pile -= 1 + rng_below(rng, n)
                moves += 1
                if pile == 0:
                    break
                player ^= 1
            self.pile = 0
            self.last_mover = player
            self.player = 1 - player
            self.winner = player
            return moves
        while self.winner < 0:
            if self.at_chance:
                self.c_apply(rng_below(rng, 2))
            else:
                n = self.k if self.k < self.pile else self.pile
                self.c_apply(1 + rng_below(rng, n))
            moves += 1
        return moves

    cdef int c_heuristic_action(self, Rng* rng) noexcept:
        # The perfect move of plain Nim: leave a multiple of k+1 when possible.
        cdef int r = self.pile % (self.k + 1)
        return r if r > 0 else -1

    # ----- Python hooks ------------------------------------------------------------------------
    def _action_to_string(self, int action) -> str:
        if self.at_chance:
            if action == TAILS:
                return "tails"
            if action == HEADS:
                return "heads"
            raise InvalidActionError(f"{action} is not a coin outcome (0 tails, 1 heads)")
        if action == 0:
            raise InvalidActionError("0 is not a move: take 1..k counters")
        return f"take {action}"

    def _string_to_action(self, str text) -> int:
        lowered = text.lower()
        if lowered == "tails":
            return TAILS
        if lowered == "heads":
            return HEADS
        parts = lowered.split()
        if len(parts) == 2 and parts[0] == "take" and parts[1].isdigit() and 1 <= int(parts[1]) <= self.k:
            return int(parts[1])
        raise InvalidActionError(f"{text!r} is not a Nim action: write 'take N' (1..{self.k}), 'heads' or 'tails'")

    def _observation(self) -> dict:
        return {"pile": self.pile, "k": self.k, "coin_pending": bool(self.at_chance)}

    def _board_string(self) -> str:
        bar = "|" * self.pile if self.pile <= 60 else "|" * 60 + "..."
        if self.winner >= 0:
            status = f"player {self.winner} won"
        elif self.at_chance:
            status = f"coin flip for player {self.last_mover}"
        else:
            status = f"player {self.player} to move (take 1-{min(self.k, self.pile)})"
        return f"pile {self.pile:>3} {bar}\n{status}"
