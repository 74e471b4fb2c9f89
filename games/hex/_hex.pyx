# Hex (Nash/Hein), with OpenSpiel's conventions: action r*N + c, player 0 'x' joins top and
# bottom, player 1 'o' joins left and right; with the pie rule, action N*N is the swap.
# Layout of the padded board and the union-find: see _hex.pxd.
from libc.string cimport memcpy

from games._core cimport CoreState, TERMINAL
from games._rng cimport Rng, rng_seed, rng_below

from games.errors import InvalidActionError

SWAP_NAME = "swap"
_SYMBOLS = {HEX_P0: "x", HEX_P1: "o", HEX_EMPTY: "."}


cdef inline int find(int* parent, int x) noexcept nogil:
    # Path halving: every visited node skips to its grandparent.
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


cdef inline int merge(int* parent, int root, int cell, int other) noexcept nogil:
    # Joins the new stone `cell` (root: its set's root so far, or -1) with the set of `other`.
    other = find(parent, other)
    if root < 0:
        parent[cell] = other
        return other
    if other != root:
        parent[other] = root
    return root


cdef inline bint place_stone(signed char* b, int* parent, int w, int cell, int p,
                             int n_padded) noexcept nogil:
    """Puts a stone of colour p on the empty padded cell, joins it with its same-coloured neighbours
    (border cells included) and returns whether p's two sides are now connected."""
    cdef int root = -1
    if b[cell - w] == p:
        root = merge(parent, root, cell, cell - w)
    if b[cell - w + 1] == p:
        root = merge(parent, root, cell, cell - w + 1)
    if b[cell - 1] == p:
        root = merge(parent, root, cell, cell - 1)
    if b[cell + 1] == p:
        root = merge(parent, root, cell, cell + 1)
    if b[cell + w - 1] == p:
        root = merge(parent, root, cell, cell + w - 1)
    if b[cell + w] == p:
        root = merge(parent, root, cell, cell + w)
    b[cell] = p
    if root < 0:
        return False     # an isolated stone touches no side (N >= 2), so it cannot connect them
    cell = n_padded + 2 * p      # TOP (p = 0) or LEFT (p = 1); the opposite side is the next node
    return find(parent, cell) == root and find(parent, cell + 1) == root


cdef class HexState(CoreState):

    def __init__(self, game, int size, bint pie):
        if not 2 <= size <= HEX_MAX_SIZE:
            raise ValueError(f"hex size must be 2..{HEX_MAX_SIZE}, not {size}")
        self.game = game
        self.n_players = 2
        self.n_actions = size * size + 1   # the swap id exists even without the pie rule: stable ids
        self.size = size
        self.width = size + 2
        self.n_padded = self.width * self.width
        self.pie = pie
        self.reset()

    cdef void reset(self) noexcept:
        cdef int n = self.size, w = self.width, i, r, c
        cdef int top = self.n_padded, bottom = top + 1, left = top + 2, right = top + 3
        for i in range(self.n_padded):
            r = i // w - 1
            c = i % w - 1
            self.parent[i] = i
            if 0 <= r < n and 0 <= c < n:
                self.board[i] = HEX_EMPTY
            elif 0 <= c < n:
                self.board[i] = HEX_P0
                self.parent[i] = top if r < 0 else bottom
            elif 0 <= r < n:
                self.board[i] = HEX_P1
                self.parent[i] = left if c < 0 else right
            else:
                self.board[i] = HEX_OFF
        for i in range(4):
            self.parent[top + i] = top + i
        self.player = 0
        self.winner = -1
        self.n_empty = n * n

    cdef bint swap_pending(self) noexcept:
        # Player 1 to move with exactly one stone on the board happens only right after player 0's
        # first move (after a swap, player 0 is to move).
        return self.pie and self.player == 1 and self.n_empty == self.size * self.size - 1

    cdef void place(self, int cell, int p) noexcept:
        """Puts a stone of colour p on an empty padded cell; sets the winner if it connects p's sides."""
        if place_stone(self.board, self.parent, self.width, cell, p, self.n_padded):
            self.winner = p

    cdef int collect_empty(self, int* out) noexcept:
        # Border and padding cells are never EMPTY, so the scan needs no edge test.
        cdef int i, k = 0, w = self.width
        cdef signed char* b = self.board
        for i in range(w + 1, self.n_padded - w - 1):
            if b[i] == HEX_EMPTY:
                out[k] = i
                k += 1
        return k

    cdef int fill_winner(self, int* queue) noexcept:
        """The winner of a full board: does player 0 join top and bottom? (Breadth-first search from
        the top border over player 0's cells; the marks are undone before returning.)"""
        cdef int w = self.width, n = self.size
        cdef int bottom = (n + 1) * w   # first index of the bottom border row
        cdef signed char* b = self.board
        cdef int head = 0, tail = 0, i, j, k, winner = 1
        cdef int off[6]
        off[0] = -w; off[1] = -w + 1; off[2] = -1; off[3] = 1; off[4] = w - 1; off[5] = w
        # The top border is marked (not queued) so the search never steps above row 0; the seeds
        # are player 0's cells of row 0.
        for i in range(1, n + 1):
            b[i] = HEX_MARK
            if b[w + i] == HEX_P0:
                b[w + i] = HEX_MARK
                queue[tail] = w + i
                tail += 1
        while head < tail and winner:
            i = queue[head]
            head += 1
            for k in range(6):
                j = i + off[k]
                if b[j] == HEX_P0:
                    if j >= bottom:
                        winner = 0
                        break
                    b[j] = HEX_MARK
                    queue[tail] = j
                    tail += 1
        for i in range(tail):
            b[queue[i]] = HEX_P0
        for i in range(1, n + 1):
            b[i] = HEX_P0
        return winner

    # ----- the C-level interface -----------------------------------------------------------------
    cdef int c_current_player(self) noexcept:
        return TERMINAL if self.winner >= 0 else self.player

    cdef int c_legal_actions(self, int* out) noexcept:
        cdef int r, c, k = 0, n = self.size, w = self.width
        if self.winner >= 0:
            return 0
        for r in range(n):
            for c in range(n):
                if self.board[(r + 1) * w + c + 1] == HEX_EMPTY:
                    out[k] = r * n + c
                    k += 1
        if self.swap_pending():
            out[k] = n * n
            k += 1
        return k

    cdef void c_apply(self, int action) noexcept:
        cdef int n = self.size, w = self.width, i, a = -1
        if action == n * n:
            # The swap: player 0's only stone (r, c) becomes player 1's stone on (c, r).
            for i in range(n * n):
                if self.board[(i // n + 1) * w + i % n + 1] == HEX_P0:
                    a = i
            self.reset()
            self.place(((a % n) + 1) * w + a // n + 1, HEX_P1)
            self.n_empty = n * n - 1
            self.player = 0
            return
        self.place((action // n + 1) * w + action % n + 1, self.player)
        self.n_empty -= 1
        self.player ^= 1

    cdef void c_returns(self, double* out) noexcept:
        out[self.winner] = 1.0
        out[1 - self.winner] = -1.0

    cdef CoreState c_clone(self):
        cdef HexState s = HexState.__new__(HexState)
        s.game = self.game
        s.n_players = 2
        s.n_actions = self.n_actions
        s.size = self.size
        s.width = self.width
        s.n_padded = self.n_padded
        s.pie = self.pie
        s.c_copy_from(self)
        return s

    cdef void c_copy_from(self, CoreState other) noexcept:
        # Same game, so size/width/pie already agree: copy only what a move changes.
        cdef HexState o = <HexState>other
        self.player = o.player
        self.winner = o.winner
        self.n_empty = o.n_empty
        memcpy(self.board, o.board, self.n_padded * sizeof(signed char))
        memcpy(self.parent, o.parent, (self.n_padded + 4) * sizeof(int))

    cdef int random_first_reply(self, Rng* rng) noexcept:
        """Player 1's first decision under the pie rule, uniformly among the empty cells and the
        swap. Returns 1 (the decisions made)."""
        cdef int cells[HEX_MAX_PADDED]
        cdef int e = self.collect_empty(cells)
        cdef int j = rng_below(rng, e + 1)
        if j == e:
            self.c_apply(self.size * self.size)
        else:
            self.place(cells[j], self.player)   # a single stone never wins (N >= 2)
            self.n_empty -= 1
            self.player ^= 1
        return 1

    cdef int c_playout_moves(self, Rng* rng) noexcept:
        """A random game played move by move: a random empty cell each turn (an incremental
        Fisher-Yates shuffle), union-find, stop at the first connection. Returns the moves made."""
        cdef int cells[HEX_MAX_PADDED]
        cdef int e, t = 0, j, cell, moves = 0
        cdef signed char* b = self.board
        cdef int* parent = self.parent
        cdef int w = self.width, n_padded = self.n_padded, p
        if self.winner >= 0:
            return 0
        if self.swap_pending():
            moves = self.random_first_reply(rng)
        e = self.collect_empty(cells)
        p = self.player
        while True:
            j = t + rng_below(rng, e - t)
            cell = cells[j]
            cells[j] = cells[t]
            t += 1
            if place_stone(b, parent, w, cell, p, n_padded):
                break
            p ^= 1
        self.winner = p
        self.player = p ^ 1
        self.n_empty -= t
        return moves + t

    cdef int c_playout_fill(self, Rng* rng) noexcept:
        """Fills every empty cell at random (the mover gets the extra cell of an odd count) and
        reads the single winner of the full board: the same outcome distribution as a random game
        played move by move. Leaves a full board with the winner set; returns the cells filled
        (plus 1 for a decision on a pending swap)."""
        cdef int cells[HEX_MAX_PADDED]
        cdef int e, t, j, tmp, other, moves = 0
        if self.winner >= 0:
            return 0
        if self.swap_pending():
            moves = self.random_first_reply(rng)
        e = self.collect_empty(cells)
        other = self.player ^ 1
        # A uniformly random half (rounded down) of the empty cells goes to the player not to move.
        for t in range(e // 2):
            j = t + rng_below(rng, e - t)
            tmp = cells[t]
            cells[t] = cells[j]
            cells[j] = tmp
            self.board[cells[t]] = other
        for t in range(e // 2, e):
            self.board[cells[t]] = self.player
        self.n_empty = 0
        self.winner = self.fill_winner(cells)
        return moves + e

    cdef int c_playout(self, Rng* rng) except -1:  # (the interface may fail; this one cannot)
        return self.c_playout_fill(rng)

    # ----- Python hooks ------------------------------------------------------------------------
    def _action_to_string(self, int action) -> str:
        n = self.size
        if action == n * n:
            return SWAP_NAME
        return f"{chr(ord('a') + action % n)}{action // n + 1}"

    def _string_to_action(self, str text) -> int:
        n = self.size
        lowered = text.lower()
        if lowered == SWAP_NAME:
            return n * n
        if len(lowered) >= 2 and "a" <= lowered[0] <= "z" and lowered[1:].isdigit():
            c, r = ord(lowered[0]) - ord("a"), int(lowered[1:]) - 1
            if 0 <= c < n and 0 <= r < n:
                return r * n + c
        last = chr(ord("a") + n - 1)
        raise InvalidActionError(f"{text!r} is not a Hex action: write a cell a1..{last}{n} "
                                 f"(column letter, row number) or 'swap'")

    def _observation(self) -> dict:
        return {"board": self.board_list(), "size": self.size}

    def board_list(self) -> list:
        """The board as N*N ints in action order: -1 empty, else the seat of the stone."""
        n, w = self.size, self.width
        out = []
        for r in range(n):
            for c in range(n):
                v = self.board[(r + 1) * w + c + 1]
                out.append(-1 if v == HEX_EMPTY else int(v))
        return out

    def _board_string(self) -> str:
        # OpenSpiel's string: row r shifted right by r spaces, each cell followed by a space.
        n, w = self.size, self.width
        rows = []
        for r in range(n):
            rows.append(" " * r + "".join(_SYMBOLS[self.board[(r + 1) * w + c + 1]] + " " for c in range(n)))
        return "\n".join(rows)

    def _state_key(self):
        return (self.c_current_player(), self.winner, tuple(self.board_list()))


def _checked_root(root) -> HexState:
    if not isinstance(root, HexState):
        raise TypeError(f"expected a Hex state, not {type(root).__name__}")
    return <HexState>root


cdef tuple _run_playouts(root, long n, seed, bint fill):
    # One loop for both playout kinds: the benchmark compares them under identical overhead.
    cdef HexState r = _checked_root(root)
    cdef HexState s = <HexState>r.c_clone()
    cdef Rng rng
    cdef long i
    cdef long long total = 0
    cdef long w0 = 0
    rng_seed(&rng, <unsigned long long>(seed & 0xFFFFFFFFFFFFFFFF))
    for i in range(n):
        s.c_copy_from(r)
        total += s.c_playout_fill(&rng) if fill else s.c_playout_moves(&rng)
        if s.winner == 0:
            w0 += 1
    return [w0, n - w0], total


def playouts_move_by_move(root, long n, seed=0):
    """``n`` compiled move-by-move random playouts from ``root`` (left unchanged).

    Returns ``(wins, total_moves)``: wins per seat and the moves played in all playouts together.
    """
    return _run_playouts(root, n, seed, False)


def playouts_fill(root, long n, seed=0):
    """``n`` compiled fill-the-board random playouts from ``root`` (left unchanged).

    Returns ``(wins, total_filled)``: wins per seat and the cells filled in all playouts together.
    """
    return _run_playouts(root, n, seed, True)


def _py_playout_moves(state, seed=0) -> int:
    """Test hook: plays ``state`` (in place) to the end with the move-by-move playout; returns the moves.

    ``state.random_playout(seed)`` is the same for the fill-the-board playout (the default)."""
    cdef HexState s = _checked_root(state)
    cdef Rng rng
    rng_seed(&rng, <unsigned long long>(seed & 0xFFFFFFFFFFFFFFFF))
    return s.c_playout_moves(&rng)


def _py_fill_winner(board, int size) -> int:
    """Test hook: the compiled winner check of a full board (N*N ints 0/1 in action order)."""
    cdef HexState s = HexState(None, size, False)
    cdef int cells[HEX_MAX_PADDED]
    cdef int i
    if len(board) != size * size or any(v not in (0, 1) for v in board):
        raise ValueError("a full board is N*N values, each 0 or 1")
    for i in range(size * size):
        s.board[(i // size + 1) * s.width + i % size + 1] = board[i]
    return s.fill_winner(cells)
