"""How a COMP424 agent is named where arena meets it: the ``comp424:PATH[@agent]`` argument, the entry file arena
writes into its snapshot, the files that mark a course checkout, and what a stored agent is listed as.

A leaf module (names only, no agent code), so the snapshot reader and the store can recognise an agent without
importing :mod:`arena.adapters.comp424`, which builds agents and itself reads snapshots.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class Named(Protocol):
    """What :func:`listed_as` reads of a bot snapshot (an :class:`arena.snapshot.Snapshot`): a structural
    type, so this leaf does not import the snapshot module, which imports it."""

    @property
    def entry(self) -> str: ...

    @property
    def name(self) -> str: ...

PREFIX = "comp424:"
"""A bot argument ``comp424:PATH`` (or ``comp424:PATH@agent_name``) is a COMP424 folder."""
ENTRY = "_arena_comp424_bot.py"
"""The entry file arena adds to the agent's snapshot."""
COURSE_FILES = ("agents/student_agent.py", "student_agent.py")
"""A folder holding one of these (relative paths) is a COMP424 checkout or hand-in, not an arena bot folder."""


def is_agent_arg(bot: object) -> bool:
    """True for a bot argument ``comp424:PATH``."""
    return isinstance(bot, str) and bot.startswith(PREFIX)


def is_course_folder(files: Iterable[str]) -> bool:
    """Whether a folder with these relative file paths is a COMP424 checkout or hand-in (recognised where one
    is given as an arena bot by mistake, so the error says how to play it)."""
    return any(name in COURSE_FILES for name in files)


def listed_as(snapshot: Named) -> str:
    """What a stored file bot is listed as ("file or spec"): its entry file, or for a COMP424 agent the argument
    that names it (``comp424:FOLDER`` or ``comp424:FOLDER@agent``), not the entry file arena wrote."""
    if snapshot.entry == ENTRY and is_agent_arg(snapshot.name):
        return snapshot.name
    return snapshot.entry
