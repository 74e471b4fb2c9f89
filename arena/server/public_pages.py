"""The league's public pages: the leaderboard, a bot's page, a game's page and its replay's data, the bracket, and
the bot authors' guide (open to anyone unless the league file says ``leaderboard_public = false``: then to its
accounts, :func:`arena.server.guards.public`). They render :mod:`arena.output.views`' rows through the macros
``arena report`` uses; nothing private (a file name, a traceback) is shown."""
from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from arena.output import brackets, pictures
from arena.output.replays import replay, script_json
from arena.output.views import BotFacts, bot_facts, bot_standing
from arena.server import finals, guards
from arena.server.rendering import error, not_found, page, row_id
from arena.server.site import Site
from arena.server.viewers import Viewer
from arena.tournament.progress import is_tournament
from leaderboards import teams as tm
from leaderboards.store import Store

HISTORY_POINTS = 1000
"""Rated games of a bot drawn on its page's rating picture (its newest)."""
GAMES_PAGE = 50
"""Games on a page of a bot's games (newest first; older ones on the next page)."""


def no_data(site: Site, viewer: Viewer) -> Response:
    return Response("", 404)


@guards.threaded
@guards.public()
def leaderboard_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    lg = store.find_league(site.config.name)
    board = site.boards.get(store, lg)
    return page("leaderboard.html", v, site, board=board, bot_href=lambda r: f"/bots/{int(r.bot_id)}",
                teams=tm.teams(store, lg.id),
                matrix=pictures.matrix_figure(board.rows, board.cells or []),
                tournament=is_tournament(lg.config) or finals.final_of(store, lg.name) is not None)


@guards.threaded
@guards.public()
def bracket_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    """A tournament's bracket or Swiss table and places; bracket.js follows it as matches end."""
    lg = finals.bracket_league(store, site.config.name)  # the league itself, or the ladder's final
    href = finals.ladder_pages(store, site.config.name, lg)
    t = brackets.tournament(store, lg, bot_href=href)
    if t is None:
        return page("message.html", v, site, 404, title="Not found",
                    message="This league is a round robin or a gauntlet with no final: it has no bracket.")
    return page("bracket.html", v, site, t=t, bot_href=href)


@guards.threaded
@guards.public()
def bot_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    lg = store.find_league(site.config.name)
    found = bot_standing(store, lg.id, row_id(request.path_params["bot_id"]))  # (reads what the page shows)
    if found is None:
        return not_found(v, site)
    row, cells = found
    before = row_id(request.query_params.get("before", ""))  # (a page of older games: ids below it)
    shown_games = store.games(lg.id, order="recent", limit=GAMES_PAGE, bot_id=row.bot_id, before=before)
    older = f"/bots/{row.bot_id}?before={shown_games[-1].id}" if len(shown_games) == GAMES_PAGE else ""
    facts = bot_facts(reversed(shown_games))[0].get(row.bot_id, BotFacts())  # (its games only: no tracebacks)
    figures = pictures.bot_figures(store.bot_history(row.bot_id, HISTORY_POINTS),
                                   pictures.bot_move_times(store, row.bot_id), site.config.limits.move_time,
                                   site.config.limits.first_move_time)
    team = tm.team_named(store, lg.id, row.name)
    return page("bot.html", v, site, row=row, games=list(reversed(facts.games)), figures=figures, cells=cells,
                team=team,
                game_href=lambda game_id: f"/games/{int(game_id)}", older=older, paged=before is not None)


def league_game(request: Request, site: Site, store: Store) -> Any:
    """The game of the path, or None when it is not one of this league's."""
    number = row_id(request.path_params["game_id"])
    g = store.game(number) if number is not None else None
    return g if g is not None and g.league_id == store.find_league(site.config.name).id else None


@guards.threaded
@guards.public()
def game_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    g = league_game(request, site, store)
    if g is None:
        return not_found(v, site)
    return page("game.html", v, site, g=g)


def replay_script(g: Any) -> Response | None:
    """The replay viewer's data of one game, as the report's data files carry it (a script: no inline code);
    None when the game cannot be replayed."""
    drawn = replay(g, {}, details=False)  # (public: no traceback of anyone's)
    if drawn is None:
        return None
    listed = [{"id": g.id, "game": g.game, "players": g.players, "result": drawn["result"], "chunk": 0}]
    body = (f"window.ARENA_GAMES = {script_json(listed)};\n"
            f"window.ARENA_REPLAYS = {{0: {script_json({str(g.id): drawn})}}};\n")
    return Response(body, media_type="text/javascript", headers={"cache-control": "no-store"})


@guards.threaded
@guards.public(no_data)
def game_data(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    """The replay viewer's data of one game of the league."""
    g = league_game(request, site, store)
    answer = replay_script(g) if g is not None else None
    return answer if answer is not None else Response("", 404)


@functools.cache
def guide_text() -> str:
    """docs/bot-authors.md (packaged as arena/server/bot-authors.md), read once."""
    return resources.files("arena.server").joinpath("bot-authors.md").read_text(encoding="utf-8")


@guards.threaded
def guide_page(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    """The bot authors' guide, as plain text in a page of the site."""
    return page("guide.html", v, site, text=guide_text())


@guards.threaded
def nowhere(request: Request, site: Site, store: Store, v: Viewer) -> Response:
    """Any other address: 404, a page of the site (the API's addresses: a JSON line)."""
    if request.url.path.startswith("/api/"):
        return error(404, "no such address of the API (docs/server.md lists them)")
    return page("message.html", v, site, 404, title="Not found",
                message="There is no such page (a form's address opened as a page, or a mistyped one).")
