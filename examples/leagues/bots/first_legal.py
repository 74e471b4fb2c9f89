"""A submitted bot is a Python file with a class Bot (docs/contracts.md): this one always plays the first legal move."""


class Bot:
    def __init__(self, game, seat, seed):
        self.seat = seat

    def step(self, state, limit):
        return state.legal_actions()[0]
