"""A game as a replay viewer shows it: its frames (the board before the first move and after each one, drawn as the
dashboard draws it), who moved and the time each move took, as JSON for ``replay.js`` (``arena report``'s viewer and
``arena serve``'s game pages run the same script on the same data).

Every name in a replay comes from bots or users' files: the viewer sets each one with ``textContent``, and JSON
inside a script gets :func:`script_json` (no ``</script>`` can end it).
"""
from __future__ import annotations

import functools
from typing import Any

import games as games_pkg
from arena.output.views import result_text
from arena.results.moves import OPENING, Movers, clocks_after, failure_move
from arena.results.records import headline
from arena.text import dumps, shown
from leaderboards.store import StoredGame


def script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element: ASCII only (so U+2028/U+2029 are escapes, as are all controls) and
    no ``</`` or ``<!--`` that could end the element or open a comment."""
    out = dumps(value)
    return out.replace("</", "<\\/").replace("<!--", "<\\!--").replace("\u2028", "\\u2028").replace("\u2029",
                                                                                                      "\\u2029")


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
    the game cannot be loaded: a game spec this arena no longer has). In a game with game clocks, a frame also has
    ``clocks``: each seat's seconds left after its latest move so far (None before its first)."""
    try:
        game = cache[g.game] if g.game in cache else cache.setdefault(g.game, games_pkg.load(g.game))
        state = game.new_initial_state()
        names = [shown(p) for p in g.players]  # a board names its players: shown escaped, like every name
        out: list[dict[str, Any]] = [{"board": board_runs(game, state, names, None), "seat": None, "move": "start",
                                      "ms": None}]
        left = g.clock_readings
        clocks: list[float | None] | None = [None] * len(g.players) if left else None
        if clocks is not None:
            out[0]["clocks"] = list(clocks)
        movers = Movers(len(g.info.get("opening", ())))  # one numbering: arena/results/moves.py
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
            frame = {"board": board_runs(game, state, names, last), "seat": seat if isinstance(kind, int) else None,
                     "move": move, "ms": ms, **({"opening": True} if kind == OPENING else {})}
            if clocks is not None:
                if isinstance(kind, int):
                    clocks = clocks_after(left, [(seat, kind)], clocks)
                frame["clocks"] = [None if c is None else round(c, 1) for c in clocks]  # as shown: tenths
            out.append(frame)
        return out
    except Exception:  # noqa: BLE001 - the report still lists the game, without frames
        return None


def replay(g: StoredGame, cache: dict[str, Any], *, details: bool = True) -> dict[str, Any] | None:
    """What the viewer shows of game ``g``: its players, result, failures and frames; None when the game cannot be
    loaded. ``cache`` keeps loaded games by spec between calls. A failure carries the headline of the bot's
    traceback (its last line and where) only with ``details``: the organiser's report has it, a public page must
    not (a traceback's words are its author's: a student's code, their data)."""
    drawn = frames(g, cache)
    if drawn is None:
        return None
    return {"id": g.id, "game": g.game, "players": g.players, "returns": g.returns, "terminations": g.terminations,
            "result": result_text(g),
            "failures": [{"seat": x.seat, "reason": str(x.reason), "move": failure_move(x),
                          "detail": headline(x.detail) if details else ""} for x in g.failures],
            "time_control": str(g.info["time_control"]) if drawn[0].get("clocks") is not None else None,
            "frames": drawn}
