"""Predicts the next chance outcome by repeating the referee's own derivation from everything a bot gets.

It knows the game (its ``seed`` parameter included), its own seed, the state and the history, and it
imports the referee's code (``arena.play.sample_chance``, ``arena.chance``). Every derivation it can
build from that is a candidate; it keeps the candidate that reproduces the chance outcomes seen so far
and predicts, after its own move, the chance node that follows. After REPORT predictions it raises with
them (``PREDICTIONS [[history index, predicted outcome], ...]``): the crash report is how the test
learns what it predicted, and scores it against the recorded history.
"""
import json
import random

from arena.referee.loop import sample_chance

try:
    from arena import chance as referee_chance
except ImportError:  # an arena without keyed chance
    referee_chance = None

REPORT = {"sorry": 16, "nim": 5}


class Bot:
    def __init__(self, game, seat, seed):
        self.game, self.seat, self.seed = game, seat, seed
        self.public_seed = int(game.param("seed"))
        self.report = REPORT.get(str(game).split("(")[0], 5)
        self.log = []

    def inform(self, action):  # a bot is told every other action; the history carries them as well
        pass

    def candidates(self):
        """Every chance stream the referee's code offers from what this bot knows."""
        s, own = self.public_seed, self.seed
        makers = [lambda: random.Random(s), lambda: random.Random(own)]  # the pre-fix referee: Random(seed)
        if referee_chance is not None:
            makers += [lambda: referee_chance.chance_rng(s),  # the referee's own function, without a key
                       lambda: referee_chance.chance_rng(s, own.to_bytes(32, "big")),
                       lambda: referee_chance.chance_rng(s, bytes(32)),
                       lambda: referee_chance.chance_rng(own)]
        return makers

    def replay(self, history):
        """The candidate stream that reproduces the most chance outcomes of ``history``, advanced past them."""
        best = None
        for make in self.candidates():
            rng, state, hits = make(), self.game.new_initial_state(), 0
            for action in history:
                if state.is_chance_node():
                    hits += sample_chance(state, rng) == action
                state.apply_action(action)
            if best is None or hits > best[0]:
                best = (hits, rng)
        return best[1]

    def step(self, state, limit):
        if len(self.log) >= self.report:
            raise RuntimeError("PREDICTIONS " + json.dumps(self.log))
        history = state.history()
        rng = self.replay(history)
        action = state.legal_actions()[0]
        after = state.clone()
        after.apply_action(action)
        if not after.is_terminal() and after.is_chance_node():
            self.log.append([len(history) + 1, sample_chance(after, rng)])
        return action
