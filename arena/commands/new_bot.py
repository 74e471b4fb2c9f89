"""``arena new-bot NAME``: writes a working bot file to start from."""
from __future__ import annotations

import os
from importlib import resources

import click

from arena.errors import ConfigError


def render(name: str, path: str) -> str:
    """The template text for a bot called ``name`` written at ``path``."""
    text = resources.files("arena.output.templates").joinpath("bot.py.txt").read_text()
    return text.replace("{name}", name).replace("{path}", path)


@click.command("new-bot")
@click.argument("name")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def new_bot(name: str, force: bool) -> None:
    """Write NAME.py, a working bot (flat Monte Carlo) that follows the bot contract."""
    path = name if name.endswith(".py") else f"{name}.py"
    stem = os.path.splitext(os.path.basename(path))[0]
    if not stem.isidentifier():
        raise ConfigError(f"bot name {stem!r} must be a Python identifier (letters, digits, underscores)")
    if os.path.exists(path) and not force:
        raise ConfigError(f"{path} already exists; pass --force to overwrite it")
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        raise ConfigError(f"directory {directory!r} does not exist")
    with open(path, "w") as f:
        f.write(render(stem, path))
    click.echo(f"wrote {path}; try: arena match nim {path} random --games 10 --seed 1")
