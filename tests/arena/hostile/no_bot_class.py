"""Defines a bot under the wrong name."""


class MyBot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        return state.legal_actions()[0]
