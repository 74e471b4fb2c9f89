"""Raises while being imported."""
raise ImportError("this bot needs a module that is not installed: tensorflow_secret_sauce")


class Bot:
    pass
