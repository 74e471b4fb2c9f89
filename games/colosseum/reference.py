"""Colosseum Survival! in plain Python: the parity oracle of the tests and the benchmark baseline.

The oracle functions follow shared/specs/colosseum.md (§3, §4, §5, §6, §12) literally, on the course's
``board[r][c][d]`` representation (d: 0 Up, 1 Right, 2 Down, 3 Left; border included; every wall stored on
both sides). They are written to be obviously right, not fast. :func:`playouts` is the tuned baseline for
``arena bench games``.
"""
from __future__ import annotations

import random
from collections import deque

Board = list[list[list[bool]]]
Cell = tuple[int, int]

MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))
NAMES = ("Up", "Right", "Down", "Left")
_MASK = (1 << 64) - 1


def opposite(d: int) -> int:
    return (d + 2) % 4


class XorShiftRng:
    """The engine's RNG (games/_rng.pxd: splitmix64 seeding, xorshift64*, multiply-shift ``below``)."""

    def __init__(self, seed: int) -> None:
        x = (seed + 0x9E3779B97F4A7C15) & _MASK
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
        self.s = (x ^ (x >> 31)) or 0x9E3779B97F4A7C15

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        x = self.s
        x ^= x >> 12
        x ^= (x << 25) & _MASK
        x ^= x >> 27
        self.s = x
        return (((x * 0x2545F4914F6CDD1D) & _MASK) >> 32) * n >> 32


def empty_board(size: int) -> Board:
    """An M x M board with only the border walls."""
    board = [[[False] * 4 for _ in range(size)] for _ in range(size)]
    for i in range(size):
        board[0][i][0] = board[size - 1][i][2] = board[i][0][3] = board[i][size - 1][1] = True
    return board


def set_barrier(board: Board, r: int, c: int, d: int) -> None:
    """Places a wall on side d of (r, c) and on the matching side of the neighbour."""
    board[r][c][d] = True
    dr, dc = MOVES[d]
    board[r + dr][c + dc][opposite(d)] = True


def generate(size: int, seed: int) -> tuple[Board, Cell, Cell]:
    """The start of ``colosseum(size=size, seed=seed)``: (board, p0, p1), as docs/colosseum.md describes."""
    rng = XorShiftRng((seed * 0x100000001B3 + 1) & _MASK)
    k = (size + 1) // 2
    while True:
        board = empty_board(size)
        for _ in range(k):
            r, c, d = rng.below(size), rng.below(size), rng.below(4)
            while board[r][c][d]:
                r, c, d = rng.below(size), rng.below(size), rng.below(4)
            set_barrier(board, r, c, d)
            set_barrier(board, size - 1 - r, size - 1 - c, opposite(d))
        while True:
            p0 = (rng.below(size), rng.below(size))
            p1 = (size - 1 - p0[0], size - 1 - p0[1])
            if p0 != p1:
                break
        if not end_check(board, p0, p1)[0]:
            return board, p0, p1


def distances(board: Board, me: Cell, opp: Cell) -> dict[Cell, int]:
    """Fewest unit steps from me to every cell reachable without crossing a wall or entering opp's cell."""
    dist = {me: 0}
    queue = deque([me])
    while queue:
        cur = queue.popleft()
        for d, (dr, dc) in enumerate(MOVES):
            nxt = (cur[0] + dr, cur[1] + dc)
            if not board[cur[0]][cur[1]][d] and nxt != opp and nxt not in dist:
                dist[nxt] = dist[cur] + 1
                queue.append(nxt)
    return dist


def is_border(size: int, r: int, c: int, d: int) -> bool:
    return (d == 0 and r == 0) or (d == 1 and c == size - 1) or (d == 2 and r == size - 1) or (d == 3 and c == 0)


def check_move(board: Board, me: Cell, opp: Cell, dest: Cell, d: int, k: int,
               dist: dict[Cell, int] | None = None) -> str | None:
    """Why "end on dest, wall on side d" is illegal (spec §4), or None when it is legal.

    ``dist``: :func:`distances` of this position, when the caller already has it.
    """
    size = len(board)
    r, c = dest
    if not (0 <= r < size and 0 <= c < size and 0 <= d <= 3):
        return "off the board"
    if board[r][c][d]:
        return "that side is the border" if is_border(size, r, c, d) else "a wall is already there"
    if dest == me:
        return None
    if dest == opp:
        return "that is the opponent's cell"
    steps = (distances(board, me, opp) if dist is None else dist).get(dest)
    if steps is None:
        return "that cell cannot be reached"
    if steps > k:
        return f"{steps} steps away, more than max_step={k}"
    return None


def legal_actions(board: Board, me: Cell, opp: Cell, k: int) -> list[int]:
    """Every legal action id (r*M + c)*4 + d, ascending, by testing each one."""
    size = len(board)
    dist = distances(board, me, opp)
    return [(r * size + c) * 4 + d for r in range(size) for c in range(size) for d in range(4)
            if check_move(board, me, opp, (r, c), d, k, dist) is None]


def end_check(board: Board, p0: Cell, p1: Cell) -> tuple[bool, int, int]:
    """(over, score0, score1) by union-find over open Right/Down edges, as the course's check_endgame."""
    size = len(board)
    parent = {(r, c): (r, c) for r in range(size) for c in range(size)}

    def find(x: Cell) -> Cell:
        while parent[x] != x:
            x = parent[x]
        return x

    for r in range(size):
        for c in range(size):
            for d in (1, 2):  # join with the Right and Down neighbours through open sides
                if not board[r][c][d]:
                    a, b = find((r, c)), find((r + MOVES[d][0], c + MOVES[d][1]))
                    if a != b:
                        parent[a] = b
    roots = [find(cell) for cell in parent]
    r0, r1 = find(p0), find(p1)
    return r0 != r1, roots.count(r0), roots.count(r1)


def random_walk(board: Board, me: Cell, opp: Cell, k: int, rng: XorShiftRng) -> tuple[Cell, int]:
    """The course's substitute move (World.random_walk, spec §5), with the engine's RNG."""
    start = me
    for _ in range(rng.below(k + 1)):
        r, c = me
        d = rng.below(4)
        nxt = (r + MOVES[d][0], c + MOVES[d][1])
        tries = 0
        while board[r][c][d] or nxt == opp:
            tries += 1
            if tries > 300:
                break
            d = rng.below(4)
            nxt = (r + MOVES[d][0], c + MOVES[d][1])
        if tries > 300:
            me = start
            break
        me = nxt
    d = rng.below(4)
    while board[me[0]][me[1]][d]:
        d = rng.below(4)
    return me, d


def playouts(n: int, board: Board, p0: Cell, p1: Cell, seed: int = 0) -> list[int]:
    """Plays ``n`` uniformly random games from a position (seat 0 to move); returns wins per seat
    (index 2: ties).

    The tuned baseline, with the engine's algorithms so the benchmark compares languages, not methods:
    flat cell indices with 4-bit wall masks, a depth-limited BFS for the reachable cells, and a
    union-find over the wall corners so that a region is flooded only when a new wall closes a loop
    (planar duality: only then can it split).
    """
    size = len(board)
    k = (size + 1) // 2
    width = size + 1
    start = [sum(1 << d for d in range(4) if board[r][c][d]) for r in range(size) for c in range(size)]
    step = (-size, 1, size, -1)
    free = [[d for d in range(4) if not m >> d & 1] for m in range(16)]
    nfree = [len(f) for f in free]
    # The two end corners of side d of a cell, as offsets from its top-left corner.
    ends = ((0, 1), (1, 1 + width), (width, width + 1), (0, width))
    start_uf = list(range(width * width))

    def find(uf: list[int], x: int) -> int:
        while uf[x] != x:
            uf[x] = uf[uf[x]]
            x = uf[x]
        return x

    for cell, mask in enumerate(start):
        tl = cell + cell // size
        for d in range(4):
            if mask >> d & 1:
                a, b = find(start_uf, tl + ends[d][0]), find(start_uf, tl + ends[d][1])
                if a != b:
                    start_uf[a] = b
    rand = random.Random(seed).random
    wins = [0, 0, 0]
    for _ in range(n):
        walls = start[:]
        uf = start_uf[:]
        pos = [p0[0] * size + p0[1], p1[0] * size + p1[1]]
        player = 0
        while True:
            me, opp = pos[player], pos[1 - player]
            cells = [me]
            seen = {me, opp}
            frontier = cells
            for _ in range(k):
                nxt = []
                for x in frontier:
                    for d in free[walls[x]]:
                        y = x + step[d]
                        if y not in seen:
                            seen.add(y)
                            nxt.append(y)
                cells += nxt
                frontier = nxt
            pick = int(rand() * sum(nfree[walls[x]] for x in cells))
            for x in cells:
                f = nfree[walls[x]]
                if pick < f:
                    break
                pick -= f
            d = free[walls[x]][pick]
            y = x + step[d]
            pos[player] = x
            walls[x] |= 1 << d
            walls[y] |= 1 << ((d + 2) & 3)
            tl = x + x // size
            a, b = find(uf, tl + ends[d][0]), find(uf, tl + ends[d][1])
            if a != b:
                uf[a] = b                      # no loop closed: still one region
            else:
                region = {x}                   # a split: is the opponent on the mover's side?
                todo = [x]
                while todo:
                    u = todo.pop()
                    for e in free[walls[u]]:
                        v = u + step[e]
                        if v not in region:
                            region.add(v)
                            todo.append(v)
                if opp not in region:
                    other = {y}
                    todo = [y]
                    while todo:
                        u = todo.pop()
                        for e in free[walls[u]]:
                            v = u + step[e]
                            if v not in other:
                                other.add(v)
                                todo.append(v)
                    mine, theirs = len(region), len(other)
                    wins[player if mine > theirs else 1 - player if theirs > mine else 2] += 1
                    break
            player = 1 - player
    return wins
