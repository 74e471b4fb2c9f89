# Sorry! (classic Parker Brothers rules, shared/specs/sorry.md), compiled.
#
# Every card draw is a chance node (outcome = card value, 13 = Sorry!, probability proportional to the
# cards of that value left in the draw pile). A decision node holds the drawn card; the player picks one
# option of the spec's move model (§10), numbered as in _sorry.pxd / docs/sorry.md. A forfeit is the
# explicit action PASS, so every decision node has at least one legal action.
#
# All rules live in the nogil functions on Core/Board below; the class is a thin shell over them.
from games._core cimport CoreState, CHANCE, TERMINAL
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from libc.stdint cimport uint64_t
from games._rng cimport Rng, rng_below, rng_seed

from games.errors import InvalidActionError

COLOUR_NAMES = ("red", "blue", "yellow", "green")
CARD_VALUES = (1, 2, 3, 4, 5, 7, 8, 10, 11, 12, 13)

cdef int DECK[14]
cdef signed char SLIDE_END[60]   # triangle square -> its slide's end square, else -1
cdef signed char SLIDE_COL[60]   # triangle square -> the slide's colour, else -1


cdef void _init_tables():
    cdef int i, c
    for i in range(14):
        DECK[i] = 4
    DECK[0] = 0
    DECK[6] = 0
    DECK[9] = 0
    DECK[1] = 5
    for i in range(60):
        SLIDE_END[i] = -1
        SLIDE_COL[i] = -1
    for c in range(4):
        SLIDE_END[15 * c + 1] = 15 * c + 4
        SLIDE_COL[15 * c + 1] = c
        SLIDE_END[15 * c + 9] = 15 * c + 13
        SLIDE_COL[15 * c + 9] = c

_init_tables()


# ----- movement primitives (§3) ---------------------------------------------------------------------
cdef inline int fwd_dest(int c, int p, int n) noexcept nogil:
    """Where a movable pawn of colour c on p lands after n forward steps; -2 if it would pass HOME."""
    cdef int d, q
    if p >= SAFETY0:
        q = p + n
        return q if q <= HOME else -2
    d = 15 * c + 2 - p          # steps to the turn square T_c (forced into the safety zone there)
    if d < 0:
        d += 60
    if n <= d:
        q = p + n
        return q - 60 if q >= 60 else q
    q = SAFETY0 + n - d - 1
    return q if q <= HOME else -2


cdef inline int back_dest(int c, int p, int n) noexcept nogil:
    """Where a movable pawn lands after n backward steps (never into a safety zone; S0 -> T_c)."""
    cdef int q
    if p >= SAFETY0:
        if n <= p - SAFETY0:
            return p - n
        q = 15 * c + 2 - (n - (p - SAFETY0) - 1)
    else:
        q = p - n
    return q + 60 if q < 0 else q


cdef inline bint own_blocked(Board* b, int c, int q) noexcept nogil:
    """§4 step 1: q (a track or safety square) holds a pawn of colour c. HOME never blocks."""
    cdef int s
    if q == HOME:
        return False
    if q < TRACK:
        s = b.sq[q]
        return s >= 0 and (s >> 2) == c
    return b.pos[c][0] == q or b.pos[c][1] == q or b.pos[c][2] == q or b.pos[c][3] == q


cdef inline void lift(Board* b, int c, int k) noexcept nogil:
    cdef int p = b.pos[c][k]
    if 0 <= p < TRACK:
        b.sq[p] = -1


cdef inline void land(Board* b, int c, int k, int q) noexcept nogil:
    """§4 steps 2-3 for pawn (c, k), already lifted, arriving on q (not own-blocked): bump, then slide."""
    cdef int occ, e, x
    if q >= TRACK:
        b.pos[c][k] = q
        return
    occ = b.sq[q]
    if occ >= 0:
        b.pos[occ >> 2][occ & 3] = START
    e = SLIDE_END[q]
    if e >= 0 and SLIDE_COL[q] != c:
        b.sq[q] = -1
        for x in range(q + 1, e + 1):
            occ = b.sq[x]
            if occ >= 0:                        # any colour, the mover's own included
                b.pos[occ >> 2][occ & 3] = START
                b.sq[x] = -1
        q = e
    b.sq[q] = c * 4 + k
    b.pos[c][k] = q


cdef inline bint move_to(Board* b, int c, int k, int q) noexcept nogil:
    """Moves pawn (c, k) to q with full landing resolution; False (board unchanged) if illegal."""
    if q == -2 or own_blocked(b, c, q):
        return False
    lift(b, c, k)
    land(b, c, k, q)
    return True


cdef inline int lowest_in_start(Board* b, int c) noexcept nogil:
    cdef int k
    for k in range(4):
        if b.pos[c][k] == START:
            return k
    return -1


cdef inline bint movable(int p) noexcept nogil:
    return 0 <= p < HOME


cdef inline int fwd_amount(Core* s) noexcept nogil:
    cdef int card = s.card
    if card == 4:
        return 0
    if card == SORRY_CARD:
        return 4 if s.sorry_fwd4 else 0
    return card


cdef inline int back_amount(int card) noexcept nogil:
    if card == 4:
        return 4
    if card == 10:
        return 1
    return 0


# ----- splitting a 7 (§5) ---------------------------------------------------------------------------
cdef inline void split_decode(int action, int* pa, int* a, int* pb) noexcept nogil:
    cdef int idx = action - A_SPLIT
    cdef int pair = idx // 6, j
    a[0] = idx % 6 + 1
    pa[0] = pair // 3
    j = pair % 3
    pb[0] = j if j < pa[0] else j + 1


cdef inline bint split_play(Board* b, int c, int pa, int a, int pb) noexcept nogil:
    """Plays pawn pa +a then pawn pb +(7-a) on b; False if the ordering is illegal (b is then scrap)."""
    if not move_to(b, c, pa, fwd_dest(c, b.pos[c][pa], a)):
        return False
    if b.pos[c][pb] == START:                  # part 1 sent part 2's pawn to START
        return False
    return move_to(b, c, pb, fwd_dest(c, b.pos[c][pb], 7 - a))


cdef int gen_splits(Core* s, int c, int* out) noexcept nogil:
    """Appends the legal 7-splits in id order. A split is identified by its outcome: one whose final
    position equals that of a lower-id split (the reverse ordering, or rarely another split, when two
    slides end on the same squares) is left out."""
    cdef Board* b = &s.b
    cdef Board tmp
    cdef uint64_t kept[72][2]         # final pos[][] of each split listed so far, as two words
    cdef uint64_t w0, w1
    cdef int reach[4][7]              # 1 if pawn k alone can go forward a steps without passing HOME
    cdef int n = 0, nkept = 0, k, a, pa, pb, j, i, nmov = 0
    cdef bint dup
    for k in range(4):
        for a in range(1, 7):
            reach[k][a] = movable(b.pos[c][k]) and fwd_dest(c, b.pos[c][k], a) != -2
        nmov += movable(b.pos[c][k])
    if nmov < 2:
        return 0
    for pa in range(4):
        for j in range(3):
            pb = j if j < pa else j + 1
            for a in range(1, 7):
                if not (reach[pa][a] and reach[pb][7 - a]):
                    continue
                tmp = b[0]
                if not split_play(&tmp, c, pa, a, pb):
                    continue
                memcpy(&w0, &tmp.pos[0][0], 8)
                memcpy(&w1, &tmp.pos[2][0], 8)
                dup = False
                for i in range(nkept):
                    if kept[i][0] == w0 and kept[i][1] == w1:
                        dup = True
                        break
                if dup:
                    continue
                kept[nkept][0] = w0
                kept[nkept][1] = w1
                nkept += 1
                out[n] = A_SPLIT + (pa * 3 + j) * 6 + a - 1
                n += 1
    return n


# ----- the option list of the drawn card (§5) -------------------------------------------------------
cdef int gen_moves(Core* s, int* out) noexcept nogil:
    cdef Board* b = &s.b
    cdef int c = s.colour[s.turn], card = s.card
    cdef int n = 0, k, c2, q, p, x
    cdef int fwd = fwd_amount(s), back = back_amount(card)
    cdef int fmask = 0
    cdef bint has_start = lowest_in_start(b, c) >= 0
    if fwd:
        for k in range(4):
            p = b.pos[c][k]
            if movable(p):
                q = fwd_dest(c, p, fwd)
                if q != -2 and not own_blocked(b, c, q):
                    fmask |= 1 << k
    if card == 11 and fmask == 0:
        out[n] = A_PASS                          # the 11 may be declined only when no forward 11 exists
        n += 1
    if (card == 1 or card == 2) and has_start and not own_blocked(b, c, 15 * c + 4):
        out[n] = A_START_OUT
        n += 1
    for k in range(4):
        if fmask & (1 << k):
            out[n] = A_FWD + k
            n += 1
    if back:
        for k in range(4):
            p = b.pos[c][k]
            if movable(p) and not own_blocked(b, c, back_dest(c, p, back)):
                out[n] = A_BACK + k
                n += 1
    if card == 7:
        n += gen_splits(s, c, out + n)
    elif card == 11:
        for k in range(4):
            x = b.pos[c][k]
            if 0 <= x < TRACK:
                for c2 in range(4):
                    if c2 != c and s.in_play[c2]:
                        for q in range(4):
                            if 0 <= b.pos[c2][q] < TRACK:
                                out[n] = A_SWAP + k * 16 + c2 * 4 + q
                                n += 1
    elif card == SORRY_CARD and has_start:
        for c2 in range(4):
            if c2 != c and s.in_play[c2]:
                for q in range(4):
                    if 0 <= b.pos[c2][q] < TRACK:
                        out[n] = A_SORRY + c2 * 4 + q
                        n += 1
    if n == 0:
        out[0] = A_PASS                          # the card is forfeited
        n = 1
    return n


cdef inline int pile_count(Core* s, int v) noexcept nogil:
    # An empty pile is reshuffled (all 45 cards: nobody holds cards) when the next draw is needed.
    return s.pile[v] if s.pile_total > 0 else DECK[v]


cdef int gen_draws(Core* s, int* out) noexcept nogil:
    cdef int n = 0, v
    for v in range(1, 14):
        if pile_count(s, v) > 0:
            out[n] = v
            n += 1
    return n


cdef int sample_draw(Core* s, Rng* rng) noexcept nogil:
    cdef int total = s.pile_total if s.pile_total > 0 else DECK_SIZE
    cdef int r = rng_below(rng, total), v
    for v in range(1, 14):
        r -= pile_count(s, v)
        if r < 0:
            return v
    return SORRY_CARD


# ----- applying an action ---------------------------------------------------------------------------
cdef void apply_swap(Core* s, int c, int k, int c2, int q) noexcept nogil:
    cdef Board* b = &s.b
    cdef int x = b.pos[c][k], y = b.pos[c2][q]
    # The opponent pawn takes the mover's square; the mover lands on the opponent's (nobody is bumped
    # by the swap itself), then the mover's slide (§4 step 3) may bump anyone, the victim included.
    b.sq[x] = c2 * 4 + q
    b.pos[c2][q] = x
    b.sq[y] = -1
    land(b, c, k, y)
    if s.victim_slides and b.pos[c2][q] == x and SLIDE_END[x] >= 0 and SLIDE_COL[x] != c2:
        b.sq[x] = -1
        land(b, c2, q, x)


cdef void apply_action(Core* s, int action) noexcept nogil:
    cdef Board* b = &s.b
    cdef int c, k, pa, pb, a, idx, x
    if s.card == 0:                               # a draw
        if s.pile_total == 0:
            for k in range(14):
                s.pile[k] = DECK[k]
            s.pile_total = DECK_SIZE
        s.pile[action] -= 1
        s.pile_total -= 1
        s.card = action
        return
    c = s.colour[s.turn]
    if action == A_PASS:
        pass
    elif action == A_START_OUT:
        land(b, c, lowest_in_start(b, c), 15 * c + 4)
    elif action < A_BACK:
        k = action - A_FWD
        move_to(b, c, k, fwd_dest(c, b.pos[c][k], fwd_amount(s)))
    elif action < A_SPLIT:
        k = action - A_BACK
        move_to(b, c, k, back_dest(c, b.pos[c][k], back_amount(s.card)))
    elif action < A_SWAP:
        split_decode(action, &pa, &a, &pb)
        split_play(b, c, pa, a, pb)
    elif action < A_SORRY:
        idx = action - A_SWAP
        apply_swap(s, c, idx >> 4, (idx >> 2) & 3, idx & 3)
    else:
        idx = action - A_SORRY
        x = b.pos[idx >> 2][idx & 3]
        b.pos[idx >> 2][idx & 3] = START
        b.sq[x] = -1
        land(b, c, lowest_in_start(b, c), x)
    if b.pos[c][0] == HOME and b.pos[c][1] == HOME and b.pos[c][2] == HOME and b.pos[c][3] == HOME:
        s.winner = s.turn                          # the game stops at once: no pending redraw
        s.card = 0
        return
    if s.card == 2 and s.two_again:
        s.extra = 1
    else:
        s.extra = 0
        s.turn += 1
        if s.turn == s.n_players:
            s.turn = 0
    s.card = 0


cdef class SorryState(CoreState):
    """A Sorry! position. Build it with ``SorryGame.new_initial_state()`` (or ``SorryGame.position``)."""

    def __init__(self, game, int players, bint two_again, bint sorry_fwd4, bint victim_slides,
                 int pawns_per_player, bint one_out):
        cdef int c, k
        self.game = game
        self.n_players = players
        self.n_actions = N_ACTIONS
        seats = {2: (0, 2), 3: (0, 1, 2), 4: (0, 1, 2, 3)}[players]
        for c in range(4):
            self.s.in_play[c] = 0
            self.s.colour[c] = 0
        for k, c in enumerate(seats):
            self.s.colour[k] = c
            self.s.in_play[c] = 1
        self.s.n_players = players
        self.s.two_again = two_again
        self.s.sorry_fwd4 = sorry_fwd4
        self.s.victim_slides = victim_slides
        for c in range(60):
            self.s.b.sq[c] = -1
        for c in range(4):
            for k in range(4):
                # Pawns beyond pawnsPerPlayer, and colours nobody plays, sit in HOME: they never move.
                self.s.b.pos[c][k] = START if (self.s.in_play[c] and k < pawns_per_player) else HOME
            if self.s.in_play[c] and one_out:
                self.s.b.pos[c][0] = 15 * c + 4
                self.s.b.sq[15 * c + 4] = c * 4
        for k in range(14):
            self.s.pile[k] = DECK[k]
        self.s.pile_total = DECK_SIZE
        self.s.card = 0
        self.s.turn = 0
        self.s.winner = -1
        self.s.extra = 0

    # ----- the C-level interface ----------------------------------------------------------------
    cdef int c_current_player(self) noexcept:
        if self.s.winner >= 0:
            return TERMINAL
        if self.s.card == 0:
            return CHANCE
        return self.s.turn

    cdef int c_legal_actions(self, int* out) noexcept:
        if self.s.winner >= 0:
            return 0
        if self.s.card == 0:
            return gen_draws(&self.s, out)
        return gen_moves(&self.s, out)

    cdef void c_apply(self, int action) noexcept:
        apply_action(&self.s, action)

    cdef void c_returns(self, double* out) noexcept:
        cdef int i
        for i in range(self.s.n_players):
            out[i] = -1.0 / (self.s.n_players - 1)
        if self.s.winner >= 0:
            out[self.s.winner] = 1.0

    cdef int c_chance_outcomes(self, int* actions, double* probs) noexcept:
        cdef int n = gen_draws(&self.s, actions), i
        cdef double total = self.s.pile_total if self.s.pile_total > 0 else DECK_SIZE
        for i in range(n):
            probs[i] = pile_count(&self.s, actions[i]) / total
        return n

    cdef int c_sample_chance(self, Rng* rng) noexcept:
        return sample_draw(&self.s, rng)

    cdef CoreState c_clone(self):
        cdef SorryState t = SorryState.__new__(SorryState)
        t.game = self.game
        t.n_players = self.n_players
        t.n_actions = self.n_actions
        t.s = self.s
        return t

    cdef void c_copy_from(self, CoreState other) noexcept:
        self.s = (<SorryState>other).s

    cdef int c_playout(self, Rng* rng) except -1:  # (the interface may fail; this one cannot)
        cdef int buf[N_ACTIONS]
        cdef int moves = 0, n
        cdef Core* s = &self.s
        while s.winner < 0:
            if s.card == 0:
                apply_action(s, sample_draw(s, rng))
            else:
                n = gen_moves(s, buf)
                apply_action(s, buf[rng_below(rng, n) if n > 1 else 0])
            moves += 1
        return moves

    cdef int c_chance_sequence(self, Rng* rng, int* out, int n) noexcept:
        # The cards left in the pile in a random order, then freshly shuffled full decks.
        cdef int deck[DECK_SIZE]
        cdef int m = 0, v, i, j, t, filled = 0
        for v in range(1, 14):
            for i in range(self.s.pile[v] if self.s.pile_total > 0 else 0):
                deck[m] = v
                m += 1
        while filled < n:
            if m == 0:
                for v in range(1, 14):
                    for i in range(DECK[v]):
                        deck[m] = v
                        m += 1
            for i in range(m - 1, 0, -1):         # Fisher-Yates
                j = rng_below(rng, i + 1)
                t = deck[i]
                deck[i] = deck[j]
                deck[j] = t
            i = 0
            while i < m and filled < n:
                out[filled] = deck[i]
                filled += 1
                i += 1
            m = 0
        return filled

    # ----- Python hooks -------------------------------------------------------------------------
    def _colour_of(self, int player) -> int:
        return self.s.colour[player]

    def _positions(self) -> list:
        """pos[colour][pawn] for every colour (test and rendering helper)."""
        return [[self.s.b.pos[c][k] for k in range(4)] for c in range(4)]

    def _simulate(self, int action) -> list:
        """The positions (by colour) after a decision action, without changing this state."""
        cdef Core t = self.s
        apply_action(&t, action)
        return [[t.b.pos[c][k] for k in range(4)] for c in range(4)]

    def _step_size(self, bint forward) -> int:
        """Steps of a forward (or backward) single-pawn move with the card in play."""
        return fwd_amount(&self.s) if forward else back_amount(self.s.card)

    def _dest(self, int colour, int p, int n, bint forward) -> int:
        """Where a pawn of ``colour`` on ``p`` ends after n steps, before any slide (-2: passes HOME)."""
        return fwd_dest(colour, p, n) if forward else back_dest(colour, p, n)

    def _pawns_per_player(self) -> int:
        return self.game.param("pawnsPerPlayer")

    def _action_to_string(self, int action) -> str:
        from games.sorry.naming import describe
        return describe(self, action)

    def _string_to_action(self, str text) -> int:
        from games.sorry.naming import parse
        return parse(self, text)

    def _observation(self) -> dict:
        ppp = self._pawns_per_player()
        n = self.s.n_players
        pile = {("sorry" if v == SORRY_CARD else str(v)): self.s.pile[v] for v in CARD_VALUES}
        return {
            "players": n,
            "colors": [COLOUR_NAMES[self.s.colour[i]] for i in range(n)],
            "pawns": [[self.s.b.pos[self.s.colour[i]][k] for k in range(ppp)] for i in range(n)],
            "card": self.s.card if self.s.card else None,
            "draw_pile": pile,
            "draw_pile_size": self.s.pile_total,
            "turn": self.s.turn,
            "extra_draw": bool(self.s.extra),
            "winner": self.s.winner if self.s.winner >= 0 else None,
        }

    def _state_key(self):
        # Everything that determines the future (and the observation), without building the dict.
        cdef int c, k
        return (self.c_current_player(), tuple([self.s.b.pos[c][k] for c in range(4) for k in range(4)]),
                tuple([self.s.pile[k] for k in range(14)]), self.s.pile_total, self.s.card, self.s.turn,
                self.s.winner, self.s.extra)

    def _board_string(self) -> str:
        from games.sorry.render import render
        return render(self.observation())

    def _py_sample_draws(self, int n, seed) -> dict:
        """Test hook: counts of n draws by the compiled sampler from this state's pile (not applied)."""
        cdef Rng rng
        cdef int i
        counts = {}
        rng_seed(&rng, <unsigned long long>(seed & 0xFFFFFFFFFFFFFFFF))
        for i in range(n):
            v = sample_draw(&self.s, &rng)
            counts[v] = counts.get(v, 0) + 1
        return counts

    def _py_chance_sequence(self, int n, seed) -> list:
        """Test hook: ``c_chance_sequence`` (the next n draws sampled jointly) as a list."""
        cdef Rng rng
        cdef int i, m
        cdef int* out = <int*>malloc(max(n, 1) * sizeof(int))
        if out == NULL:
            raise MemoryError()
        rng_seed(&rng, <unsigned long long>(seed & 0xFFFFFFFFFFFFFFFF))
        try:
            m = self.c_chance_sequence(&rng, out, n)
            return [out[i] for i in range(m)]
        finally:
            free(out)

    def _py_set_position(self, positions, int turn, int card, pile=None, bint extra=False) -> None:
        """Test hook: puts the pawns (``positions[colour][pawn]``, 4 ints per colour), the player to
        move, the drawn card (0: none, a chance node) and optionally the draw pile (value -> count).
        The history is not touched: such a state is for rule tests, not for replays."""
        cdef int c, k, p
        for c in range(60):
            self.s.b.sq[c] = -1
        for c in range(4):
            for k in range(4):
                p = positions[c][k]
                if not (START <= p <= HOME):
                    raise ValueError(f"bad square {p} for {COLOUR_NAMES[c]} pawn {k}")
                self.s.b.pos[c][k] = p
                if 0 <= p < TRACK:
                    if self.s.b.sq[p] >= 0:
                        raise ValueError(f"two pawns on track square {p}")
                    self.s.b.sq[p] = c * 4 + k
                elif SAFETY0 <= p < HOME and any(positions[c][j] == p for j in range(k)):
                    raise ValueError(f"two {COLOUR_NAMES[c]} pawns on S{p - SAFETY0}")
        if not 0 <= turn < self.s.n_players:
            raise ValueError(f"bad player {turn}")
        if card not in (0,) + CARD_VALUES:
            raise ValueError(f"bad card {card}")
        self.s.turn = turn
        self.s.card = card
        self.s.extra = extra
        self.s.winner = -1
        if pile is not None:
            total = 0
            for v in range(14):
                self.s.pile[v] = 0
            for v, count in pile.items():
                if v not in CARD_VALUES or not 0 <= count <= DECK[v]:
                    raise ValueError(f"bad draw pile entry {v}: {count}")
                self.s.pile[v] = count
                total += count
            self.s.pile_total = total
