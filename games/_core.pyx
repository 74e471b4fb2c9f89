# The Python-level State API, written once for every compiled game (OpenSpiel's names).
# Games override only the c_* methods of CoreState (see _core.pxd) and a few Python hooks:
#   _action_to_string(a), _string_to_action(s), _observation(), _board_string(), _state_key().
import json

from libc.stdlib cimport malloc, free
from games._rng cimport Rng, rng_seed, rng_below, rng_uniform

from games.errors import IllegalActionError, InvalidActionError



def _rebuild(spec, history):
    """Rebuilds a state from its game spec and history (used by pickling and replays)."""
    from games.registry import load
    state = load(spec).new_initial_state()
    for action in history:
        state.apply_action(action)
    return state


cdef class CoreState:
    """One position of a game. Mutable; ``clone()`` gives an independent copy."""

    def __cinit__(self, *args, **kwargs):
        self._history = []
        self.n_players = 2
        self.n_actions = 1

    # ----- C-level defaults (a game overrides what it needs) -------------------------------------
    cdef int c_current_player(self) noexcept:
        return TERMINAL

    cdef int c_legal_actions(self, int* out) noexcept:
        return 0

    cdef void c_apply(self, int action) noexcept:
        pass

    cdef void c_returns(self, double* out) noexcept:
        cdef int i
        for i in range(self.n_players):
            out[i] = 0.0

    cdef int c_chance_outcomes(self, int* actions, double* probs) noexcept:
        return 0

    cdef int c_sample_chance(self, Rng* rng) noexcept:
        cdef int actions[MAX_CHANCE]
        cdef double probs[MAX_CHANCE]
        cdef int n = self.c_chance_outcomes(actions, probs)
        cdef double r = rng_uniform(rng), acc = 0.0
        cdef int i
        for i in range(n):
            acc += probs[i]
            if r < acc:
                return actions[i]
        return actions[n - 1]

    cdef CoreState c_clone(self):
        raise NotImplementedError

    cdef void c_copy_from(self, CoreState other) noexcept:
        pass

    cdef int c_random_action(self, Rng* rng) except -1:
        cdef int* buf = <int*>malloc(self.n_actions * sizeof(int))
        if buf == NULL:
            raise MemoryError()
        cdef int n = self.c_legal_actions(buf)
        cdef int a = buf[rng_below(rng, n)]
        free(buf)
        return a

    cdef int c_playout(self, Rng* rng) except -1:
        # Generic loop; games override it with a tight one.
        cdef int* buf = <int*>malloc(self.n_actions * sizeof(int))
        cdef int n, p, moves = 0
        if buf == NULL:
            raise MemoryError()
        while True:
            p = self.c_current_player()
            if p == TERMINAL:
                break
            if p == CHANCE:
                self.c_apply(self.c_sample_chance(rng))
            else:
                n = self.c_legal_actions(buf)
                self.c_apply(buf[rng_below(rng, n)])
            moves += 1
        free(buf)
        return moves

    cdef int c_heuristic_action(self, Rng* rng) noexcept:
        return -1

    cdef int c_chance_sequence(self, Rng* rng, int* out, int n) noexcept:
        return 0

    # ----- Python API ------------------------------------------------------------------------------
    def current_player(self) -> int:
        """The seat to move, ``CHANCE`` (-1) at a chance node, or ``TERMINAL`` (-4)."""
        return self.c_current_player()

    def is_terminal(self) -> bool:
        return self.c_current_player() == TERMINAL

    def is_chance_node(self) -> bool:
        return self.c_current_player() == CHANCE

    def is_simultaneous_node(self) -> bool:
        return False

    def num_players(self) -> int:
        return self.n_players

    def legal_actions(self, player=None) -> list:
        """The legal actions in ascending order; the chance outcomes at a chance node; [] when over."""
        cdef int* buf = <int*>malloc(self.n_actions * sizeof(int))
        cdef int n, i
        if buf == NULL:
            raise MemoryError()
        try:
            if player is not None and player != self.c_current_player():
                return []
            n = self.c_legal_actions(buf)
            return [buf[i] for i in range(n)]
        finally:
            free(buf)

    def legal_actions_mask(self, player=None) -> list:
        mask = [0] * self.n_actions
        for a in self.legal_actions(player):
            mask[a] = 1
        return mask

    def chance_outcomes(self) -> list:
        """``[(action, probability), ...]`` at a chance node, else ``[]``."""
        cdef int actions[MAX_CHANCE]
        cdef double probs[MAX_CHANCE]
        cdef int n, i
        if self.c_current_player() != CHANCE:
            return []
        n = self.c_chance_outcomes(actions, probs)
        return [(actions[i], probs[i]) for i in range(n)]

    def apply_action(self, action) -> None:
        """Applies a legal action (or chance outcome).

        Raises:
            InvalidActionError: not an integer action id.
            IllegalActionError: not legal here; the state is unchanged.
        """
        cdef long long a
        if isinstance(action, bool) or not hasattr(action, "__index__"):
            raise InvalidActionError(f"an action must be an int, not {action!r}")
        a = action.__index__()
        if self.c_current_player() == TERMINAL:
            raise IllegalActionError(f"action {a} is not legal: the game is over")
        if a < 0 or a >= self.n_actions or a not in self.legal_actions():
            legal = self.legal_actions()
            shown = ", ".join(map(str, legal[:20])) + (", ..." if len(legal) > 20 else "")
            raise IllegalActionError(f"action {a} is not legal here; legal actions: {shown}")
        self.c_apply(<int>a)
        self._history.append(<int>a)

    def apply_actions(self, actions) -> None:
        for a in actions:
            self.apply_action(a)

    def child(self, action):
        """A clone with ``action`` applied."""
        s = self.clone()
        s.apply_action(action)
        return s

    def returns(self) -> list:
        """One float per seat: the final result at a terminal state, zeros before."""
        cdef double out[MAX_PLAYERS]
        cdef int i
        if self.c_current_player() != TERMINAL:
            return [0.0] * self.n_players
        self.c_returns(out)
        return [out[i] for i in range(self.n_players)]

    def player_return(self, int player) -> float:
        return self.returns()[player]

    def clone(self):
        """An independent copy (history included)."""
        cdef CoreState c = self.c_clone()
        c._history = list(self._history)
        return c

    def history(self) -> list:
        """Every action applied so far, chance outcomes included."""
        return list(self._history)

    def move_number(self) -> int:
        return len(self._history)

    def history_since(self, Py_ssize_t start) -> list:
        """``history()[start:]`` without copying the rest: the referee sends a bot only the actions it has not
        seen, and a move's cost must not grow with the game's length."""
        return self._history[start:]

    def action_to_string(self, *args) -> str:
        """A readable name for an action (``action_to_string(a)`` or OpenSpiel's ``(player, a)``)."""
        action = args[-1]
        if isinstance(action, bool) or not hasattr(action, "__index__"):
            raise InvalidActionError(f"an action must be an int, not {action!r}")
        a = action.__index__()
        if a < 0 or a >= self.n_actions:
            raise InvalidActionError(f"{a} is not an action id of {self.game} (0..{self.n_actions - 1})")
        return self._action_to_string(a)

    def string_to_action(self, text) -> int:
        """The inverse of :meth:`action_to_string` in this state.

        Raises:
            InvalidActionError: the string names no action.
        """
        return self._string_to_action(str(text).strip())

    def observation(self, player=None) -> dict:
        """A JSON-serialisable dict of everything public (docs/contracts.md lists the fields), plus ``current_player``."""
        obs = self._observation()
        obs["current_player"] = self.c_current_player()
        return obs

    def observation_string(self, player=None) -> str:
        return str(self)

    def random_playout(self, seed) -> int:
        """Plays this state to the end with the compiled random playout; returns the actions applied.

        A benchmark and test hook: the actions are not added to ``history()``.
        """
        cdef Rng rng
        rng_seed(&rng, <unsigned long long>(seed & 0xFFFFFFFFFFFFFFFF))
        return self.c_playout(&rng)

    def __str__(self) -> str:
        return self._board_string()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.game} after {len(self._history)} actions>"

    def __eq__(self, other):
        if not isinstance(other, CoreState) or type(self) is not type(other):
            return NotImplemented
        return str(self.game) == str(other.game) and self._state_key() == other._state_key()

    def __hash__(self):
        raise TypeError("states are mutable and unhashable; hash str(state.game) and state.history() instead")

    def __reduce__(self):
        return (_rebuild, (str(self.game), list(self._history)))

    # ----- hooks a game overrides ------------------------------------------------------------------
    def _action_to_string(self, int action) -> str:
        return str(action)

    def _string_to_action(self, str text) -> int:
        for a in self.legal_actions():
            if self._action_to_string(a) == text:
                return a
        raise InvalidActionError(f"{text!r} names no legal action here")

    def _observation(self) -> dict:
        return {}

    def _board_string(self) -> str:
        return repr(self)

    def _state_key(self):
        return (self.c_current_player(), json.dumps(self._observation(), sort_keys=True))


def playouts(CoreState root, long n, seed=0):
    """Plays ``n`` compiled random playouts from ``root`` (which is left unchanged).

    Returns ``(wins, total_actions)``: per seat, the number of playouts it won (highest return),
    and the total number of actions applied. The benchmark of ``arena bench games`` and a test hook.
    """
    cdef Rng rng
    cdef CoreState scratch = root.c_clone()
    cdef double ret[MAX_PLAYERS]
    cdef long i
    cdef long long total = 0
    cdef int p, best
    wins = [0] * root.n_players
    cdef long[MAX_PLAYERS] w
    for p in range(MAX_PLAYERS):
        w[p] = 0
    rng_seed(&rng, <unsigned long long>(seed & 0xFFFFFFFFFFFFFFFF))
    for i in range(n):
        scratch.c_copy_from(root)
        total += scratch.c_playout(&rng)
        scratch.c_returns(ret)
        best = 0
        for p in range(1, root.n_players):
            if ret[p] > ret[best]:
                best = p
        w[best] += 1
    for p in range(root.n_players):
        wins[p] = w[p]
    return wins, total
