"""Answers (or fails) with a value the host must not choke on while serialising it (the test appends its
``MODE = "..."`` to a copy of this file): each is this bot's own illegal answer or crash, never a failure of
the host (issue 12 §7)."""
import sys


def deep_list():
    value = 1
    for _ in range(200_000):
        value = [value]
    return value


def deep_dict():
    value = {}
    for _ in range(200_000):
        value = {"k": value}
    return value


class IndexRaises:
    def __index__(self):
        raise ValueError("no index for you")


class IndexExits:
    def __index__(self):
        sys.exit(3)


class ReprRaises:
    def __repr__(self):
        raise RuntimeError("no repr for you")


class ReprNotStr:
    def __repr__(self):
        return 42


class IntComparesBadly(int):
    """A legal action (its int value) whose comparisons and repr raise."""

    def __lt__(self, other):
        raise ValueError("no comparison")

    __le__ = __gt__ = __ge__ = __eq__ = __lt__

    def __repr__(self):
        raise ValueError("no repr")

    __hash__ = int.__hash__


class StrRaises(Exception):
    def __str__(self):
        raise RuntimeError("no str for you")


ANSWERS = {
    "deep_list": deep_list,
    "deep_dict": deep_dict,
    "huge_in_list": lambda: [10 ** 5000],
    "index_raises": IndexRaises,
    "index_exits": IndexExits,
    "repr_raises": ReprRaises,
    "repr_not_str": ReprNotStr,
    "int_subclass": lambda: IntComparesBadly(1),
}


class Bot:
    def __init__(self, game, seat, seed):
        self.mode = MODE  # noqa: F821 - appended by the test

    def __getattr__(self, name):  # looked up by the host for the optional inform()
        if name == "inform" and MODE == "getattr_raises":  # noqa: F821
            raise RuntimeError("no attributes for you")
        raise AttributeError(name)

    def step(self, state, limit):
        if self.mode == "exception_str_raises":
            raise StrRaises()
        return ANSWERS[self.mode]()
