"""What one pass of the league runner did (:func:`arena.league.runner.run_league`, ``arena serve``'s passes):
filled in by the runner and its writer as the games are stored, read by the command's report and the progress
note."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class RunSummary:
    """What one ``league run`` did."""

    league: str
    database: Path
    scheduled: int = 0
    """Fixtures in the whole schedule."""
    already: int = 0
    """Fixtures stored by earlier runs."""
    played: int = 0
    skipped: int = 0
    """Fixtures not played because a bot is on probation."""
    errors: list[str] = field(default_factory=list)
    """Games the referee could not play (arena bugs, not bot failures); they are retried on the next run."""
    overloaded: list[str] = field(default_factory=list)
    """Games abandoned because the machine starved a bot of CPU (never a time loss); retried on the next run."""
    elapsed: float = 0.0
    probation: list[str] = field(default_factory=list)
    interrupted: str | None = None
    """``SIGINT`` or ``SIGTERM`` when the run was stopped by that signal (the games in flight were abandoned)."""
    abandoned: int = 0
    """Games in flight when the run was stopped: not stored, not counted, played by the next run."""
    in_flight: int = 0
    """Games being played right now (kept live while the run goes: the progress note the dashboard reads)."""
    duplicates: list[str] = field(default_factory=list)
    """One line per bot that entered in this run byte-identical to a bot of another name
    (:mod:`arena.submissions.duplicates`)."""
    writer_cpu: float = 0.0
    """CPU seconds the runner spent storing games and folding ratings (part of its own CPU; ``arena bench
    league``)."""
    waiting: int = 0
    """Scheduled games of bots that entered while the run went on (``arena submit``): a run plays the schedule it
    planned at its start, so these wait for the next run."""
    yielded: bool = False
    """The run stopped starting games because a bot entered (``arena serve``'s passes): the next one plans them."""
