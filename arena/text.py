"""Untrusted text made safe to show: bot names, file names, league names and a bot's failure details.

Everything a bot or a user's file supplies is shown *literally*: a terminal must never receive a control
sequence from it (``ESC[2J`` clears the screen, OSC 52 writes the clipboard, BEL rings, U+202E reverses
what follows), Rich and Textual must never parse it as markup (``[@x=(]`` raises ``MarkupError``), and no
encoder may choke on it (a lone surrogate is not UTF-8). One rule, used by every command, the dashboard and
every export (docs/architecture.md, "Untrusted text"):

- :func:`shown` for the terminal: every character that is not printable (C0 and C1 controls, DEL, format
  characters such as bidi overrides and zero-width spaces, line/paragraph separators, surrogates,
  unassigned code points) becomes a visible Python-style escape (``\\x1b``, ``\\u202e``, ``\\ud800``).
  Printable text, backslashes included, is unchanged.
- :func:`text` wraps that in a :class:`rich.text.Text`, which Rich and Textual never parse as markup
  (prefer it); :func:`markup` escapes it for the few places that take markup strings.
- :func:`dumps` for ``--json``: ASCII-only JSON (so no raw control byte) with surrogates replaced by U+FFFD,
  so strict parsers accept it; :func:`csv_cell` for ``--csv``.
- :func:`check_name` when a name enters (league file, ``arena submit``): at most :data:`MAX_NAME`
  characters, all printable, else a one-line :class:`~arena.errors.ConfigError` (exit status 2).
"""
from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from arena.errors import ConfigError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

MAX_NAME = 64
"""Longest bot or league name (characters)."""

_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_SURROGATE = re.compile("[\ud800-\udfff]")
CSV_FORMULA = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP's CSV injection list)."""


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _shown_line(s: str) -> str:
    if s.isprintable():  # the common case: nothing to do (isprintable is False for any control/format/surrogate)
        return s
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in s)


def shown(value: object, *, lines: bool = False) -> str:
    """``value`` as text that is safe to write to a terminal, with every unprintable character escaped.

    Args:
        value: any object (``str(value)`` is shown).
        lines: keep line breaks as real newlines (a block such as a traceback; ``\\r\\n`` counts as one),
            each line escaped; otherwise a newline is shown as ``\\n`` too.

    >>> shown("bot\\x1b[2J\\x07"), shown("rtl\\u202eevil"), shown("[@x=(] a\\\\b")
    ('bot\\\\x1b[2J\\\\x07', 'rtl\\\\u202eevil', '[@x=(] a\\\\b')
    >>> shown("line 1\\r\\nline\\t2", lines=True)
    'line 1\\nline\\\\t2'
    """
    s = value if isinstance(value, str) else str(value)
    if not lines:
        return _shown_line(s)
    return "\n".join(_shown_line(line) for line in s.replace("\r\n", "\n").split("\n"))


def text(value: object, style: str = "", *, lines: bool = False) -> Text:
    """:func:`shown` as a Rich :class:`~rich.text.Text`: Rich and Textual show it as is, never as markup."""
    from rich.text import Text  # start-up: the CLI's error path imports this module and need not load Rich
    return Text(shown(value, lines=lines), style=style)


# Off a terminal a table has no screen to fit: as wide as it needs (rich would cut it at 80 columns).
UNLIMITED_WIDTH = 10_000


def out_console() -> Console:
    """A rich Console on stdout for every command's tables: the terminal's width on a terminal; piped or
    redirected, wide enough that a table is printed whole, never folded, wrapped or cut at 80 columns."""
    import sys

    from rich.console import Console  # start-up: rich only when printing
    return Console() if sys.stdout.isatty() else Console(width=UNLIMITED_WIDTH)


def markup(value: object) -> str:
    """:func:`shown`, escaped for a place that Rich parses as markup (a progress bar's description)."""
    from rich.markup import escape  # start-up: rich only when printing
    return escape(shown(value))


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a bot or league name (None if it can): too long, or not printable."""
    if len(name) > MAX_NAME:
        return f"is {len(name)} characters long; at most {MAX_NAME} are allowed"
    bad = next((ch for ch in name if not ch.isprintable()), None)
    if bad is not None:
        return (f"contains the unprintable character {_escape(bad)}; use printable characters only "
                "(no control, format or surrogate characters)")
    return None


def check_name(name: str, *, what: str = "bot name", hint: str = "") -> str:
    """``name`` stripped, if it is a good name; else one line saying what is wrong.

    Raises:
        ConfigError: the name is empty, longer than :data:`MAX_NAME` or has an unprintable character.
    """
    stripped = name.strip()
    problem = "is empty" if not stripped else name_problem(stripped)
    if problem:
        raise ConfigError(f"{what} {quoted(stripped)} {problem}{hint}")
    return stripped


def quoted(name: str) -> str:
    """A refused name in a message: its repr, escaped, cut after :data:`MAX_NAME` characters."""
    return shown(repr(name[:MAX_NAME])) + ("..." if len(name) > MAX_NAME else "")


def valid_unicode(value: Any) -> Any:
    """``value`` (str, list, tuple, dict, anything else as is) with every surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {valid_unicode(k): valid_unicode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [valid_unicode(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """JSON for the terminal and for strict parsers: ASCII only (every control character is a ``\\u``
    escape) and valid Unicode (lone surrogates, which strict parsers refuse, become U+FFFD)."""
    return json.dumps(valid_unicode(value), ensure_ascii=True, **kwargs)


def csv_cell(value: Any) -> Any:
    """A CSV cell: numbers as they are; text :func:`shown` (CSV goes to a terminal too) and, when it would
    start a spreadsheet formula (``=``, ``+``, ``-``, ``@``), prefixed with ``'`` (OWASP)."""
    if not isinstance(value, str):
        return value
    out = shown(value)
    return "'" + out if out.startswith(CSV_FORMULA) else out
