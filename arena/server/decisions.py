"""What an organiser decided, as a student's upload meets it: files an organiser withdrew stay withdrawn.

A withdrawal is kept against the files' contents (``files_hash``, whatever the files are called): the same files
uploaded again are refused at upload (HTTP 409, nothing queued), and an upload already waiting when its twin was
withdrawn is refused when its validation ends. There is no reinstatement: the student uploads a changed bot,
which is a new version from scratch (docs/server.md)."""
from __future__ import annotations

from leaderboards import accounts as acc


def withdrawn_line(withdrawn: acc.Submission) -> str:
    """Why an upload of files an organiser withdrew is refused."""
    return (f"these are the files of your submission #{withdrawn.id}, which an organiser withdrew; a withdrawn "
            "version stays withdrawn: upload a changed bot (or ask the organisers)")
