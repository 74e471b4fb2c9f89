"""The ``arena`` command line. Each command lives in its own module and is imported only when used.

Exit status: 0 success, 2 usage errors (bad spec, bad option, bad config, missing file), 1 anything
else; errors are one line on stderr that says what to do.
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from arena.errors import ArenaError, ConfigError
from arena.text import shown  # messages quote names and paths from the user's files: shown literally
from games.errors import GameSpecError

# command name -> "module:attribute" of a click.Command. Keep this list sorted by how often it is used.
COMMANDS: dict[str, str] = {
    "demo": "arena.commands.demo:demo",
    "match": "arena.commands.match:match",
    "league": "arena.commands.league:league",
    "leaderboard": "arena.commands.leaderboard:leaderboard",
    "bracket": "arena.commands.bracket:bracket",
    "final": "arena.commands.final:final",
    "submit": "arena.commands.submit:submit",
    "replay": "arena.commands.replay:replay",
    "tui": "arena.commands.tui:tui",
    "export": "arena.commands.export:export",
    "report": "arena.commands.report:report",
    "audit": "arena.commands.audit:audit",
    "games": "arena.commands.games:games_command",
    "bots": "arena.commands.bots:bots_command",
    "new-bot": "arena.commands.new_bot:new_bot",
    "sandbox": "arena.commands.sandbox:sandbox",
    "bench": "arena.commands.bench:bench",
    "experiment": "arena.commands.experiment:experiment",
    "serve": "arena.commands.serve:serve",
    "accounts": "arena.commands.accounts:accounts",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use (keeps ``arena --help`` and startup fast)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self._load(name) is not None]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._load(name)

    @staticmethod
    def _load(name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("arena.commands"):
                return None  # not built yet
            raise


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="arena")
def cli() -> None:
    """arena: compiled games, Monte Carlo reference bots, sandboxed matches and TrueSkill leagues."""


def _usage_exit(message: str) -> None:
    click.echo(f"arena: error: {shown(message)}", err=True)
    sys.exit(2)


def main(argv: list[str] | None = None) -> Any:
    """Entry point of the ``arena`` console script."""
    try:
        return cli.main(args=argv, prog_name="arena", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        sys.exit(2)
    except click.UsageError as exc:
        hint = f" (see 'arena {exc.ctx.info_name} --help')" if exc.ctx and exc.ctx.info_name != "arena" else \
            " (see 'arena --help')"
        _usage_exit(exc.format_message().splitlines()[0] + hint)
    except click.exceptions.Abort:
        click.echo("arena: aborted", err=True)
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except (GameSpecError, ConfigError, FileNotFoundError) as exc:  # our usage errors only: any other ValueError
        _usage_exit(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)  # is a bug, reported as one
    except KeyboardInterrupt:
        click.echo("arena: interrupted", err=True)
        sys.exit(130)
    except ArenaError as exc:
        click.echo(f"arena: {shown(exc)}", err=True)
        sys.exit(1)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback, unless asked for
        if os.environ.get("ARENA_DEBUG"):
            raise
        click.echo(f"arena: internal error: {type(exc).__name__}: {shown(str(exc).splitlines()[0] if str(exc) else '')}"
                   " (set ARENA_DEBUG=1 for the traceback and please report it)", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
