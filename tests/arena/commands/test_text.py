"""arena.text: untrusted text shown literally (the one helper every command, the TUI and the exports use)."""
from __future__ import annotations

import csv
import io
import json
import string
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.errors import ConfigError
from arena.text import MAX_NAME, check_name, csv_cell, dumps, shown, text

# Every code point, surrogates included (hypothesis's text() leaves them out unless asked).
ANY_CHAR = st.characters(codec=None, categories=None)
UNSAFE = set(range(0x20)) | set(range(0x7F, 0xA0))


def is_unsafe(ch: str) -> bool:
    """A character a terminal may act on, or that is invisible, or not valid Unicode."""
    return ord(ch) in UNSAFE or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")


@given(st.text(alphabet=ANY_CHAR))
def test_shown_never_outputs_a_control_format_or_surrogate_character(s: str) -> None:
    out = shown(s)
    assert not [ch for ch in out if is_unsafe(ch)]
    out.encode("utf-8")  # valid Unicode: every encoder takes it


@given(st.text(alphabet=ANY_CHAR))
def test_shown_lines_keeps_only_newlines(s: str) -> None:
    out = shown(s, lines=True)
    assert not [ch for ch in out if is_unsafe(ch) and ch != "\n"]
    assert out.count("\n") == s.replace("\r\n", "\n").count("\n")


@given(st.text(alphabet=string.printable.replace("\t", "").replace("\n", "").replace("\r", "")
               .replace("\x0b", "").replace("\x0c", "")))
def test_printable_ascii_is_unchanged(s: str) -> None:
    assert shown(s) == s
    assert shown(s, lines=True) == s


@given(st.text(alphabet=ANY_CHAR))
def test_rich_text_of_untrusted_text_is_literal(s: str) -> None:
    assert text(s).plain == shown(s)  # no markup parsed, nothing stripped


@pytest.mark.parametrize("raw,escaped", [
    ("\x1b[2J", "\\x1b[2J"), ("\x07", "\\x07"), ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),
    ("\x9b31m", "\\x9b31m"), ("\x7f", "\\x7f"), ("a\rb", "a\\rb"), ("a\nb", "a\\nb"), ("\u202eevil", "\\u202eevil"),
    ("zero\u200bwidth", "zero\\u200bwidth"), ("\ud800", "\\ud800"), ("\U000e0041", "\\U000e0041"),
    ("[@x=(]", "[@x=(]"), ("é 漢字 ♞", "é 漢字 ♞"),
])
def test_shown_escapes_visibly(raw: str, escaped: str) -> None:
    assert shown(raw) == escaped


@pytest.mark.parametrize("name", ["bel\x07", "esc\x1b[2J", "rtl\u202e", "sur\ud800", "tab\there", "nl\nx",
                                  "x" * (MAX_NAME + 1), "   ", "nbsp\u00a0x"])
def test_bad_names_are_refused_in_one_line(name: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_name(name)
    message = str(info.value)
    assert "\n" not in message and not [ch for ch in message if is_unsafe(ch)]
    assert message.startswith("bot name ")


@pytest.mark.parametrize("name", ["random", "[@x=(]", "my bot 2", "é漢字", "x" * MAX_NAME, " padded "])
def test_good_names_pass_stripped(name: str) -> None:
    assert check_name(name) == name.strip()


@given(st.recursive(st.text(alphabet=ANY_CHAR) | st.integers() | st.floats(allow_nan=False),
                    lambda kids: st.lists(kids) | st.dictionaries(st.text(alphabet=ANY_CHAR), kids), max_leaves=10))
def test_json_is_printable_ascii_and_valid_unicode(value: object) -> None:
    out = dumps(value)
    assert all(" " <= ch <= "~" for ch in out)
    # what a strict parser reads back is valid Unicode: no lone surrogate (astral characters come as pairs)
    json.dumps(json.loads(out), ensure_ascii=False).encode("utf-8")


def test_json_replaces_surrogates_and_keeps_the_rest() -> None:
    assert json.loads(dumps({"bot\ud800": ["\x1b[2J", "é"]})) == {"bot\ufffd": ["\x1b[2J", "é"]}


@pytest.mark.parametrize("value,cell", [("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"), ("+1", "'+1"), ("-x", "'-x"),
                                        ("@SUM(A1)", "'@SUM(A1)"), ("bel\x07", "bel\\x07"), ("plain", "plain"),
                                        (-1.5, -1.5), (3, 3)])
def test_csv_cells(value: object, cell: object) -> None:
    assert csv_cell(value) == cell
    buf = io.StringIO()
    csv.writer(buf).writerow([csv_cell(value)])
    assert not [ch for ch in buf.getvalue().rstrip("\r\n") if is_unsafe(ch)]
