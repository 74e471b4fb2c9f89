# Double Step (Althöfer 2008; Rafiq 2013): each player races a stone along its own lane by 1 or 2
# squares a turn; the first to stand exactly on its goal wins. Actions are the step sizes 1 and 2.
from games._core cimport CoreState, TERMINAL
from libc.stdint cimport uint64_t
from games._rng cimport Rng, rng_below, rng_next

from games.errors import InvalidActionError


cdef class DoubleStepState(CoreState):

    def __init__(self, game, int length0, int length1, bint overshoot_pass):
        self.game = game
        self.n_players = 2
        self.n_actions = 3
        self.pos[0] = 0
        self.pos[1] = 0
        self.length[0] = length0
        self.length[1] = length1
        self.overshoot_pass = overshoot_pass
        self.player = 0
        self.winner = -1

    cdef int c_current_player(self) noexcept:
        return TERMINAL if self.winner >= 0 else self.player

    cdef int c_legal_actions(self, int* out) noexcept:
        if self.winner >= 0:
            return 0
        out[0] = 1
        if self.overshoot_pass or self.length[self.player] - self.pos[self.player] >= 2:
            out[1] = 2
            return 2
        return 1

    cdef void c_apply(self, int action) noexcept:
        cdef int p = self.player
        if self.pos[p] + action <= self.length[p]:   # otherwise: the overshoot pass
            self.pos[p] += action
            if self.pos[p] == self.length[p]:
                self.winner = p
        self.player = 1 - p

    cdef void c_returns(self, double* out) noexcept:
        out[self.winner] = 1.0
        out[1 - self.winner] = -1.0

    cdef CoreState c_clone(self):
        cdef DoubleStepState s = DoubleStepState.__new__(DoubleStepState)
        s.c_copy_from(self)
        s.game = self.game
        s.n_players = 2
        s.n_actions = 3
        return s

    cdef void c_copy_from(self, CoreState other) noexcept:
        cdef DoubleStepState o = <DoubleStepState>other
        self.pos[0] = o.pos[0]
        self.pos[1] = o.pos[1]
        self.length[0] = o.length[0]
        self.length[1] = o.length[1]
        self.overshoot_pass = o.overshoot_pass
        self.player = o.player
        self.winner = o.winner

    cdef int c_playout(self, Rng* rng) except -1:  # (the interface may fail; this one cannot)
        # Runs on locals; one random bit per move decides the step (64 moves per RNG draw).
        cdef int moves = 0, p = self.player, step, left, nbits = 0
        cdef uint64_t bits = 0
        cdef int pos0 = self.pos[0], pos1 = self.pos[1], len0 = self.length[0], len1 = self.length[1]
        cdef bint pass_rule = self.overshoot_pass
        if self.winner >= 0:
            return 0
        while True:
            left = (len0 - pos0) if p == 0 else (len1 - pos1)
            if pass_rule or left >= 2:
                if nbits == 0:
                    bits = rng_next(rng)
                    nbits = 64
                step = 1 + <int>(bits & 1)
                bits >>= 1
                nbits -= 1
            else:
                step = 1
            moves += 1
            if step <= left:
                if p == 0:
                    pos0 += step
                else:
                    pos1 += step
                if step == left:
                    break
            p ^= 1
        self.pos[0] = pos0
        self.pos[1] = pos1
        self.winner = p
        self.player = 1 - p
        return moves

    # ----- Python hooks ------------------------------------------------------------------------
    def _action_to_string(self, int action) -> str:
        if action == 1:
            return "step 1"
        if action == 2:
            return "step 2"
        raise InvalidActionError(f"{action} is not a Double Step action (1 or 2)")

    def _string_to_action(self, str text) -> int:
        parts = text.lower().split()
        if parts and parts[-1] in ("1", "2") and (len(parts) == 1 or (len(parts) == 2 and parts[0] == "step")):
            return int(parts[-1])
        raise InvalidActionError(f"{text!r} is not a Double Step action: write 'step 1' or 'step 2'")

    def _observation(self) -> dict:
        return {"positions": [self.pos[0], self.pos[1]], "lengths": [self.length[0], self.length[1]]}

    def _board_string(self) -> str:
        lines = []
        for p in range(2):
            cells = ["x" if i == self.pos[p] else "." for i in range(self.length[p] + 1)]
            cells[self.length[p]] = "X" if self.pos[p] == self.length[p] else "|"
            lines.append(f"lane {p}: " + " ".join(cells) + f"   {self.length[p] - self.pos[p]} to go")
        if self.winner >= 0:
            lines.append(f"player {self.winner} won")
        else:
            lines.append(f"player {self.player} to move")
        return "\n".join(lines)
