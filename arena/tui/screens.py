"""The pushed screens: replay viewer, bot detail, key help and the league / game pickers."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from arena.limits import DAY
from arena.output.views import verdict
from arena.results.moves import clocks_after, failure_where
from arena.text import shown, text
from arena.tui import boards
from arena.tui.data import BotDetail, GameRow, LeaderRow, ReplayData, reason_text
from arena.tui.format import BARS, clock_text, seconds, sparkline
from arena.tui.replay import Replay
from arena.tui.tables import GamesTable
from leaderboards.ratings import elo_text

AUTOPLAY_DELAYS = (2.0, 1.0, 0.5, 0.25, 0.1)
"""Seconds per step of the autoplay, slowest first (+ and - move along this list)."""
MOVES_SHOWN = 9
MOVE_WIDTH = 28
"""Characters of one line of the move list (the side panel is 31 wide with its border and padding)."""


class ReplayScreen(Screen[None]):
    """Draws a stored game step by step: ←/→ step, Home/End jump, space autoplays."""

    # priority: the board's scroll area must not take the stepping keys (it keeps up/down for tall boards)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Close"),
        Binding("right", "step(1)", "Step", key_display="→", priority=True),
        Binding("left", "step(-1)", "Back", key_display="←", priority=True),
        Binding("l,n", "step(1)", "Step", show=False),
        Binding("h,p", "step(-1)", "Back", show=False),
        Binding("home", "jump(0)", "Start", show=False, priority=True),
        Binding("end", "jump(-1)", "End", show=False, priority=True),
        Binding("pagedown", "step(10)", "+10", show=False, priority=True),
        Binding("pageup", "step(-10)", "-10", show=False, priority=True),
        Binding("space", "autoplay", "Autoplay"),
        Binding("plus,equals_sign", "speed(1)", "Faster", show=False),
        Binding("minus", "speed(-1)", "Slower", show=False),
        Binding("question_mark", "app.help", "Help"),
    ]

    def __init__(self, data: ReplayData, replay: Replay) -> None:
        super().__init__()
        self.data = data
        self.replay = replay
        self.step = 0
        self.speed = 2
        self.timer: Timer | None = None

    def compose(self) -> ComposeResult:
        players = " v ".join(self.data.players)
        yield Static(Text.assemble((f"game {self.data.id}", "bold"), f"  {self.replay.spec}  ", players),
                     id="replay-title", classes="title")
        with Horizontal(id="replay-body"):
            with VerticalScroll(id="board-scroll"):
                yield Static(id="board")
            yield Static(id="moves")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()

    @property
    def autoplaying(self) -> bool:
        return self.timer is not None

    def action_step(self, delta: int) -> None:
        self.step = self.replay.clamp(self.step + delta)
        if self.autoplaying and self.step >= len(self.replay) - 1:
            self._stop()
        self.refresh_view()

    def action_jump(self, where: int) -> None:
        self.step = self.replay.clamp(len(self.replay.history) if where < 0 else where)
        self.refresh_view()

    def action_autoplay(self) -> None:
        if self.autoplaying:
            self._stop()
        else:
            if self.step >= len(self.replay) - 1:
                self.step = 0
            self.timer = self.set_interval(AUTOPLAY_DELAYS[self.speed], lambda: self.action_step(1))
        self.refresh_view()

    def action_speed(self, delta: int) -> None:
        self.speed = max(0, min(len(AUTOPLAY_DELAYS) - 1, self.speed + delta))
        if self.autoplaying:
            self._stop()
            self.timer = self.set_interval(AUTOPLAY_DELAYS[self.speed], lambda: self.action_step(1))
        self.refresh_view()

    def _stop(self) -> None:
        if self.timer is not None:
            self.timer.stop()
            self.timer = None

    def refresh_view(self) -> None:
        obs = self.replay.observation(self.step)
        move = self.replay.move(self.step)
        if move is not None:  # every game's board marks what the move that led here changed (games.board.LAST)
            obs = {**obs, "last_action": self.replay.history[self.step - 1], "last_player": move[0],
                   "last_move": move[1]}
        self.query_one("#board", Static).update(boards.render(self.replay.game_name, obs, self.data.players))
        self.query_one("#moves", Static).update(self._side_panel())

    def on_resize(self) -> None:
        self.refresh_view()  # the move list uses the panel's width: names are cut only when they must be

    def _panel_width(self) -> int:
        width = self.query_one("#moves", Static).content_region.width if self.is_mounted else 0
        return max(MOVE_WIDTH, width)

    def _time(self, step: int) -> str:
        """The bot move's time (`12 ms`, `1.4 s`), or "" for a chance outcome or a move without one."""
        k = self.replay.bot_move(step)
        if k is None or k >= len(self.data.wall_times):
            return ""
        return seconds(self.data.wall_times[k])

    def _side_panel(self) -> Text:
        last = len(self.replay) - 1
        width = self._panel_width()
        out = Text()
        # "move k/n" numbers every action (chance and opening too) as every replay and failure does
        # (arena/results/moves.py); "turn k/n" counts the bots' own moves, as the games list's moves column does
        out.append(f"move {self.step}/{last}", style="bold")
        n_moves = self.data.moves or self.replay.bot_moves_until(last)
        out.append(f"  turn {self.replay.bot_moves_until(self.step)}/{n_moves}\n", style="bold")
        state = "playing" if self.autoplaying else "paused"
        out.append(f"autoplay {state} ({AUTOPLAY_DELAYS[self.speed]:g}s)\n", style="grey50")
        if self.data.time_control is not None:
            out.append(self._clocks())
        move = self.replay.move(self.step)
        if move is None:
            out.append("initial position\n", style="italic")
        else:  # the latest move in full, with its time; the list below is cut to the panel's width
            out.append(f"{self._who(move[0], self.step)}: ", style="bold")
            out.append(f"{move[1]}")
            took = self._time(self.step)
            out.append(f"  ({took})\n" if took else "\n", style="")
        out.append("\n")
        first = max(1, min(self.step - MOVES_SHOWN // 2, last - MOVES_SHOWN + 1))
        shown_steps = range(first, min(last, first + MOVES_SHOWN - 1) + 1)
        names = [len(self._who(m[0], i)) for i in shown_steps if (m := self.replay.move(i)) is not None]
        name_width = min(max(names, default=7), max(7, width - 22))  # whole names when the panel is wide enough
        for i in shown_steps:
            move = self.replay.move(i)
            if move is None:
                continue
            who = self._who(move[0], i)
            who = who if len(who) <= name_width else who[:name_width - 1] + "…"
            took = self._time(i)
            line = f"{i:>3} {who:<{name_width}} {move[1]}"
            room = width - len(took) - 1
            line = line if len(line) <= room else line[:room - 1] + "…"
            line = f"{line:<{room}} {took}" if took else line
            out.append(line + "\n", style="reverse" if i == self.step else "")
        if self.step >= last:
            out.append("\n")
            finished = self.replay.observation(last).get("current_player") == boards.TERMINAL
            if finished or len(set(self.data.returns)) > 1:
                out.append(verdict(self.data.returns, self.data.players) + "\n", style="bold")
            else:
                out.append("unfinished\n", style="bold")
            out.append(f"end: {reason_text(self.data.terminations)}\n")
            for f in self.data.failures:  # a bot's own text: shown escaped
                detail = [ln for ln in shown(f.detail, lines=True).splitlines() if ln.strip()]
                out.append(f"{shown(failure_where(f))}\n", style="red")
                if detail:
                    out.append(detail[-1].strip() + "\n", style="grey62")
        if self.replay.error:
            out.append(f"\n{self.replay.error}\n", style="bold red")
        return out

    def _clocks(self) -> Text:
        """Each seat's game clock after its latest move up to this step, as the HTML viewer shows it."""
        clocks = clocks_after(self.data.clock_readings, self.replay.bot_moves_before(self.step),
                              [None] * len(self.data.players))
        out = Text(f"clocks ({self.data.time_control})\n", style="bold")
        for name, left in zip(self.data.players, clocks):
            out.append(f"  {name}: " + (f"{clock_text(left)} left\n" if left is not None else "not started\n"))
        return out

    def _who(self, mover: int, step: int) -> str:
        """Who made the action that led to ``step``: chance, the opening (nobody chose it) or a seat's bot."""
        return "chance" if mover < 0 else "opening" if self.replay.is_opening(step) else self._player(mover)

    def _player(self, seat: int) -> str:
        return self.data.players[seat] if seat < len(self.data.players) else f"seat {seat}"


class BotDetailScreen(Screen[None]):
    """A bot's identity, limits, rating trend, move-time distribution and failures."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "app.pop_screen", "Back"),
                                             Binding("question_mark", "app.help", "Help")]

    def __init__(self, detail: BotDetail, row: LeaderRow | None = None) -> None:
        super().__init__()
        self.detail = detail
        self.row = row or detail.rating

    def compose(self) -> ComposeResult:
        d = self.detail
        yield Static(Text.assemble(("bot ", "bold"), (d.label, "bold cyan"), f"  ({d.status})"), classes="title")
        with VerticalScroll(id="detail"):
            yield Static(self._identity(), id="identity")
            yield Static(self._times(), id="times")
            yield Static(self._failures(), id="failures")
        yield Footer()

    def _identity(self) -> Text:
        d = self.detail
        out = Text()
        # every number on this screen is this version's; the other versions of the name are listed apart
        out.append("version  ", style="bold")
        out.append(f"{d.version} of {len(d.versions) or 1}: every number below is this version's\n")
        if len(d.versions) > 1:
            out.append("versions ", style="bold")
            out.append(", ".join(f"{label} ({status}, {games} games)" for label, status, games in d.versions)
                       + f"; {sum(g for _, _, g in d.versions)} games in all\n", style="grey62")
        if d.kind == "builtin":
            out.append("spec     ", style="bold")
            out.append(f"{d.spec}\n")
        else:
            out.append("file     ", style="bold")
            out.append(f"{d.filename}\n")
        if d.status_reason:
            out.append("status   ", style="bold")
            out.append(f"{d.status}: {d.status_reason}\n", style="yellow")
        out.append("plays    ", style="bold")
        out.append(", ".join(d.games) if d.games else "every game of the league")
        out.append("\n")
        if d.limits:
            # with a game clock, a move time left out is 86400 s (no cap): the time control says it instead
            limits = {k: d.limits[k] for k in ("time_control", "move_time", "first_move_time", "memory_mb")
                      if d.limits.get(k) is not None and d.limits[k] != DAY}
            out.append("limits   ", style="bold")
            out.append("  ".join(f"{k}={shown(v)}" for k, v in limits.items()) + ("  trusted" if d.trusted else "")
                       + "\n")
        if self.row is not None:
            r = self.row
            out.append("rating   ", style="bold")
            out.append(f"this version: μ {r.mu:.2f}  σ {r.sigma:.2f}  μ-3σ {r.exposed:.2f}  {r.games} games  "
                       f"W/D/L {r.wins}/{r.draws}/{r.losses}\n")
            if d.elo is not None:  # the uncertainty said as an interval, a rank range and a tied group
                e = d.elo
                out.append("elo      ", style="bold")
                if e["elo"] is None:
                    out.append(f"{elo_text(None, None, None)} (no games yet: no rating, interval or rank claimed)\n")
                else:
                    out.append(f"{elo_text(e['elo'], e['elo_low'], e['elo_high'])} (95%), rank {e['rank_low']}"
                               + ("" if e["rank_low"] == e["rank_high"] else f"-{e['rank_high']}")
                               + f", tied group g{e['group']}\n")
            if r.trend:
                out.append("trend    ", style="bold")
                out.append(sparkline(r.trend, 40), style="cyan")
                out.append(f"  {min(r.trend):.1f}..{max(r.trend):.1f}\n")
        return out

    def _times(self) -> Text:
        d = self.detail
        out = Text()
        out.append(f"\nmove times (this version: {d.n_moves} moves in its last {d.n_games} games)\n", style="bold")
        if not d.n_moves:
            out.append("no moves yet\n", style="grey50")
            return out
        out.append("  ".join(f"{k} {seconds(v)}" for k, v in d.percentiles.items()) + "\n")
        top = max(d.hist) or 1
        out.append(seconds(d.hist_range[0]) + " ")
        out.append("".join(BARS[min(len(BARS) - 1, (c * (len(BARS) - 1) + top - 1) // top)] if c else " "
                           for c in d.hist), style="green")
        out.append(" " + seconds(d.hist_range[1]) + "\n")
        return out

    def _failures(self) -> Text:
        d = self.detail
        out = Text()
        out.append(f"\nfailures ({len(d.failures)}, this version)\n", style="bold")
        if not d.failures:
            out.append("none\n", style="grey50")
        for game_id, reason, move, detail in d.failures[:20]:
            out.append(f"game {game_id}, move {move}: ", style="bold")
            out.append(reason + "\n", style="red")
            for line in detail.splitlines():
                out.append(f"  {line}\n", style="grey62")
        if len(d.failures) > 20:
            out.append(f"... {len(d.failures) - 20} more\n", style="grey50")
        return out


class GamesListScreen(Screen[None]):
    """The games behind a number (a head-to-head cell, a failure count): Enter replays one, Esc goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "app.pop_screen", "Back"),
                                             Binding("question_mark", "app.help", "Help")]

    def __init__(self, title: str, rows: Sequence[GameRow]) -> None:
        super().__init__()
        self.title_text = title
        self.rows = list(rows)

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble((self.title_text, "bold"), f"  {len(self.rows)} games"), classes="title")
        yield GamesTable(id="games-list")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(GamesTable)
        table.sync([(str(g.id), GamesTable.cells(g)) for g in self.rows])
        table.focus()


HELP = """\
[b]Dashboard[/b]
  1 2 3        Leaderboard, Head-to-head, Games tabs (or click them)
  4            a tournament's Bracket tab (a tournament league only)
  ↑ ↓ PgUp PgDn  move in a table      Home End  first / last row
  ← →          Head-to-head: move across the matrix (the names stay)
  Enter        open: a bot's detail (Leaderboard; a name in Head-to-head),
               the games behind a Head-to-head cell, a replay (Games)
  f            the games behind the selected bot's failure count
  /            show only the rows containing a text (empty: all);
               Head-to-head: the bots named so, from all bots
  s            sort the Leaderboard, Head-to-head rows or Games
               (Head-to-head: rank, name, games, score vs column)
  l            pick the league
  g            filter by game
  r            reload now (the tables also update by themselves)
  ?            this help      q  quit      Ctrl+P  command palette
  The Games tab loads older games when the cursor reaches the last row.

[b]Replay[/b]
  → l n        step forward        ← h p   step back
  PgDn PgUp    10 steps            Home End  first / last position
  space        autoplay on/off     + = -   faster / slower
  Esc q        back                ?       this help

[b]Games list, bot detail[/b]
  Enter        replay the game (games list)
  Esc q        back                ?       this help

[b]Pickers, search, this help[/b]
  ↑ ↓ Enter    choose              Esc     cancel / close
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box", classes="modal-box"):
            yield Static("[b]arena tui[/b] keys (↑ ↓ scroll)", classes="title")
            with VerticalScroll(id="help-scroll"):  # taller than 24 rows: it scrolls
                yield Static(HELP, id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()


class SearchScreen(ModalScreen[Any]):
    """Asks for the text the table's rows must contain; dismisses with it ("" shows every row), None on Esc.

    The text is escaped as names are drawn (``arena.text.shown``) as soon as it is typed or pasted: the box never
    sends a pasted control sequence to the terminal, and a pasted raw name finds the bot whose name is drawn
    escaped."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, current: str = "", hint: str = "Show the rows containing (empty: all rows)") -> None:
        super().__init__()
        self.current = shown(current)
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal-box"):
            yield Static(self.hint, classes="title")
            yield Input(value=self.current, id="search")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_changed(self, event: Any) -> None:
        if not event.value.isprintable():  # (the common case costs one check)
            event.input.value = shown(event.value)

    def on_input_submitted(self, event: Any) -> None:
        self.dismiss(shown(event.value.strip()))


class PickerScreen(ModalScreen[Any]):
    """Choose one of ``choices`` ((value, label) pairs); dismisses with the value, or None on Esc."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, choices: Sequence[tuple[Any, str | Text]], current: Any = None) -> None:
        super().__init__()
        self.title_text = title
        self.choices = list(choices)
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal-box"):
            yield Static(self.title_text, classes="title")
            # a str label is drawn as is (a Text), never parsed as markup: league names come from users' files
            yield OptionList(*[Option(text(label) if isinstance(label, str) else label, id=str(i))
                               for i, (_, label) in enumerate(self.choices)], id="picker")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        for i, (value, _) in enumerate(self.choices):
            if value == self.current:
                options.highlighted = i
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[int(event.option.id or 0)][0])
