"""Returns something that is not an action id (which, from mode.txt beside this file)."""
import os

ANSWERS = {
    "string": lambda: "1",
    "float": lambda: 1.0,
    "nan": lambda: float("nan"),
    "huge": lambda: 10 ** 5000,
    "negative": lambda: -1,
    "out_of_range": lambda: 2 ** 40,
    "nested": lambda: [[[[[[[[[[1]]]]]]]]]],
    "none": lambda: None,
    "bool": lambda: True,
}


class Bot:
    def __init__(self, game, seat, seed):
        with open(os.path.join(os.path.dirname(__file__), "mode.txt")) as f:
            self.mode = f.read().strip()

    def step(self, state, limit):
        return ANSWERS[self.mode]()
