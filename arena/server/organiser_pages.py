"""The organisers' pages (:data:`arena.server.guards.organiser`: 404 to anyone else): /admin (the accounts, the
submissions, identical and near-identical bots, the pairs `arena audit` flags, the organisers' own actions, the
course's final), a submission's files, and the actions (revoke, release, withdraw, start the final)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from arena.errors import ConfigError
from arena.server import finals, guards, similarity
from arena.server.forms import form
from arena.server.rendering import not_found, page, row_id
from arena.server.site import Site
from arena.server.viewers import Viewer
from leaderboards import accounts as acc
from leaderboards.store import Store

ADMIN_ROWS = 500
"""Submissions and organiser actions listed on /admin (the newest)."""


@dataclass(frozen=True)
class SourceFile:
    """One file of a submission as the organiser's source view lists it."""

    path: str
    size: int
    text: str | None
    """Its text; None for a binary file (NUL bytes, or not UTF-8), which is listed but never printed."""
    main: bool
    """The file the author wrote the bot in: the entry file, or a COMP424 checkout's agent file."""


def source_files(snap: Any) -> list[SourceFile]:
    """A submission's files, the main one first, then the other text files, then the binary ones (by path)."""
    from arena.comp424_names import ENTRY as COMP424_ENTRY  # start-up: only on a comp424 league's page
    main = snap.entry
    if main == COMP424_ENTRY:  # arena's own entry: the student's agent is the file to read
        py = sorted(p for p in snap.files if p.endswith(".py") and p != COMP424_ENTRY)
        main = next((p for p in ("agents/student_agent.py", "student_agent.py") if p in snap.files),
                    next((p for p in py if b"register_agent(" in snap.files[p]), main))
    out = []
    for path, data in snap.files.items():
        try:
            text: str | None = data.decode("utf-8") if b"\0" not in data else None
        except UnicodeDecodeError:
            text = None
        out.append(SourceFile(path, len(data), text, path == main))
    return sorted(out, key=lambda f: (not f.main, f.text is None, f.path))



@guards.threaded
@guards.organiser
def admin_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    lg = store.find_league(site.config.name)
    people = acc.accounts(store, lg.id)
    names = {a.id: a.name for a in people}
    subs = acc.submissions(store, lg.id, limit=ADMIN_ROWS)  # (what it lists; the counts are the store's)
    counts = acc.submission_counts(store, lg.id)
    bots = store.bots(lg.id, source=False)  # (a row per version, no files: arena.server.similarity)
    current = [b for b in bots if b.status != "retired" and b.origin == "submit"]
    identical = similarity.identical(store, lg.id, bots)
    near = similarity.near_duplicates(store, current, site.near)
    return page("admin.html", v, site, problems=site.problems(), accounts=people, counts=counts, subs=subs[:500],
                names=names,
                identical={k: x for k, x in identical.items() if x}, near=near,
                probation=[b for b in bots if b.status == "probation"],
                actions=acc.actions(store, lg.id, limit=ADMIN_ROWS),
                audit=site.audits.pairs_to_look_at(store, lg.id), final=finals.final_of(store, lg.name),
                final_formats=finals.FORMATS, ladder_games=site.config.games)


@guards.threaded
@guards.organiser
def admin_submission(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    sid = row_id(request.path_params["sid"])
    sub = acc.submission(store, sid) if sid is not None else None
    if sub is None or sub.league_id != site.league_id(store):
        return not_found(v, site)
    files = source_files(acc.submission_snapshot(store, sub.id))
    owner = acc.account(store, sub.account_id)
    return page("admin_submission.html", v, site, sub=sub, files=files, owner=owner.name if owner else "?")


@form
@guards.organiser
def admin_action(request: Request, site: Site, store: Store, v: Viewer, fields: dict[str, Any]) -> Response:
    assert v.account is not None
    lg = store.find_league(site.config.name)
    what, target = request.path_params["action"], fields.get("target", "")
    if what == "revoke":
        a = acc.account_named(store, lg.id, target)
        if a is None:
            return not_found(v, site)
        if a.id == v.account.id:  # (an organiser locking themself out: done with `arena accounts revoke`)
            return page("message.html", v, site, 400, title="Not revoked",
                        message="You cannot revoke your own account here.")
        if fields.get("confirm") != "yes":  # a step of its own: one click on the list revokes nobody
            return page("admin_confirm.html", v, site, target=a.name)
        acc.revoke(store, a.id)
    elif what == "release":
        bot = store.current_bot(lg.id, target)
        if bot is None or not store.release_bot(bot.id):
            return not_found(v, site)
    elif what == "withdraw":
        sid = row_id(target)
        sub = acc.submission(store, sid) if sid is not None else None
        if sub is None or sub.league_id != lg.id:
            return not_found(v, site)
        if sub.bot_id is not None:
            store.retire_bot(sub.bot_id, f"withdrawn by {v.account.name}")
        acc.finish(store, sub.id, "withdrawn", reason=f"withdrawn by {v.account.name}")
    elif what == "final":  # the course's final (arena.server.finals): the ladder's loop plays it
        target = fields.get("format", "")
        try:
            finals.start(store, site.config, site.db.resolve(), target,
                         [g.strip() for g in fields.get("games", "").splitlines() if g.strip()],
                         fields.get("games_per_pairing", "2"))
        except ConfigError as exc:
            return page("message.html", v, site, 400, title="No final", message=str(exc))
    else:
        return not_found(v, site)
    acc.record_action(store, lg.id, v.account.name, what, target)
    site.entered.set()
    return RedirectResponse("/admin", 303)
