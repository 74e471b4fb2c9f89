"""Byte-identical bots: a submission or league-file bot whose files are another bot's.

A course league's first question about a new entry is whether it is someone else's file. Two bots are twins when
their snapshots (:mod:`arena.submissions.snapshot`) hold the same bytes: the same snapshot digest, or the same file
contents under other file names (``alice.py`` and ``bob.py`` with one text have different digests, since a digest covers
the names). Flagged when the bot enters (``arena submit``, the league run's sync of its file), never refused:
two names for one file can be intended.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from arena.submissions.snapshot import Snapshot, files_digest
from arena.text import shown
from leaderboards.store import Bot


def contents(snapshot: Snapshot) -> str:
    """A fingerprint of the snapshot's file contents, whatever the files are called
    (:func:`arena.submissions.snapshot.files_digest`)."""
    return files_digest(snapshot)


def twins(bot: Bot, others: Iterable[Bot], snapshot: Callable[[int], Snapshot]) -> list[Bot]:
    """The bots of other names among ``others`` (retired versions included) with ``bot``'s bytes;
    ``snapshot(bot_id)`` reads a file bot's snapshot (:meth:`leaderboards.store.Store.snapshot`)."""
    if bot.kind != "file":
        return []
    candidates = [b for b in others if b.kind == "file" and b.name != bot.name]
    if not candidates:
        return []
    mine = contents(snapshot(bot.id))
    return [b for b in candidates if b.content_hash == bot.content_hash or contents(snapshot(b.id)) == mine]


def warning(bot: Bot, same: list[Bot]) -> str:
    """One line naming the bot, its twins and the digest (names shown literally)."""
    names = ", ".join(shown(b.label) + (" (retired)" if b.status == "retired" else "") for b in same)
    return f"arena: warning: bot {shown(bot.label)} is byte-identical to {names} (the same files)"
