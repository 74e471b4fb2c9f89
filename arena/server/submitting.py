"""A student's upload, from either door (the submit page's form, the API): the checks every upload passes (the
deadline, the hourly limit, size and zip rules, an organiser's withdrawal), then the validator's queue."""
from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from typing import Any

from arena.league.config import TOURNAMENTS
from arena.server.decisions import withdrawn_line
from arena.server.rendering import revoked_line, when
from arena.server.site import Site
from arena.server.uploads import TooBig, UploadError, read_upload
from arena.snapshot import files_digest
from arena.text import shown
from arena.tournament.progress import frozen_field
from leaderboards import accounts as acc
from leaderboards import teams as tm
from leaderboards.store import Store


def queue_upload(site: Site, store: Store, account: acc.Account, filename: str, data: bytes
                 ) -> tuple[int, dict[str, Any]]:
    """The checks every upload passes (deadline, rate, size and zip rules), then the queue: (status, JSON). The
    upload is for the account's side (its team's bot, or its own): the hourly limit, withdrawn files and identical
    uploads are the side's (leaderboards.teams)."""
    now = time.time()
    closed = closed_line(site, store, account.league_id)
    if closed is not None:
        return 403, {"error": closed}
    side = tm.side_of(store, account)
    if len(tm.side_submitted_since(store, account.league_id, side, now - 3600)) >= \
            site.config.max_submissions_per_hour:
        return 429, over_the_rate(site, store, side, now)
    try:
        snapshot = read_upload(filename, data, site.max_bytes, site.config.upload_format)
    except UploadError as exc:
        return (413 if isinstance(exc, TooBig) else 400), {"error": str(exc)}
    withdrawn = tm.side_withdrawn_twin(store, account.league_id, side, files_digest(snapshot))
    if withdrawn is not None:  # an organiser's withdrawal holds: never queued (arena.server.decisions)
        return 409, {"error": withdrawn_line(withdrawn)}
    with site.queueing:  # counted again with the row added under the same lock (the check above is the cheap one)
        if len(tm.side_submitted_since(store, account.league_id, side, now - 3600)) >= \
                site.config.max_submissions_per_hour:
            return 429, over_the_rate(site, store, side, now)
        same = tm.side_same_upload(store, account.league_id, side, snapshot.digest)
        sid = acc.add_submission(store, account.league_id, account.id, side.name, shown(filename)[:200],
                                 snapshot)
    if not sid:  # revoked while the upload was on its way
        gone = acc.account(store, account.id)
        return 403, {"error": revoked_line(gone) if gone is not None else "the account no longer exists"}
    site.wake()
    if same is None:
        return 202, {"id": sid, "status": "queued"}
    return 202, {"id": sid, "status": "queued", "identical_to": same.id, "note": identical_line(store, same)}


def identical_line(store: Store, same: acc.Submission) -> str:
    """Says that an upload has the very files of an earlier one of the account's side, and what became of it."""
    bot = store.bot(same.bot_id) if same.bot_id else None
    became = f"accepted as version {bot.version}" if same.status == "accepted" and bot else same.status
    return f"identical to your submission #{same.id} ({became}): the same files, validated again"


def over_the_rate(site: Site, store: Store, side: tm.Side, now: float) -> dict[str, Any]:
    """The 429's document: its line (the limit, and when the oldest upload of the last hour leaves the window)
    and ``retry_after``, the seconds until then (also the answer's ``Retry-After``). A team shares one limit."""
    limit = site.config.max_submissions_per_hour
    times = tm.side_submitted_since(store, side.members[0].league_id, side, now - 3600)
    after = times[len(times) - limit] + 3600 if len(times) >= limit else now
    clock = datetime.fromtimestamp(after, UTC).strftime("%H:%M:%S")
    wait = max(1, round((after - now) / 60))
    who = f" for your team {shown(side.name)}" if side.is_team else ""
    return {"error": f"at most {limit} submissions an hour{who}; try again after {clock} UTC (in {wait} min)",
            "retry_after": max(1, math.ceil(after - now))}




def closed_line(site: Site, store: Store | None, league_id: int | None) -> str | None:
    """Why no upload is taken now, or None: the deadline passed, or the served league is a tournament whose field
    was fixed when it started (a bot entered since would play no game). Without a store, the deadline only."""
    deadline = site.config.deadline
    if deadline is not None and time.time() > deadline:
        return f"submissions closed at the deadline {when(deadline)}"
    return started_line(site.config.format, store, league_id) if store is not None and league_id is not None else None


def started_line(league_format: str, store: Store, league_id: int) -> str | None:
    """Why no bot can enter a tournament league whose field is fixed (it started), or None: the upload's refusal,
    and the validator's for an upload it took before the start and judged after it."""
    if league_format in TOURNAMENTS and frozen_field(store, league_id) is not None:
        return (f"submissions closed: this league is a {league_format.replace('_', ' ')} tournament that has "
                "started, and its field was fixed then (a bot entered now would play no game)")
    return None


def submit_values(site: Site, message: str = "", store: Store | None = None, league_id: int | None = None
                  ) -> dict[str, Any]:
    """What the submit page says: the league's games, limits and upload format, and why uploads are closed, if
    they are (:func:`closed_line`)."""
    closed = closed_line(site, store, league_id)
    return {"message": "" if message == closed else message, "games": site.config.games,  # (said once)
            "limits": site.config.limits, "deadline": site.config.deadline, "closed": closed,
            "comp424": site.config.upload_format == "comp424"}


def submission_document(store: Store, sub: acc.Submission) -> dict[str, Any]:
    """``GET /api/submissions/ID``: ``version`` is the bot version it became (None until accepted)."""
    return {"id": sub.id, "bot": sub.bot_name, "version": store.bot(sub.bot_id).version if sub.bot_id else None,
            "status": sub.status, "reason": sub.reason, "detail": sub.detail}


