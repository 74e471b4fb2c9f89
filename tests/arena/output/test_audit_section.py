"""The report's "Pairs to look at" section (arena/output/templates/results.html's audit_section): the flagged pairs
as `arena audit` finds them, every name escaped (names are the students')."""
from __future__ import annotations

from arena.output.report import index_page


def test_flagged_pairs_are_listed_with_their_names_escaped():
    audit = {"flagged": [{"bots": ["<b>boss</b>", "sh&ill"], "games": 12, "score": 12.0, "expected": 6.0,
                          "p": 0.00296, "p_raw": 0.000493}], "tested": 1, "untested": 5, "level": 0.05}
    page = index_page("L", [], [], 72, 0, audit)
    section = page[page.index('<section id="audit">'):]
    assert "<td>&lt;b&gt;boss&lt;/b&gt;</td><td>sh&amp;ill</td><td>12</td><td>12.0</td><td>6.0</td><td>0.003</td>" \
        in section, section
    assert "<b>boss" not in page
    assert "6 pairs that met" in section


def test_nothing_flagged_says_what_was_tested():
    page = index_page("L", [], [], 72, 0, {"flagged": [], "tested": 3, "untested": 3, "level": 0.05})
    assert "No pair flagged: 3 pairs tested, 3 not placed by the rest of the field" in page
    assert 'id="audit-flags"' not in page
