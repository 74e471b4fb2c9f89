# UCT (Kocsis & Szepesvári; Baier-Reinio & MacDonald 2022) over any compiled game, and the
# determinized variant of Thompson & Rooney 2021 on the same tree. See bots/_uct.pxd for the layout.
#
# One `Search` owns a flat node pool, a path buffer and three scratch states (cloned once per move):
# `leaf` walks down the tree, `child` holds each new child during expand=all, `sim` is reset with
# c_copy_from for every playout. Random rollouts use the game's own c_playout. Python is touched once
# per move (Search.search / Search.determinized), never per iteration.
#
# Perspective: a node's `wins` count the wins of the seat that moved into it (negamax, and with 3-4
# players "each node scores the player who moved into it"). A playout's result is a vector: 1 for
# the winner, 0 for the others; seats sharing the best return share the point (a 2-player draw: 1/2).
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy
from libc.math cimport exp, log, sqrt, INFINITY
from libc.stdint cimport uint64_t

from games._core cimport CoreState, CHANCE, TERMINAL, MAX_PLAYERS, MAX_CHANCE
from games._rng cimport Rng, rng_seed, rng_below, splitmix64
from bots._common cimport now

cdef enum:
    INITIAL_NODES = 4096
    CLOCK_EVERY = 16          # playouts between two reads of the clock under a deadline
    SEQ_LEN = 8192            # chance outcomes drawn per determinization (later ones: per-index seeds)
    MAX_VISITS = 1 << 30      # stop a search before a node's int visit count could overflow
    MAX_CHILDREN = 65535      # a node with more legal actions stays a leaf (unsigned short counts)

NODE_BYTES = sizeof(Node)


cdef inline void _add_result(const double* ret, int n_players, double* acc) noexcept:
    """Adds one playout's win vector to acc: 1 to the sole best seat, 1/k to each of k tied seats."""
    cdef int p, k = 0
    cdef double best = ret[0]
    for p in range(1, n_players):
        if ret[p] > best:
            best = ret[p]
    for p in range(n_players):
        if ret[p] == best:
            k += 1
    for p in range(n_players):
        if ret[p] == best:
            acc[p] += 1.0 / k


cdef class Search:
    """A UCT search tree in a flat node pool.

    ``search(root, iterations, deadline)`` grows the tree under ``root`` and returns the chosen action;
    ``advance(path)`` keeps the subtree reached by ``path`` (tree reuse); ``determinized(...)`` runs the
    determinized variant. Parameters are plain attributes (``c``, ``annealed``, ``expand_all``,
    ``sims_per_leaf``, ``greedy``, ``final_visits``, ``max_nodes``).
    """

    def __cinit__(self):
        self.nodes = NULL
        self.path = NULL
        self.actions = NULL
        self.rbuf = NULL
        self.seq = NULL

    def __init__(self, *, double c=1.4, bint annealed=False, bint expand_all=False, int sims_per_leaf=1,
                 bint greedy=False, bint final_visits=False, int max_nodes=1_000_000, seed=0):
        if c < 0 or sims_per_leaf < 1 or max_nodes < 1:
            raise ValueError("c must be >= 0, sims_per_leaf >= 1 and max_nodes >= 1")
        self.c = c
        self.annealed = annealed
        self.expand_all = expand_all
        self.sims_per_leaf = sims_per_leaf
        self.greedy = greedy
        self.final_visits = final_visits
        self.max_nodes = max_nodes
        rng_seed(&self.rng, <uint64_t>(seed & 0xFFFFFFFFFFFFFFFF))
        self.capacity = INITIAL_NODES
        self.nodes = <Node*>malloc(self.capacity * sizeof(Node))
        self.path_cap = 256
        self.path = <int*>malloc(self.path_cap * sizeof(int))
        self.seq_cap = SEQ_LEN
        self.seq = <int*>malloc(self.seq_cap * sizeof(int))
        if self.nodes == NULL or self.path == NULL or self.seq == NULL:
            raise MemoryError()
        self.size = 0

    def __dealloc__(self):
        free(self.nodes)
        free(self.path)
        free(self.actions)
        free(self.rbuf)
        free(self.seq)

    # ----- the pool ----------------------------------------------------------------------------------
    cdef int _alloc(self, int n, bint force) except -2:
        """Reserves a block of n nodes; -1 when max_nodes would be exceeded (unless force: the root's
        children must exist, or there is no move to choose). Out of memory: MemoryError (the bot's failure)."""
        cdef int start = self.size, cap
        cdef Node* grown
        if <long long>self.size + n > self.max_nodes and not force:
            self.pool_full = True
            return -1
        if self.size + n > self.capacity:
            cap = self.capacity * 2
            while cap < self.size + n:
                cap *= 2
            if cap > self.max_nodes and not force:
                cap = self.max_nodes
            grown = <Node*>realloc(self.nodes, cap * sizeof(Node))
            if grown == NULL:
                raise MemoryError()
            self.nodes = grown
            self.capacity = cap
        self.size += n
        return start

    cdef int _expand(self, int idx, CoreState st) except -1:
        """Allocates the child block of node idx (whose state is st); False if the pool is full.

        Decision children are shuffled so that ties and expand=one's order carry no move-order bias.
        """
        cdef double probs[MAX_CHANCE]
        cdef int p = st.c_current_player(), n, i, j, t, start
        cdef Node* nd
        if p == CHANCE:
            n = st.c_chance_outcomes(self.actions, probs)
        else:
            n = st.c_legal_actions(self.actions)
        if n <= 0 or n > MAX_CHILDREN:
            return False
        start = self._alloc(n, idx == 0)
        if start < 0:
            return False
        if p != CHANCE:
            for i in range(n - 1, 0, -1):
                j = rng_below(&self.rng, i + 1)
                t = self.actions[i]
                self.actions[i] = self.actions[j]
                self.actions[j] = t
        for i in range(n):
            nd = &self.nodes[start + i]
            nd.wins = 0.0
            nd.visits = 0
            nd.inv_sqrt = 0.0
            nd.first_child = -1
            nd.n_children = 0
            nd.n_open = 0
            nd.action = self.actions[i]
            nd.mover = <signed char>(p if p >= 0 else -1)
        nd = &self.nodes[idx]
        nd.first_child = start
        nd.n_children = n
        nd.n_open = n if (self.expand_all or p == CHANCE) else 0
        return True

    cdef int _select(self, int idx, int depth) noexcept:
        """The child maximising wins/visits + C*sqrt(ln(parent visits)/visits); unvisited ones first."""
        cdef Node* nd = &self.nodes[idx]
        cdef Node* ch
        cdef int i, best = -1
        cdef double cc = (exp(1.0 / depth) - 1.0) if self.annealed else self.c
        # wins/visits + C sqrt(ln N / visits) = s (wins s + C sqrt(ln N)) with s = 1/sqrt(visits):
        # one multiply-add per child, no division or square root.
        cdef double k = cc * sqrt(log(<double>nd.visits)) if nd.visits > 1 else 0.0
        cdef double s, v, best_v = -INFINITY
        for i in range(nd.n_open):
            ch = &self.nodes[nd.first_child + i]
            if ch.visits == 0:
                return nd.first_child + i
            s = ch.inv_sqrt
            v = s * (ch.wins * s + k)
            if v > best_v:
                best_v = v
                best = nd.first_child + i
        return best

    cdef int _find_child(self, int idx, int action) noexcept:
        cdef Node* nd = &self.nodes[idx]
        cdef int i
        for i in range(nd.n_open):
            if self.nodes[nd.first_child + i].action == action:
                return nd.first_child + i
        return -1

    cdef int _push(self, int* plen, int idx) except -1:
        cdef int* grown
        if plen[0] == self.path_cap:
            grown = <int*>realloc(self.path, 2 * self.path_cap * sizeof(int))
            if grown == NULL:
                raise MemoryError()
            self.path = grown
            self.path_cap *= 2
        self.path[plen[0]] = idx
        plen[0] += 1
        return True

    # ----- chance in determinized mode ----------------------------------------------------------------
    cdef int _fixed_outcome(self, CoreState s, int j) noexcept:
        """The j-th chance event after the root in this determinization: the game's joint sample when it
        gave one (and it is legal here), else a draw from an RNG seeded by (determinization, j)."""
        cdef int acts[MAX_CHANCE]
        cdef double probs[MAX_CHANCE]
        cdef int i, n
        cdef Rng r
        if j < self.seq_len:
            n = s.c_chance_outcomes(acts, probs)
            for i in range(n):
                if acts[i] == self.seq[j] and probs[i] > 0:
                    return self.seq[j]
        rng_seed(&r, self.det_seed ^ splitmix64(<uint64_t>j))
        return s.c_sample_chance(&r)

    cdef int _resolve_chance(self, CoreState s, int j) noexcept:
        """In determinized mode, applies the fixed outcomes of the chance events s stands at."""
        if self.fixed_chance:
            while s.c_current_player() == CHANCE:
                s.c_apply(self._fixed_outcome(s, j))
                j += 1
        return j

    # ----- simulation and backpropagation -------------------------------------------------------------
    cdef void _rollout(self, CoreState s, int j) except *:
        """Plays s to the end: the game's compiled random playout, or the greedy/fixed-chance loop."""
        cdef int p, a, n
        if not self.greedy and not self.fixed_chance:
            s.c_playout(&self.rng)
            return
        while True:
            p = s.c_current_player()
            if p == TERMINAL:
                return
            if p == CHANCE:
                if self.fixed_chance:
                    a = self._fixed_outcome(s, j)
                    j += 1
                else:
                    a = s.c_sample_chance(&self.rng)
            else:
                a = s.c_heuristic_action(&self.rng) if self.greedy else -1
                if a < 0:
                    n = s.c_legal_actions(self.rbuf)
                    a = self.rbuf[rng_below(&self.rng, n)]
            s.c_apply(a)

    cdef void _simulate(self, CoreState s, int j, int n, bint consume, double* acc) except *:
        """n playouts from s, their win vectors summed into acc. With consume, a single playout may use s."""
        cdef double ret[MAX_PLAYERS]
        cdef int k
        for k in range(n):
            if consume and n == 1:
                self._rollout(s, j)
                s.c_returns(ret)
            else:
                self.sim.c_copy_from(s)
                self._rollout(self.sim, j)
                self.sim.c_returns(ret)
            _add_result(ret, self.n_players, acc)
        self.playouts += n

    cdef void _backprop(self, int plen, int n, double* acc) noexcept:
        cdef int i
        cdef Node* nd
        for i in range(plen):
            nd = &self.nodes[self.path[i]]
            nd.visits += n
            nd.inv_sqrt = <float>(1.0 / sqrt(<double>nd.visits))
            if nd.mover >= 0:
                nd.wins += acc[nd.mover]

    # ----- one iteration: selection, expansion, simulation, backpropagation ---------------------------
    cdef void _iterate(self, CoreState root) except *:
        cdef CoreState leaf = self.leaf
        cdef double acc[MAX_PLAYERS]
        cdef double ret[MAX_PLAYERS]
        cdef int idx = 0, plen = 0, depth = 0, j = 0, p, ci, i, k, first, n, a, jc
        cdef bint fresh
        cdef Node* nd
        for i in range(MAX_PLAYERS):
            acc[i] = 0.0
        leaf.c_copy_from(root)
        self._push(&plen, 0)
        while True:
            p = leaf.c_current_player()
            if p == TERMINAL:
                leaf.c_returns(ret)
                _add_result(ret, self.n_players, acc)
                self._backprop(plen, 1, acc)
                return
            nd = &self.nodes[idx]
            fresh = False
            if nd.first_child < 0:
                if not self._expand(idx, leaf):
                    break                       # pool full: this node stays a leaf, simulate from it
                fresh = True
                nd = &self.nodes[idx]
            if p == CHANCE:                     # sample the outcome by its probability
                a = leaf.c_sample_chance(&self.rng)
                ci = self._find_child(idx, a)
                leaf.c_apply(a)
                if ci < 0 or not self._push(&plen, ci):
                    break
                idx = ci
                continue
            if nd.n_open < nd.n_children:       # expand=one: open the next untried child, simulate it
                ci = nd.first_child + nd.n_open
                nd.n_open += 1
                leaf.c_apply(self.nodes[ci].action)
                j = self._resolve_chance(leaf, j)
                self._push(&plen, ci)
                self._simulate(leaf, j, self.sims_per_leaf, True, acc)
                self._backprop(plen, self.sims_per_leaf, acc)
                return
            if fresh and self.expand_all:       # expand=all: every new child gets sims_per_leaf playouts
                first = nd.first_child
                n = nd.n_children
                for i in range(n):
                    if i > 0 and self.has_deadline and now() >= self.deadline:
                        break                   # unvisited children are tried first next time
                    self.child.c_copy_from(leaf)
                    self.child.c_apply(self.nodes[first + i].action)
                    jc = self._resolve_chance(self.child, j)
                    if not self._push(&plen, first + i):
                        return
                    self._simulate(self.child, jc, self.sims_per_leaf, True, acc)
                    self._backprop(plen, self.sims_per_leaf, acc)
                    plen -= 1
                    for k in range(MAX_PLAYERS):
                        acc[k] = 0.0
                return
            depth += 1
            ci = self._select(idx, depth)
            leaf.c_apply(self.nodes[ci].action)
            j = self._resolve_chance(leaf, j)
            if not self._push(&plen, ci):
                break
            idx = ci
        self._simulate(leaf, j, self.sims_per_leaf, True, acc)
        self._backprop(plen, self.sims_per_leaf, acc)

    cdef void _prepare(self, CoreState root):
        """Clones the scratch states and sizes the buffers for root's game (once per move)."""
        cdef int need = root.n_actions if root.n_actions > MAX_CHANCE else MAX_CHANCE
        if need > self.buf_cap:
            free(self.actions)
            free(self.rbuf)
            self.actions = <int*>malloc(need * sizeof(int))
            self.rbuf = <int*>malloc(need * sizeof(int))
            if self.actions == NULL or self.rbuf == NULL:
                self.buf_cap = 0
                raise MemoryError()
            self.buf_cap = need
        if self.leaf is None or type(self.leaf) is not type(root) or self.leaf.game is not root.game:
            self.leaf = root.c_clone()
            self.child = root.c_clone()
            self.sim = root.c_clone()
        self.n_players = root.n_players
        if self.size == 0:
            self.size = 1
            self.nodes[0].wins = 0.0
            self.nodes[0].visits = 0
            self.nodes[0].inv_sqrt = 0.0
            self.nodes[0].first_child = -1
            self.nodes[0].n_children = 0
            self.nodes[0].n_open = 0
            self.nodes[0].action = -1
            self.nodes[0].mover = -1

    cdef long long _run(self, CoreState root, long long iterations) except -1:
        """Iterations until the budget (iterations <= 0: none) or the deadline; at least one."""
        # Work = playouts + iterations: iterations that end on a terminal node play no playout (a solved
        # endgame can consist of nothing else), and they must still reach the clock.
        cdef long long done = 0, next_check = self.playouts + CLOCK_EVERY
        while iterations <= 0 or done < iterations:
            self._iterate(root)
            done += 1
            if self.has_deadline and self.playouts + done >= next_check:
                next_check = self.playouts + done + CLOCK_EVERY
                if now() >= self.deadline:
                    break
            if self.nodes[0].visits > MAX_VISITS:
                break                   # int visits must not overflow (a solved tree spins fast)
        self.iterations += done
        return done

    cdef int _best_child(self) noexcept:
        """Index of the root child chosen by `final` (highest win rate or most visits); first wins ties."""
        cdef Node* root = &self.nodes[0]
        cdef Node* ch
        cdef int i, best = -1
        cdef double v, best_v = -INFINITY
        for i in range(root.n_open):
            ch = &self.nodes[root.first_child + i]
            if ch.visits == 0:
                continue
            v = <double>ch.visits if self.final_visits else ch.wins / ch.visits
            if v > best_v:
                best_v = v
                best = root.first_child + i
        return best

    # ----- Python API (once per move) -----------------------------------------------------------------
    def search(self, CoreState root, long long iterations=0, double deadline=0.0) -> int:
        """Grows the tree under ``root`` and returns the chosen action.

        Args:
            root: the state to move from (a decision node); the tree must be empty or rooted at it.
            iterations: iteration budget (<= 0: until the deadline).
            deadline: CLOCK_MONOTONIC seconds (``time.monotonic()``) to stop at; 0 for none.
        """
        if root.c_current_player() < 0:
            raise ValueError("search needs a state where a player is to move")
        if iterations <= 0 and deadline <= 0:
            raise ValueError("give an iteration budget or a deadline")
        self._prepare(root)
        self.fixed_chance = False
        self.has_deadline = deadline > 0
        self.deadline = deadline
        self.playouts = 0
        self.iterations = 0
        self._run(root, iterations)
        cdef int best = self._best_child()
        if best < 0:
            raise RuntimeError("the search visited no root child")
        return self.nodes[best].action

    cdef void _determinize(self, CoreState root, int i) noexcept:
        """Fixes determinization i: the game's joint sample of the next chance events, and the seed of
        the per-index draws used past its end (or for memoryless chance)."""
        self.seq_len = root.c_chance_sequence(&self.rng, self.seq, self.seq_cap)
        self.det_seed = splitmix64(self.rng.s ^ <uint64_t>(i + 1))

    def _py_determinized_chance(self, CoreState root, seed, int playouts):
        """Test hook: fixes one determinization as ``determinized`` does and plays ``playouts`` random
        playouts under it. Returns (the joint sample's first 100 outcomes, the chance outcomes each
        playout met)."""
        cdef int j, p, n, a
        self._prepare(root)
        rng_seed(&self.rng, <uint64_t>(seed & 0xFFFFFFFFFFFFFFFF))
        self._determinize(root, 0)
        seen = []
        for _ in range(playouts):
            self.sim.c_copy_from(root)
            met = []
            j = 0
            while True:
                p = self.sim.c_current_player()
                if p == TERMINAL:
                    break
                if p == CHANCE:
                    a = self._fixed_outcome(self.sim, j)
                    j += 1
                    met.append(a)
                else:
                    n = self.sim.c_legal_actions(self.rbuf)
                    a = self.rbuf[rng_below(&self.rng, n)]
                self.sim.c_apply(a)
            seen.append(met)
        self.size = 0
        return [self.seq[j] for j in range(min(self.seq_len, 100))], seen

    def determinized(self, CoreState root, int d, int s, double deadline=0.0) -> int:
        """Determinized UCT: for each of d determinizations, fix every future chance event (the game's
        c_chance_sequence, else per-index seeds), run s iterations on a fresh tree, and add each root
        action's win rate to its score. Returns the action with the highest sum (random tie-break).

        Under a deadline each determinization gets an equal share of the time left, so all d run.
        """
        cdef int i, k, a, n, best, count
        cdef double share, t
        cdef Node* ch
        if root.c_current_player() < 0:
            raise ValueError("determinized search needs a state where a player is to move")
        self._prepare(root)
        cdef double* scores = <double*>malloc(root.n_actions * sizeof(double))
        cdef int* legal = <int*>malloc(root.n_actions * sizeof(int))
        if scores == NULL or legal == NULL:
            free(scores)
            free(legal)
            raise MemoryError()
        self.playouts = 0
        self.iterations = 0
        self.fixed_chance = True
        try:
            for a in range(root.n_actions):
                scores[a] = 0.0
            for i in range(d):
                self._determinize(root, i)
                self.size = 0
                self._prepare(root)
                if deadline > 0:
                    t = now()
                    share = (deadline - t) / (d - i)
                    self.has_deadline = True
                    self.deadline = t + (share if share > 0 else 0.0)
                else:
                    self.has_deadline = False
                self._run(root, s)
                ch = &self.nodes[self.nodes[0].first_child] if self.nodes[0].first_child >= 0 else NULL
                for k in range(self.nodes[0].n_open):
                    if ch[k].visits > 0:
                        scores[ch[k].action] += ch[k].wins / ch[k].visits
            n = root.c_legal_actions(legal)
            best = legal[0]
            count = 1
            for k in range(1, n):
                if scores[legal[k]] > scores[best]:
                    best = legal[k]
                    count = 1
                elif scores[legal[k]] == scores[best]:
                    count += 1
                    if rng_below(&self.rng, count) == 0:
                        best = legal[k]
            self.last_scores = {legal[k]: scores[legal[k]] for k in range(n)}
            return best
        finally:
            self.fixed_chance = False
            self.size = 0
            free(scores)
            free(legal)

    def advance(self, path) -> bool:
        """Tree reuse: keeps only the subtree reached from the root by ``path`` (actions and chance
        outcomes), copied to the front of a fresh pool. Returns False (and empties the tree) when the
        path leaves the tree."""
        cdef int idx = 0, ci, scan, n, start
        cdef Node* fresh
        if self.size == 0:
            return False
        for a in path:
            ci = self._find_child(idx, a) if self.nodes[idx].first_child >= 0 else -1
            if ci < 0:
                self.reset()
                return False
            idx = ci
        if idx == 0:
            return True
        fresh = <Node*>malloc(self.capacity * sizeof(Node))
        if fresh == NULL:
            raise MemoryError()
        # Breadth-first copy: each copied node's first_child still points into the old pool until the
        # scan reaches it and copies its block behind the nodes copied so far.
        fresh[0] = self.nodes[idx]
        fresh[0].mover = -1
        start = 1
        scan = 0
        while scan < start:
            if fresh[scan].first_child >= 0:
                n = fresh[scan].n_children
                memcpy(&fresh[start], &self.nodes[fresh[scan].first_child], n * sizeof(Node))
                fresh[scan].first_child = start
                start += n
            scan += 1
        free(self.nodes)
        self.nodes = fresh
        self.size = start
        return True

    def reseed(self, seed) -> None:
        """Restarts the random stream (the bots reseed per move from their seed and move number)."""
        rng_seed(&self.rng, <uint64_t>(seed & 0xFFFFFFFFFFFFFFFF))

    def reset(self) -> None:
        """Empties the tree (the pool's memory is kept)."""
        self.size = 0
        self.pool_full = False

    def visits_at(self, path) -> int:
        """Visits of the node reached by ``path`` from the root, or -1 if it is not in the tree."""
        cdef int idx = 0, ci
        if self.size == 0:
            return -1
        for a in path:
            ci = self._find_child(idx, a) if self.nodes[idx].first_child >= 0 else -1
            if ci < 0:
                return -1
            idx = ci
        return self.nodes[idx].visits

    def root_children(self) -> list:
        """``[(action, visits, wins), ...]`` of the root's children in the tree (block order)."""
        if self.size == 0 or self.nodes[0].first_child < 0:
            return []
        cdef Node* ch = &self.nodes[self.nodes[0].first_child]
        return [(ch[i].action, ch[i].visits, ch[i].wins) for i in range(self.nodes[0].n_open)]

    @property
    def n_nodes(self) -> int:
        """Nodes in the pool (expand=one counts whole child blocks, opened or not)."""
        return self.size

    @property
    def root_visits(self) -> int:
        return self.nodes[0].visits if self.size else 0

    @property
    def node_bytes(self) -> int:
        return sizeof(Node)
