"""``arena report --league L --out DIR``: a league's results as static files to hand out (docs/report.md).

- ``DIR/index.html``: the leaderboard, with a link to each bot's page and to the replays.
- ``DIR/bots/bot-ID.html``: one page per bot version: its results, head-to-head, every failure with the tail of its
  traceback and the game's id, and its slowest moves (what an instructor sends a student).
- ``DIR/replay.html``: a replay viewer; the games' frames are in ``DIR/data/*.js`` files loaded by ``<script>``
  tags, so everything works from ``file://`` and from any web host, with no server and nothing from a CDN.

Every name, file name and failure detail comes from bots or users' files: HTML gets :func:`h` (shown, then
escaped), JSON inside a script gets :func:`script_json` (no ``</script>`` can end it), and the viewer sets data
with ``textContent`` only (docs/architecture.md, "Untrusted text").
"""
from __future__ import annotations

import functools
import heapq
import html
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import click

import games as games_pkg
from arena.commands.export import iso, last_line
from arena.commands.locate import LEAGUE_HELP, league_store
from arena.errors import ConfigError
from arena.moves import OPENING, Movers, failure_move, failure_where
from arena.publish import FolderWriter
from arena.text import dumps, shown
from leaderboards.standings import head_to_head, standings
from leaderboards.store import Store, StoredGame

CHUNK = 100
"""Games per data file of the replay viewer."""
SLOWEST = 10
"""Slowest moves listed per bot."""
TRACEBACK_LINES = 12
"""Lines of a failure's detail (the tail of the bot's traceback) on its bot page."""


def h(value: object) -> str:
    """Untrusted text for HTML: shown literally (:func:`arena.text.shown`), then HTML-escaped."""
    return html.escape(shown(value), quote=True)


def h_block(value: object) -> str:
    """A block (a traceback, a board) for a ``<pre>``: lines kept, each shown literally, HTML-escaped."""
    return html.escape(shown(value, lines=True), quote=True)


def script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element: ASCII only (so U+2028/U+2029 are escapes, as are all controls) and
    no ``</`` or ``<!--`` that could end the element or open a comment."""
    out = dumps(value)
    return out.replace("</", "<\\/").replace("<!--", "<\\!--").replace("\u2028", "\\u2028").replace("\u2029",
                                                                                                      "\\u2029")


@dataclass
class BotFacts:
    """What a bot's page lists, gathered in one pass over the games."""

    results: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    slowest: list[tuple[float, int, int, float]] = field(default_factory=list)
    """A min-heap of (wall seconds, game id, the bot's move number in that game, cpu seconds)."""


@functools.lru_cache(maxsize=256)
def css_classes(style: str) -> str:
    """The report.css classes of a Rich style string of a game's board: ``fg-red``, ``bg-yellow``, ``b`` (bold),
    ``u`` (underline). Only names this code makes (colour names are Rich's: letters, digits, ``_``); grey (what
    is empty) is left plain, which keeps the data files small."""
    from rich.style import Style  # start-up: rich only when boards are drawn
    parsed = Style.parse(style)
    out = []
    for prefix, colour in (("fg-", parsed.color), ("bg-", parsed.bgcolor)):
        if colour is not None and colour.name.replace("_", "").isalnum() and not colour.name.startswith("grey"):
            out.append(prefix + colour.name)
    if out:
        out += [name for name, on in (("b", parsed.bold), ("u", parsed.underline)) if on]
    elif parsed.underline:
        out.append("u")
    return " ".join(out)


def board_runs(game: Any, state: Any, names: list[str], last: dict[str, Any] | None) -> list[list[str]] | str:
    """The game's own board, as the dashboard draws it (``Game.render_board``: Hex with its coordinates and its
    edges in the players' colours), as runs of [text, css classes] that the viewer sets with ``textContent`` and
    ``className``; plain ``str(state)`` when the game draws no board of its own (or it fails). Spaces join the
    run before them (they look the same in any colour but a background's)."""
    obs = dict(state.observation())
    if last is not None:  # what a replay adds: the board marks what the last move changed (games.board.LAST)
        obs.update(last)
    try:
        drawn = game.render_board(obs, names)
        plain, spans = drawn.plain, drawn.spans
    except Exception:  # noqa: BLE001 - a board that cannot be drawn still shows as text
        return str(state)
    classes = [""] * len(plain)
    for span in spans:  # later spans win, as Rich combines them
        cls = css_classes(str(span.style))
        if cls:
            for k in range(span.start, min(span.end, len(plain))):
                classes[k] = cls
    runs: list[list[str]] = []
    for ch, cls in zip(plain, classes):
        if runs and (cls == runs[-1][1] or (ch == " " and not cls and "bg-" not in runs[-1][1]
                                            and "u" not in runs[-1][1].split())):
            runs[-1][0] += ch
        else:
            runs.append([ch, cls])
    return runs


def frames(g: StoredGame, cache: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The board before the first action and after each one, with who moved, the move and its time (None when
    the game cannot be loaded: a game spec this arena no longer has)."""
    try:
        game = cache[g.game] if g.game in cache else cache.setdefault(g.game, games_pkg.load(g.game))
        state = game.new_initial_state()
        names = [shown(p) for p in g.players]  # a board names its players: shown escaped, like every name
        out = [{"board": board_runs(game, state, names, None), "seat": None, "move": "start", "ms": None}]
        movers = Movers(len(g.info.get("opening", ())))  # one numbering: arena/moves.py
        for i, action in enumerate(g.history):
            seat = state.current_player()
            try:
                move = state.action_to_string(action)
            except Exception:  # noqa: BLE001 - an odd stored action still shows
                move = str(action)
            kind = movers.next(i, seat)
            ms = round(1000 * g.wall_times[kind], 1) if isinstance(kind, int) and kind < len(g.wall_times) else None
            state.apply_action(action)
            last = {"last_action": action, "last_player": seat, "last_move": move}
            out.append({"board": board_runs(game, state, names, last),
                        "seat": seat if isinstance(kind, int) else None, "move": move, "ms": ms,
                        **({"opening": True} if kind == OPENING else {})})
        return out
    except Exception:  # noqa: BLE001 - the report still lists the game, without frames
        return None


def result_text(g: StoredGame) -> str:
    return ", ".join(f"{p} {r:+g}" + ("" if t == "normal" else f" ({t})")
                     for p, r, t in zip(g.players, g.returns, g.terminations))


def collect(store: Store, league_id: int, replays: int) -> tuple[dict[int, BotFacts], list[dict[str, Any]],
                                                                   dict[int, dict[str, Any]]]:
    """One pass over a league's games: facts per bot id, the game list, and the replays of the newest
    ``replays`` games (game id -> replay)."""
    facts: dict[int, BotFacts] = defaultdict(BotFacts)
    listing: list[dict[str, Any]] = []
    shown_replays: dict[int, dict[str, Any]] = {}
    first_replayed = store.count_games(league_id) - replays
    cache: dict[str, Any] = {}
    for i, g in enumerate(store.iter_games(league_id)):
        for seat, bot_id in enumerate(g.seats):
            f = facts[bot_id]
            f.results.append({"id": g.id, "game": g.game, "seat": seat, "return": g.returns[seat] if g.returns else 0,
                              "termination": g.terminations[seat] if g.terminations else "",
                              "opponents": [p for s, p in enumerate(g.players) if s != seat]})
            mine = [k for k, s in enumerate(g.move_seats) if s == seat]
            for n, k in enumerate(mine):
                item = (g.wall_times[k], g.id, n + 1, g.cpu_times[k] if k < len(g.cpu_times) else 0.0)
                if len(f.slowest) < SLOWEST:
                    heapq.heappush(f.slowest, item)
                else:
                    heapq.heappushpop(f.slowest, item)
        for fail in g.failures:
            facts[g.seats[fail["seat"]]].failures.append({"id": g.id, "game": g.game, **fail})
        entry = {"id": g.id, "game": g.game, "players": g.players, "result": result_text(g),
                 "finished": iso(g.finished), "chunk": None}
        if i >= first_replayed:
            replay = frames(g, cache)
            if replay is not None:
                entry["chunk"] = len(shown_replays) // CHUNK
                shown_replays[g.id] = {"id": g.id, "game": g.game, "players": g.players, "returns": g.returns,
                                       "terminations": g.terminations, "result": result_text(g),
                                       "failures": [{"seat": x["seat"], "reason": x["reason"],
                                                     "move": failure_move(x),
                                                     "detail": last_line(x.get("detail", ""))} for x in g.failures],
                                       "frames": replay}
        listing.append(entry)
    return facts, listing, shown_replays


# -- pages ---------------------------------------------------------------------------------------------------------
def page(title: str, body: str, *, root: str = "", scripts: tuple[str, ...] = ()) -> str:
    """A whole HTML page (``title`` already escaped); ``root`` is the way back to DIR from the page."""
    tags = "".join(f'<script src="{root}{s}"></script>' for s in scripts)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{title}</title><link rel="stylesheet" href="{root}report.css"></head>\n'
            f"<body>\n{body}\n{tags}</body></html>\n")


def table(headers: list[str], rows: list[list[str]], *, table_id: str = "") -> str:
    """An HTML table; ``headers`` and cells are HTML already (escape untrusted parts with :func:`h`)."""
    head = "".join(f"<th>{x}</th>" for x in headers)
    body = "\n".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    ident = f' id="{table_id}"' if table_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"


def fails_text(r: dict[str, Any]) -> str:
    return ", ".join(f"{r[k]} {k}" for k in ("timeouts", "crashes", "illegal", "memory", "protocol") if r[k]) or "-"


def game_link(game_id: int, replayed: set[int], root: str) -> str:
    return f'<a href="{root}replay.html#game={game_id}">{game_id}</a>' if game_id in replayed else str(game_id)


def index_page(league: str, rows: list[dict[str, Any]], total: int, replayed: int) -> str:
    lines = []
    for r in rows:
        status = r["status"] + (f": {r['status_reason']}" if r["status_reason"] else "") if r["status"] != "active" \
            else ""
        lines.append([str(r["rank"]), f'<a href="bots/bot-{r["bot_id"]}.html">{h(r["bot"])}</a>', h(r["spec"] or ""),
                      f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['exposed']:.2f}", str(r["games"]),
                      f"{r['wins']}/{r['draws']}/{r['losses']}", h(fails_text(r)), h(status)])
    body = (f"<h1>{h(league)}: leaderboard</h1>\n<p>{total} games. Ranked by &mu; &minus; 3&sigma; (TrueSkill): "
            "&mu; is the rating, &sigma; its uncertainty. "
            f'<a href="replay.html">Replays</a> of the newest {replayed} games.</p>\n'
            + table(["#", "bot", "file or spec", "&mu;", "&sigma;", "&mu;&minus;3&sigma;", "games", "W/D/L",
                     "failures", "status"], lines, table_id="leaderboard"))
    return page(f"{h(league)}: leaderboard", body)


def bot_page(league: str, r: dict[str, Any], f: BotFacts, cells: list[dict[str, Any]], replayed: set[int]) -> str:
    root = "../"
    parts = [f'<p><a href="{root}index.html">&larr; leaderboard of {h(league)}</a></p>',
             f"<h1>{h(r['bot'])}</h1>",
             f"<p>{'built-in bot' if r['kind'] == 'builtin' else 'file'}: <code>{h(r['spec'] or '')}</code>, "
             f"version {r['version']}, status {h(r['status'])}"
             + (f" ({h(r['status_reason'])})" if r["status_reason"] else "") + "</p>",
             "<h2>Results</h2>",
             f"<p>rank {r['rank']}, &mu; {r['mu']:.2f}, &sigma; {r['sigma']:.2f}, &mu;&minus;3&sigma; "
             f"{r['exposed']:.2f}; {r['games']} games: {r['wins']} won, {r['draws']} drawn, {r['losses']} lost; "
             f"failures: {h(fails_text(r))}</p>"]
    mine = [c for c in cells if c["bot"] == r["bot"] and c["games"]]
    parts.append("<h2>Head to head</h2>")
    parts.append(table(["opponent", "games", "won", "drawn", "lost", "score"],
                       [[h(c["opponent"]), str(c["games"]), str(c["wins"]), str(c["draws"]), str(c["losses"]),
                         f"{100 * c['win_rate']:.0f}%"] for c in mine], table_id="h2h")
                 if mine else "<p>No games against the other bots yet.</p>")
    parts.append(f"<h2>Failures ({len(f.failures)})</h2>")
    if f.failures:
        for x in f.failures:
            tail = "\n".join((x.get("detail") or "").splitlines()[-TRACEBACK_LINES:])
            parts.append(f'<div class="failure"><p>game {game_link(x["id"], replayed, root)} ({h(x["game"])}): '
                         f"{h(failure_where(x))}</p>"
                         + (f"<pre>{h_block(tail)}</pre>" if tail else "") + "</div>")
    else:
        parts.append("<p>None.</p>")
    parts.append("<h2>Slowest moves</h2>")
    slow = sorted(f.slowest, reverse=True)
    parts.append(table(["game", "its move", "wall ms", "cpu ms"],
                       [[game_link(gid, replayed, root), str(n), f"{1000 * w:.1f}", f"{1000 * c:.1f}"]
                        for w, gid, n, c in slow], table_id="slowest") if slow else "<p>No moves yet.</p>")
    parts.append(f"<h2>Games ({len(f.results)})</h2>")
    parts.append(table(["game", "spec", "seat", "against", "return", "end"],
                       [[game_link(x["id"], replayed, root), h(x["game"]), str(x["seat"]),
                         h(", ".join(x["opponents"])), f"{x['return']:+g}", h(x["termination"])]
                        for x in f.results], table_id="games"))
    return page(f"{h(r['bot'])} in {h(league)}", "\n".join(parts), root=root)


def replay_page(league: str) -> str:
    body = (f'<p><a href="index.html">&larr; leaderboard of {h(league)}</a></p>\n<h1>Replays</h1>\n'
            '<div id="viewer"><label>game <select id="game-select"></select></label>\n'
            '<h2 id="title"></h2><p id="players"></p><p id="result"></p>\n'
            '<div class="controls"><button id="first">|&lt;</button><button id="prev">&lt;</button>'
            '<button id="next">&gt;</button><button id="last">&gt;|</button> <span id="step"></span></div>\n'
            '<div class="replay"><pre id="board"></pre><ol id="moves"></ol></div>\n'
            '<p id="message"></p></div>')
    return page(f"{h(league)}: replays", body, scripts=("data/games.js", "replay.js"))


def write_report(store: Store, league_name: str | None, out: Path, replays: int) -> tuple[int, int]:
    """Writes the report of a league into ``out``; returns (bot pages, replays). Every file is generated first
    and only then moved into ``out`` (:class:`arena.publish.FolderWriter`): a failure leaves an earlier report
    whole, files of an earlier report not written again (a bot that is gone) are removed, and nothing else in
    ``out`` is touched or followed."""
    lg = store.find_league(league_name)
    rows = standings(store, lg.id, include_retired=True)
    cells = head_to_head(store, lg.id, rows)
    facts, listing, replay_data = collect(store, lg.id, replays)
    replayed = set(replay_data)
    with FolderWriter(out, ("bots", "data")) as files:
        templates = resources.files("arena.templates")
        for name in ("report.css", "replay.js"):
            files.write(name, templates.joinpath(name).read_text(encoding="utf-8"))
        total = store.count_games(lg.id)
        files.write("index.html", index_page(lg.name, rows, total, len(replayed)))
        for r in rows:  # named by the bot's id, never its name (names are untrusted: ../x, /etc/x)
            files.write(f"bots/bot-{int(r['bot_id'])}.html",
                        bot_page(lg.name, r, facts.get(r["bot_id"], BotFacts()), cells, replayed))
        files.write("replay.html", replay_page(lg.name))
        # the list of games (newest first) and one data file per CHUNK replays: loaded by <script>, never fetch()
        listing.reverse()
        files.write("data/games.js",
                    f"window.ARENA_LEAGUE = {script_json(lg.name)};\nwindow.ARENA_GAMES = {script_json(listing)};\n")
        chunks: dict[int, dict[str, Any]] = defaultdict(dict)
        for entry in listing:
            if entry["chunk"] is not None:
                chunks[entry["chunk"]][str(entry["id"])] = replay_data[entry["id"]]
        for n, games in chunks.items():
            files.write(f"data/replays-{n}.js", f"window.arenaReplays({n}, {script_json(games)});\n")
        files.commit()
    return len(rows), len(replayed)


@click.command("report")
@click.option("--league", "league", metavar="NAME|FILE", default=None, help=LEAGUE_HELP)
@click.option("--db", default=None, metavar="PATH", help="The results store (default: the league file's, else "
              "arena.sqlite).")
@click.option("--out", "out_dir", required=True, metavar="DIR", type=click.Path(file_okay=False),
              help="Folder to write the report into (created; files an earlier report wrote are replaced or "
                   "removed, other files are left alone).")
@click.option("--replays", default=2000, show_default=True, type=click.IntRange(min=0), metavar="N",
              help="Replays of the newest N games (each game is listed on its bots' pages in any case).")
def report(league: str | None, db: str | None, out_dir: str, replays: int) -> None:
    """Write a league's report: a static HTML leaderboard, one page per bot (results, head-to-head, every failure
    with its traceback and game id, slowest moves) and a replay viewer. Open DIR/index.html in a browser; the
    folder works from disk or any web host."""
    path, name = league_store(league, db)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a folder")
    with Store.open(path, readonly=True) as store:  # a report never writes the store
        pages, replayed = write_report(store, name, out, replays)
    click.echo(f"report written to {shown(out)}: index.html (leaderboard), {pages} bot pages in bots/, "
               f"replay.html ({replayed} replays)")
