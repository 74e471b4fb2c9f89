"""Does not even parse."""


class Bot:
    def __init__(self, game, seat, seed)
        pass
