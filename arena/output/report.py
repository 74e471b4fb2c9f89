"""A league's results as static files to hand out (``arena report --league L --out DIR``; docs/report.md).

- ``DIR/index.html``: the leaderboard, with a link to each bot's page and to the replays.
- ``DIR/bots/bot-ID.html``: one page per bot version: its results, head-to-head, every failure with the tail of its
  traceback and the game's id, and its slowest moves (what an instructor sends a student).
- ``DIR/replay.html``: a replay viewer; the games' frames are in ``DIR/data/*.js`` files loaded by ``<script>``
  tags, so everything works from ``file://`` and from any web host, with no server and nothing from a CDN.

The pages render :mod:`arena.output.views`' rows through Jinja2 templates (``arena/output/templates/report_*.html``,
autoescape on: :mod:`arena.output.pages`). Every name, file name and failure detail comes from bots or users' files:
HTML escapes each value by default, JSON inside a script gets :func:`script_json` (no ``</script>`` can end it), and the
viewer sets data with ``textContent`` only (docs/architecture.md, "Untrusted text").
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from markupsafe import Markup

from arena.league.config import stored_limits
from arena.output import brackets, pictures
from arena.output.exports import iso
from arena.output.pages import render
from arena.output.publish import FolderWriter
from arena.output.replays import replay as game_replay
from arena.output.replays import script_json
from arena.output.views import (
    BotFacts,
    GameEntry,
    H2HCell,
    Standing,
    bot_facts,
    head_to_head,
    standings,
)
from leaderboards.audit import LEVEL, league_audit
from leaderboards.store import Store, StoredGame

CHUNK = 100
"""Games per data file of the replay viewer."""
TRACEBACK_LINES = 12
"""Lines of a failure's detail (the tail of the bot's traceback) on its bot page."""


def collect(store: Store, league_id: int, replays: int) -> tuple[dict[int, BotFacts], list[GameEntry],
                                                                   dict[int, dict[str, Any]]]:
    """One pass over a league's games: facts per bot id and the game list (:func:`arena.output.views.bot_facts`), and
    the replays of the newest ``replays`` games (game id -> replay)."""
    shown_replays: dict[int, dict[str, Any]] = {}
    first_replayed = store.count_games(league_id) - replays
    cache: dict[str, Any] = {}
    seen = 0

    def replay(g: StoredGame) -> None:
        nonlocal seen
        seen += 1
        if seen > first_replayed and (drawn := game_replay(g, cache)) is not None:
            shown_replays[g.id] = drawn

    facts, listing = bot_facts(store.iter_games(league_id), replay)
    return facts, listing, shown_replays


# -- pages (arena/output/templates/report_*.html) ----------------------------------------------------------------------
def bot_file(bot_id: int) -> str:
    """A bot page's file, named by the bot's id, never its name (names are untrusted: ../x, /etc/x)."""
    return f"bot-{int(bot_id)}.html"


def index_page(league: str, rows: Sequence[Standing], cells: Sequence[H2HCell], total: int, replayed: int,
               audit: dict[str, Any] | None = None, tournament: brackets.Tournament | None = None) -> str:
    """The leaderboard page; ``audit``: :meth:`leaderboards.audit.Audit.as_json` (the pairs flagged by `arena
    audit`); ``tournament``: a tournament league's bracket or Swiss table and places, shown first."""
    return render("report_index.html", root="", scripts=(), league=league, rows=rows, total=total,
                  replayed=replayed, bot_href=lambda r: f"bots/{bot_file(r.bot_id)}", tournament=tournament,
                  bot_id_href=lambda bot_id: f"bots/{bot_file(bot_id)}",
                  matrix=pictures.matrix_figure(rows, cells),
                  audit=audit or {"flagged": [], "tested": 0, "untested": 0, "level": LEVEL})


def bot_page(league: str, r: Standing, f: BotFacts, cells: Sequence[H2HCell], replayed: set[int],
             figures: Markup) -> str:
    return render("report_bot.html", root="../", scripts=(), league=league, r=r, facts=f,
                  cells=[c for c in cells if c.bot_id == r.bot_id and c.games], slowest=f.slowest,
                  game_href=lambda game_id: f"../replay.html#game={game_id}" if game_id in replayed else "",
                  traceback_lines=TRACEBACK_LINES, figures=figures)


def replay_page(league: str) -> str:
    return render("report_replay.html", root="", scripts=("data/games.js", "replay.js"), league=league)


def write_report(store: Store, league_name: str | None, out: Path, replays: int) -> tuple[int, int]:
    """Writes the report of a league into ``out``; returns (bot pages, replays). Every file is generated first
    and only then moved into ``out`` (:class:`arena.output.publish.FolderWriter`): a failure leaves an earlier report
    whole, files of an earlier report not written again (a bot that is gone) are removed, and nothing else in
    ``out`` is touched or followed."""
    lg = store.find_league(league_name)
    rows = standings(store, lg.id, include_retired=True)
    cells = head_to_head(store, lg.id, rows)
    facts, listing, replay_data = collect(store, lg.id, replays)
    replayed = set(replay_data)
    with FolderWriter(out, ("bots", "data")) as files:
        templates = resources.files("arena.output.templates")
        for name in ("report.css", "replay.js"):
            files.write(name, templates.joinpath(name).read_text(encoding="utf-8"))
        total = store.count_games(lg.id)
        drawn = brackets.tournament(store, lg, bot_href=lambda bot_id: f"bots/{bot_file(bot_id)}")
        files.write("index.html", index_page(lg.name, rows, cells, total, len(replayed),
                                             league_audit(store, lg.id).as_json(), drawn))
        history, limits = pictures.histories(store, lg.id), stored_limits(lg.config)
        for r in rows:
            figures = pictures.bot_figures(history.get(r.bot_id, []), pictures.bot_move_times(store, r.bot_id),
                                           limits.move_time, limits.first_move_time)
            files.write(f"bots/{bot_file(r.bot_id)}",
                        bot_page(lg.name, r, facts.get(r.bot_id, BotFacts()), cells, replayed, figures))
        files.write("replay.html", replay_page(lg.name))
        # the list of games (newest first) and one data file per CHUNK replays: loaded by <script>, never fetch()
        # (the n-th replayed game, oldest first, is in data file n // CHUNK)
        chunk_of = {game_id: n // CHUNK for n, game_id in enumerate(replay_data)}
        games = [{"id": e.id, "game": e.game, "players": e.players, "result": e.result, "finished": iso(e.finished),
                  "chunk": chunk_of.get(e.id)} for e in reversed(listing)]
        files.write("data/games.js",
                    f"window.ARENA_LEAGUE = {script_json(lg.name)};\nwindow.ARENA_GAMES = {script_json(games)};\n")
        chunks: dict[int, dict[str, Any]] = defaultdict(dict)
        for e in reversed(listing):  # (newest first, as the list)
            if e.id in chunk_of:
                chunks[chunk_of[e.id]][str(e.id)] = replay_data[e.id]
        for n, chunk in chunks.items():
            files.write(f"data/replays-{n}.js", f"window.arenaReplays({n}, {script_json(chunk)});\n")
        files.commit()
    return len(rows), len(replayed)
