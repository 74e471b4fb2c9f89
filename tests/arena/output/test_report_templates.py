"""Issue 24 §4: the HTML report renders through Jinja2 with autoescape on, not with a helper each value must
remember."""
from __future__ import annotations

import ast
from pathlib import Path

import jinja2
import pytest

from arena.output.pages import environment

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = "</p><script>alert(1)</script>\x1b[2J\u202e"


def test_every_value_is_escaped_by_default() -> None:
    env = environment()
    out = env.from_string("<p>{{ name }}</p><pre>{{ trace|block }}</pre>").render(name=HOSTILE,
                                                                                 trace=f"line 1\n{HOSTILE}")
    assert "<script>" not in out and "&lt;/p&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "\x1b" not in out and "\\x1b[2J" in out and "\u202e" not in out  # controls shown escaped, as on a terminal
    assert "<pre>line 1\n&lt;/p&gt;" in out  # a block keeps its lines


TEMPLATES = ROOT / "arena" / "output" / "templates"


@pytest.mark.parametrize("name", sorted(p.name for p in TEMPLATES.glob("report_*.html")))
def test_the_report_templates_load_with_autoescape(name: str) -> None:
    env = environment()
    template = env.get_template(name)
    assert env.autoescape is True and isinstance(env.undefined(), jinja2.StrictUndefined) and template is not None


def test_the_report_code_escapes_nothing_by_hand() -> None:
    """No ``html.escape`` and no ``h(...)``-style helper left in the report's code: the templates escape."""
    for rel in ("arena/commands/report.py", "arena/output/report.py", "arena/output/pages.py", "arena/output/views.py",
                "arena/output/replays.py"):
        tree = ast.parse((ROOT / rel).read_text())
        imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imports |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert "html" not in imports, rel
        assert not defined & {"h", "h_block", "shown_html", "table", "page"}, rel
        assert "<td>" not in (ROOT / rel).read_text(), rel  # no HTML built in Python
