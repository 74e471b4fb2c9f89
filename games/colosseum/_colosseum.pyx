# Colosseum Survival! (McGill COMP 424, 2022; rules: shared/specs/colosseum.md). Two players on an M x M
# board take turns: walk up to K = (M+1)//2 steps (never through walls or the opponent), then build a wall
# on one free side of the destination cell. The game ends when the players are walled apart; each scores
# the size of its region. Action (r*M + c)*4 + d = "end on (r, c), wall on side d" (0 Up 1 Right 2 Down 3 Left).
#
# Walls live as 4 bits per cell, each wall stored on both of its sides (the border counts as walls), so a
# step from cell x in direction d is open iff bit d of walls[x] is clear, and never leaves the board.
import re

from libc.string cimport memcpy, memset
from libc.stdint cimport uint64_t
from cpython.buffer cimport PyBUF_FORMAT, PyBUF_WRITABLE

from games._core cimport CoreState, TERMINAL
from games._rng cimport Rng, rng_seed, rng_below

from games.errors import InvalidActionError

DIRECTION_NAMES = ("Up", "Right", "Down", "Left")
_LETTERS = {"u": 0, "up": 0, "r": 1, "right": 1, "d": 2, "down": 2, "l": 3, "left": 3}
# "(2,3) Up", "(2, 3) up", "2,3,u" (the course's human-agent form), "2 3 Up"
_MOVE_RE = re.compile(r"\(?\s*(\d+)\s*[, ]\s*(\d+)\s*\)?\s*[, ]?\s*([A-Za-z]+)\Z")

# Seeds of the board generator: stream 1 of the game seed (stream 0 draws the default size).
cdef uint64_t BOARD_STREAM_MUL = <uint64_t>0x100000001B3


cdef extern from *:
    """
    static inline int arena_popcount64(unsigned long long x) {
        /* SWAR: the build has no -mpopcnt, and libgcc's popcount is a call */
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int)((x * 0x0101010101010101ULL) >> 56);
    }
    static inline int arena_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    """
    int popcount64 "arena_popcount64"(uint64_t x) noexcept nogil
    int ctz64 "arena_ctz64"(uint64_t x) noexcept nogil


# Bitboards over cell indices: word w+1 holds cells 64w..64w+63; words 0 and nw+1 stay zero (padding, so a
# shift needs no bounds test). Plane d of `op` (stride PW) marks the cells whose side d is open.
cdef inline void _open_planes(const unsigned char* walls, int ncells, uint64_t* op) noexcept nogil:
    cdef int i, d
    memset(op, 0, 4 * PW * sizeof(uint64_t))
    for i in range(ncells):
        for d in range(4):
            if not (walls[i] >> d) & 1:
                op[d * PW + 1 + (i >> 6)] |= (<uint64_t>1) << (i & 63)


cdef inline void _close(uint64_t* op, int cell, int d) noexcept nogil:
    op[d * PW + 1 + (cell >> 6)] &= ~((<uint64_t>1) << (cell & 63))


cdef inline void _reach(uint64_t* reach, const uint64_t* op, int nw, int M, int K, int me, int opp) noexcept nogil:
    # The cells within K steps of `me` through open sides, never entering `opp`: K whole-board expansions.
    cdef uint64_t u[PW]
    cdef uint64_t r[PW]
    cdef uint64_t dn[PW]
    cdef uint64_t lf[PW]
    cdef uint64_t nxt, changed
    cdef int w, step, ow = 1 + (opp >> 6), sM = 64 - M
    cdef uint64_t obit = (<uint64_t>1) << (opp & 63)
    memset(reach, 0, PW * sizeof(uint64_t))
    reach[1 + (me >> 6)] = (<uint64_t>1) << (me & 63)
    u[0] = r[0] = dn[0] = lf[0] = 0
    u[nw + 1] = r[nw + 1] = dn[nw + 1] = lf[nw + 1] = 0
    for step in range(K):
        for w in range(1, nw + 1):
            u[w] = reach[w] & op[UP * PW + w]
            r[w] = reach[w] & op[RIGHT * PW + w]
            dn[w] = reach[w] & op[DOWN * PW + w]
            lf[w] = reach[w] & op[LEFT * PW + w]
        changed = 0
        for w in range(1, nw + 1):
            nxt = reach[w] | (r[w] << 1) | (r[w - 1] >> 63) | (lf[w] >> 1) | (lf[w + 1] << 63) \
                | (dn[w] << M) | (dn[w - 1] >> sM) | (u[w] >> M) | (u[w + 1] << sM)
            if w == ow:
                nxt &= ~obit
            changed |= nxt ^ reach[w]
            reach[w] = nxt
        if not changed:
            break


# Union-find over the (M+1)^2 lattice corners, corner (i, j) = i*(M+1) + j, joined along every wall
# (the border included). Cell i's top-left corner is i + i // M.
cdef inline int _find(short* uf, int x) noexcept nogil:
    while uf[x] != x:
        uf[x] = uf[uf[x]]                     # path halving
        x = uf[x]
    return x


cdef inline void _corner_union_find(const unsigned char* walls, int M, short* uf) noexcept nogil:
    cdef int i, tl, a, b, W = M + 1
    for i in range(W * W):
        uf[i] = <short>i
    for i in range(M * M):
        tl = i + i // M
        if walls[i] & (1 << UP):
            a = _find(uf, tl)
            b = _find(uf, tl + 1)
            if a != b:
                uf[a] = <short>b
        if walls[i] & (1 << LEFT):
            a = _find(uf, tl)
            b = _find(uf, tl + W)
            if a != b:
                uf[a] = <short>b
        if walls[i] & (1 << RIGHT):
            a = _find(uf, tl + 1)
            b = _find(uf, tl + 1 + W)
            if a != b:
                uf[a] = <short>b
        if walls[i] & (1 << DOWN):
            a = _find(uf, tl + W)
            b = _find(uf, tl + W + 1)
            if a != b:
                uf[a] = <short>b


cdef inline int _step(int M, int d) noexcept:
    # Cell-index offset of one step in direction d.
    if d == UP:
        return -M
    if d == RIGHT:
        return 1
    if d == DOWN:
        return M
    return -1


cdef class ColosseumState(CoreState):

    def __init__(self, game, int size, uint64_t seed):
        if not 3 <= size <= MAX_SIZE:          # the C arrays hold 20x20; a 2x2 board cannot be set up
            raise ValueError(f"board size must be from 3 to {MAX_SIZE}, not {size}")
        self._setup(game, size)
        self._generate(seed)

    cdef _setup(self, game, int size):
        self.game = game
        self.n_players = 2
        self.n_actions = size * size * 4
        self.size = size
        self.ncells = size * size
        self.max_step = (size + 1) // 2
        self.player = 0
        self.winner = RUNNING
        self.score[0] = 0
        self.score[1] = 0

    cdef void _clear_board(self) noexcept:
        cdef int M = self.size, i
        memset(self.walls, 0, MAX_CELLS)
        for i in range(M):
            self.walls[i] |= 1 << UP                       # row 0
            self.walls[(M - 1) * M + i] |= 1 << DOWN       # row M-1
            self.walls[i * M] |= 1 << LEFT                 # column 0
            self.walls[i * M + M - 1] |= 1 << RIGHT        # column M-1

    cdef void _generate(self, unsigned long long seed) noexcept:
        # spec §3, in its RNG order; a board whose players start apart is rebuilt from the same stream.
        cdef Rng rng
        cdef int M = self.size, K = self.max_step, M1 = self.size - 1
        cdef int i, r, c, d, s0, s1
        rng_seed(&rng, seed * BOARD_STREAM_MUL + 1)
        while True:
            self._clear_board()
            for i in range(K):
                while True:
                    r = rng_below(&rng, M)
                    c = rng_below(&rng, M)
                    d = rng_below(&rng, 4)
                    if not (self.walls[r * M + c] >> d) & 1:
                        break
                self.c_place_wall(r * M + c, d)
                self.c_place_wall((M1 - r) * M + (M1 - c), (d + 2) & 3)
            while True:
                r = rng_below(&rng, M)
                c = rng_below(&rng, M)
                if r != M1 - r or c != M1 - c:
                    break
            self.pos[0] = r * M + c
            self.pos[1] = (M1 - r) * M + (M1 - c)
            if not self.c_full_check(&s0, &s1):
                self.region = s0
                return

    # ----- rules ------------------------------------------------------------------------------------
    cdef void c_place_wall(self, int cell, int d) noexcept:
        self.walls[cell] |= 1 << d
        self.walls[cell + _step(self.size, d)] |= 1 << ((d + 2) & 3)

    cdef void c_after_move(self, int mover, int x, int d) noexcept:
        # Only the wall just built (between x, the mover's cell, and its neighbour y) can split the
        # players' region. Search from x and y in alternation, one cell at a time: if the searches meet,
        # nothing was split; if one side runs out first, it is the smaller part and its size is known,
        # and the other part has `region` minus that. Cost: the smaller part (or the detour).
        cdef unsigned char seen[MAX_CELLS]   # 1: reached from x, 2: from y
        cdef int qx[MAX_CELLS]
        cdef int qy[MAX_CELLS]
        cdef int M = self.size
        cdef int y = x + _step(M, d), opp = self.pos[1 - mover]
        cdef int hx = 0, nx = 1, hy = 0, ny = 1, u, v, e, w, p
        # Fast path: a 3-step detour around the new wall on either side (x -> x' -> y' -> y, the primed
        # cells one step sideways) proves nothing was split. Most walls in open ground pass here.
        for p in range(1, 4, 2):
            e = (d + p) & 3
            if not (self.walls[x] >> e) & 1 and not (self.walls[y] >> e) & 1 and \
                    not (self.walls[x + _step(M, e)] >> d) & 1:
                return
        memset(seen, 0, self.ncells)
        qx[0] = x
        qy[0] = y
        seen[x] = 1
        seen[y] = 2
        while True:
            if hx == nx:                              # x's side is complete: nx cells
                if seen[opp] == 1:
                    self.region = nx
                else:
                    self._finish(mover, nx, self.region - nx)
                return
            u = qx[hx]
            hx += 1
            w = self.walls[u]
            for e in range(4):
                if not (w >> e) & 1:
                    v = u + _step(M, e)
                    if seen[v] == 0:
                        seen[v] = 1
                        qx[nx] = v
                        nx += 1
                    elif seen[v] == 2:
                        return                        # the searches met: still one region
            if hy == ny:                              # y's side is complete: ny cells
                if seen[opp] == 2:
                    self._finish(mover, self.region - ny, ny)
                else:
                    self.region -= ny
                return
            u = qy[hy]
            hy += 1
            w = self.walls[u]
            for e in range(4):
                if not (w >> e) & 1:
                    v = u + _step(M, e)
                    if seen[v] == 0:
                        seen[v] = 2
                        qy[ny] = v
                        ny += 1
                    elif seen[v] == 1:
                        return

    cdef void _finish(self, int mover, int mine, int theirs) noexcept:
        self.score[mover] = mine
        self.score[1 - mover] = theirs
        self._set_winner()

    cdef void _set_winner(self) noexcept:
        if self.score[0] > self.score[1]:
            self.winner = 0
        elif self.score[1] > self.score[0]:
            self.winner = 1
        else:
            self.winner = DRAW

    cdef bint c_full_check(self, int* s0, int* s1) noexcept:
        # spec §6 from scratch: True iff the players are in different regions; s0, s1 = their sizes.
        cdef unsigned char seen[MAX_CELLS]
        cdef int queue[MAX_CELLS]
        cdef int M = self.size, p, n, head, u, v, e, w
        cdef int sizes[2]
        memset(seen, 0, self.ncells)
        for p in range(2):
            if p == 1 and seen[self.pos[1]]:
                s0[0] = sizes[0]
                s1[0] = sizes[0]
                return False
            n = 1
            head = 0
            queue[0] = self.pos[p]
            seen[self.pos[p]] = 1
            while head < n:
                u = queue[head]
                head += 1
                w = self.walls[u]
                for e in range(4):
                    if not (w >> e) & 1:
                        v = u + _step(M, e)
                        if not seen[v]:
                            seen[v] = 1
                            queue[n] = v
                            n += 1
            sizes[p] = n
        s0[0] = sizes[0]
        s1[0] = sizes[1]
        return True

    cdef int c_random_walk(self, Rng* rng) noexcept:
        # The course engine's substitute move (World.random_walk, spec §5), draw for draw.
        cdef int M = self.size, start = self.pos[self.player], opp = self.pos[1 - self.player]
        cdef int cur = start, steps = rng_below(rng, self.max_step + 1), i, k, d, nxt
        for i in range(steps):
            d = rng_below(rng, 4)
            nxt = cur + _step(M, d)
            k = 0
            while (self.walls[cur] >> d) & 1 or nxt == opp:
                k += 1
                if k > 300:
                    break
                d = rng_below(rng, 4)
                nxt = cur + _step(M, d)
            if k > 300:
                cur = start
                break
            cur = nxt
        d = rng_below(rng, 4)
        while (self.walls[cur] >> d) & 1:
            d = rng_below(rng, 4)
        return cur * 4 + d

    # ----- the C-level interface ---------------------------------------------------------------------
    cdef int c_current_player(self) noexcept:
        return TERMINAL if self.winner != RUNNING else self.player

    cdef int c_legal_actions(self, int* out) noexcept:
        cdef uint64_t op[4 * PW]
        cdef uint64_t reach[PW]
        cdef uint64_t m
        cdef int nw = (self.ncells + 63) >> 6, count = 0, w, i, d, fw
        if self.winner != RUNNING:
            return 0
        _open_planes(self.walls, self.ncells, op)
        _reach(reach, op, nw, self.size, self.max_step, self.pos[self.player], self.pos[1 - self.player])
        for w in range(1, nw + 1):             # ascending cells, then ascending sides: ascending ids
            m = reach[w]
            while m:
                i = ((w - 1) << 6) + ctz64(m)
                m &= m - 1
                fw = self.walls[i]
                for d in range(4):
                    if not (fw >> d) & 1:
                        out[count] = i * 4 + d
                        count += 1
        return count

    cdef void c_apply(self, int action) noexcept:
        cdef int mover = self.player, cell = action >> 2, d = action & 3
        self.pos[mover] = cell
        self.c_place_wall(cell, d)
        self.player = 1 - mover
        self.c_after_move(mover, cell, d)

    cdef void c_returns(self, double* out) noexcept:
        if self.winner == DRAW or self.winner == RUNNING:    # RUNNING: not terminal, no result yet
            out[0] = 0.0
            out[1] = 0.0
        else:
            out[self.winner] = 1.0
            out[1 - self.winner] = -1.0

    cdef CoreState c_clone(self):
        cdef ColosseumState s = ColosseumState.__new__(ColosseumState)
        s.game = self.game
        s.n_players = 2
        s.n_actions = self.n_actions
        s.c_copy_from(self)
        return s

    cdef void c_copy_from(self, CoreState other) noexcept:
        cdef ColosseumState o = <ColosseumState>other
        memcpy(self.walls, o.walls, o.ncells)
        self.size = o.size
        self.ncells = o.ncells
        self.max_step = o.max_step
        self.pos[0] = o.pos[0]
        self.pos[1] = o.pos[1]
        self.player = o.player
        self.winner = o.winner
        self.score[0] = o.score[0]
        self.score[1] = o.score[1]
        self.region = o.region

    cdef int c_playout(self, Rng* rng) except -1:  # (the interface may fail; this one cannot)
        # Bitboards: the open sides as 4 planes (kept in step with walls[]), the reachable set by K
        # whole-board expansions, and a uniform pick among the (cell, free side) pairs by popcount.
        cdef uint64_t op[4 * PW]
        cdef uint64_t reach[PW]
        cdef int M = self.size, nw = (self.ncells + 63) >> 6, moves = 0, total, k, d, w, c, mover, cell = 0
        cdef uint64_t m
        cdef short uf[MAX_CORNERS]
        cdef int a, b
        _open_planes(self.walls, self.ncells, op)
        _corner_union_find(self.walls, M, uf)
        while self.winner == RUNNING:
            mover = self.player
            _reach(reach, op, nw, M, self.max_step, self.pos[mover], self.pos[1 - mover])
            total = 0
            for d in range(4):
                for w in range(1, nw + 1):
                    total += popcount64(reach[w] & op[d * PW + w])
            k = rng_below(rng, total)
            for d in range(4):
                for w in range(1, nw + 1):
                    m = reach[w] & op[d * PW + w]
                    c = popcount64(m)
                    if k < c:
                        while k > 0:                   # drop the k lowest set bits
                            m &= m - 1
                            k -= 1
                        cell = ((w - 1) << 6) + ctz64(m)
                        break
                    k -= c
                else:
                    continue
                break
            self.pos[mover] = cell
            self.c_place_wall(cell, d)
            _close(op, cell, d)
            _close(op, cell + _step(M, d), (d + 2) & 3)
            self.player = 1 - mover
            # Planar duality: the new wall splits a region iff its two end corners were already joined
            # by walls. Only then can the game end, and only then is a flood fill needed.
            a = cell + cell // M
            b = a
            if d == UP:
                b = a + 1
            elif d == RIGHT:
                a += 1
                b = a + M + 1
            elif d == DOWN:
                a += M + 1
                b = a + 1
            else:
                b = a + M + 1
            a = _find(uf, a)
            b = _find(uf, b)
            if a != b:
                uf[a] = <short>b
            else:
                self.c_after_move(mover, cell, d)
            moves += 1
        return moves

    # ----- Python-level extras -------------------------------------------------------------------
    @classmethod
    def from_position(cls, int size, walls, p0, p1, int player=0):
        """A state built directly from a position (a test hook; the §11 vectors use it).

        Args:
            size: M, 3..20.
            walls: ``(r, c, d)`` triples; each is stored on both sides, as the engine does.
            p0, p1: ``(r, c)`` of seat 0 (A) and seat 1 (B).
            player: the seat to move.

        The state's game is ``colosseum(size=M)``, so it does not replay from (spec, history).
        If the players already stand apart, the state is terminal.
        """
        from games.colosseum import ColosseumGame
        cdef ColosseumState s = cls.__new__(cls)
        cdef int M = size, r, c, d, s0, s1
        game = ColosseumGame(size=size)
        s._setup(game, M)
        s._clear_board()
        for r, c, d in walls:
            if not (0 <= r < M and 0 <= c < M and 0 <= d < 4):
                raise ValueError(f"wall {(r, c, d)!r} is not on a {M}x{M} board")
            if _is_border(M, r, c, d):
                raise ValueError(f"wall {(r, c, d)!r} lies on the border")
            if (s.walls[r * M + c] >> d) & 1:
                continue                     # given from both sides: already stored
            s.c_place_wall(r * M + c, d)
        for p, (r, c) in enumerate((p0, p1)):
            if not (0 <= r < M and 0 <= c < M):
                raise ValueError(f"position {(r, c)!r} is not on a {M}x{M} board")
            s.pos[p] = r * M + c
        if s.pos[0] == s.pos[1]:
            raise ValueError("the two players cannot share a cell")
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, not {player}")
        s.player = player
        if s.c_full_check(&s0, &s1):
            s.score[0] = s0
            s.score[1] = s1
            s._set_winner()
        else:
            s.region = s0
        return s

    def positions(self) -> list:
        """``[[r, c], [r, c]]`` of seat 0 (A) and seat 1 (B)."""
        return [list(divmod(self.pos[p], self.size)) for p in range(2)]

    def wall_array(self) -> list:
        """The M x M x 4 wall array (Up, Right, Down, Left; border included) as nested lists of bools."""
        cdef int M = self.size
        return [[[bool((self.walls[r * M + c] >> d) & 1) for d in range(4)] for c in range(M)] for r in range(M)]

    def wall_view(self) -> "WallView":
        """The wall bytes in place, through the buffer protocol: ``np.asarray(state.wall_view())`` is an
        ``(M, M)`` uint8 array over this state's own memory (no copy), read-only, keeping the state alive;
        it is live: it follows the state as moves are applied."""
        return WallView(self)

    def check_endgame(self) -> tuple:
        """``(over, score_A, score_B)`` computed from scratch, as the course's ``check_endgame``."""
        cdef int s0, s1
        over = self.c_full_check(&s0, &s1)
        return bool(over), s0, s1

    def scores(self) -> list:
        """The two region sizes (equal while both share one region)."""
        if self.winner != RUNNING:
            return [self.score[0], self.score[1]]
        return [self.region, self.region]

    def illegal_reason(self, action) -> object:
        """Why ``action`` is illegal for the player to move (a short phrase), or None if it is legal."""
        cdef int a, M = self.size, cell, d, dist
        if isinstance(action, bool) or not hasattr(action, "__index__"):
            return f"an action must be an int, not {action!r}"
        a = action.__index__()
        if self.winner != RUNNING:
            return "the game is over"
        if a < 0 or a >= self.n_actions:
            return f"{a} is not an action id (0..{self.n_actions - 1})"
        cell, d = a >> 2, a & 3
        if (self.walls[cell] >> d) & 1:
            r, c = divmod(cell, M)
            return "that side is the border" if _is_border(M, r, c, d) else "a wall is already there"
        if cell == self.pos[self.player]:
            return None
        if cell == self.pos[1 - self.player]:
            return "that is the opponent's cell"
        dist = self._distance(cell)
        if dist < 0:
            return "that cell cannot be reached"
        if dist > self.max_step:
            return f"{dist} steps away, more than max_step={self.max_step}"
        return None

    cdef int _distance(self, int target):
        # Shortest walk from the mover to target (no depth limit), or -1.
        cdef int dist[MAX_CELLS]
        cdef int queue[MAX_CELLS]
        cdef int M = self.size, n = 1, head = 0, u, v, e, w, i
        for i in range(self.ncells):
            dist[i] = -1
        queue[0] = self.pos[self.player]
        dist[queue[0]] = 0
        dist[self.pos[1 - self.player]] = -2
        while head < n:
            u = queue[head]
            head += 1
            if u == target:
                return dist[u]
            w = self.walls[u]
            for e in range(4):
                if not (w >> e) & 1:
                    v = u + _step(M, e)
                    if dist[v] == -1:
                        dist[v] = dist[u] + 1
                        queue[n] = v
                        n += 1
        return -1

    def random_walk_action(self, seed) -> int:
        """The course engine's substitute move (spec §5: random walk of U{0..K} steps, then a random free
        side), drawn with the shared xorshift RNG seeded by ``seed``. Always legal; the state is unchanged.

        Raises:
            ValueError: the game is over.
        """
        cdef Rng rng
        if self.winner != RUNNING:
            raise ValueError("the game is over: no move to substitute")
        rng_seed(&rng, <uint64_t>(seed & 0xFFFFFFFFFFFFFFFF))
        return self.c_random_walk(&rng)

    # ----- hooks of the shared State API ---------------------------------------------------------------
    def _action_to_string(self, int action) -> str:
        r, c = divmod(action >> 2, self.size)
        return f"({r},{c}) {DIRECTION_NAMES[action & 3]}"

    def _string_to_action(self, str text) -> int:
        m = _MOVE_RE.match(text)
        d = _LETTERS.get(m.group(3).lower()) if m else None
        if d is None:
            raise InvalidActionError(f"{text!r} is not a Colosseum move: write '(r,c) Up|Right|Down|Left' "
                                     f"or 'r,c,u|r|d|l'")
        r, c = int(m.group(1)), int(m.group(2))
        if not (r < self.size and c < self.size):
            raise InvalidActionError(f"({r},{c}) is not on the {self.size}x{self.size} board")
        return (r * self.size + c) * 4 + d

    def _observation(self) -> dict:
        return {"size": self.size, "max_step": self.max_step, "positions": self.positions(),
                "walls": self.wall_array(), "scores": self.scores()}

    def _state_key(self):
        return (self.c_current_player(), self.size, self.pos[0], self.pos[1],
                (<char*>self.walls)[:self.ncells])

    def _board_string(self) -> str:
        cdef int M = self.size, r, c
        lines = ["    " + "".join(f"{c:<4}" for c in range(M)).rstrip()]
        for r in range(M):
            top = "   +"
            row = f"{r:>2} " + ("|" if (self.walls[r * M] >> LEFT) & 1 else " ")
            for c in range(M):
                w = self.walls[r * M + c]
                top += ("---" if (w >> UP) & 1 else "   ") + "+"
                mark = "A" if self.pos[0] == r * M + c else "B" if self.pos[1] == r * M + c else " "
                row += f" {mark} " + ("|" if (w >> RIGHT) & 1 else " ")
            lines += [top, row]
        bottom = "   +"
        for c in range(M):
            bottom += ("---" if (self.walls[(M - 1) * M + c] >> DOWN) & 1 else "   ") + "+"
        lines.append(bottom)
        s = self.scores()
        lines.append(f"max_step {self.max_step}   scores A {s[0]}, B {s[1]}")
        if self.winner == RUNNING:
            lines.append(f"{'AB'[self.player]} (seat {self.player}) to move")
        elif self.winner == DRAW:
            lines.append("game over: a tie")
        else:
            lines.append(f"game over: {'AB'[self.winner]} wins {max(s)}:{min(s)}")
        return "\n".join(lines)


cdef bint _is_border(int M, int r, int c, int d):
    return (d == UP and r == 0) or (d == DOWN and r == M - 1) or (d == LEFT and c == 0) or \
           (d == RIGHT and c == M - 1)


cdef class WallView:
    """A read-only ``(M, M)`` uint8 buffer over a ColosseumState's ``walls`` (bit d: wall on side d). It holds
    a reference to the state, so the memory stays valid while any array made from it lives; it refuses
    writable requests, so numpy can never hand a bot a writable array onto the game state."""
    cdef readonly ColosseumState state
    cdef Py_ssize_t shape[2]
    cdef Py_ssize_t strides[2]

    def __cinit__(self, ColosseumState state not None):
        self.state = state
        self.shape[0] = state.size
        self.shape[1] = state.size
        self.strides[0] = state.size
        self.strides[1] = 1

    def __getbuffer__(self, Py_buffer* buffer, int flags):
        if flags & PyBUF_WRITABLE:
            raise BufferError("a Colosseum wall view is read-only (copy it to write)")
        buffer.buf = <void*>self.state.walls
        buffer.obj = self
        buffer.len = self.shape[0] * self.shape[1]
        buffer.readonly = 1
        buffer.itemsize = 1
        buffer.format = NULL  # NULL means "B" (unsigned bytes), as the buffer protocol defines
        if flags & PyBUF_FORMAT:
            buffer.format = b"B"
        buffer.ndim = 2
        buffer.shape = self.shape
        buffer.strides = self.strides
        buffer.suboffsets = NULL
        buffer.internal = NULL

    def __releasebuffer__(self, Py_buffer* buffer):
        pass
