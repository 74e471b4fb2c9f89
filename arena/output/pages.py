"""HTML pages from Jinja2 templates (package data under ``arena/output/templates/``), escaped by default.

Every ``{{ value }}`` of a page is first :func:`arena.text.shown` (control characters escaped, as on a terminal)
and then HTML-escaped by autoescape; a template never has to remember a helper for an untrusted value. What a
template must not escape is HTML this code made itself (an inline SVG picture): it comes as
:class:`markupsafe.Markup`. A block of lines (a traceback in a ``<pre>``) takes the ``block`` filter (its line
breaks kept). ``arena report`` renders through :func:`environment`; ``arena serve``'s pages can load theirs from
the same environment (or build theirs with :func:`escaping_environment`).
"""
from __future__ import annotations

import functools
from typing import Any

import jinja2
from markupsafe import Markup

from arena.text import shown


class Block(str):
    """Lines already :func:`arena.text.shown` with their line breaks kept (the ``block`` filter); still escaped."""


def _finalize(value: Any) -> Any:
    """Each ``{{ }}`` value: shown (escaped controls) unless it is HTML of ours or a block already shown."""
    if value is None:
        return ""
    if isinstance(value, (Markup, Block)):
        return value
    return shown(value)


def _block(value: object) -> Block:
    return Block(shown(value, lines=True))


def escaping_environment(loader: jinja2.BaseLoader) -> jinja2.Environment:
    """A Jinja2 environment that escapes every value (autoescape on for every template, whatever its name), shows
    control characters escaped, and fails on an undefined name rather than printing nothing."""
    env = jinja2.Environment(loader=loader, autoescape=True, finalize=_finalize, undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True)
    env.filters["block"] = _block
    return env


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The environment of arena's own templates (``arena/output/templates/*.html``)."""
    return escaping_environment(jinja2.PackageLoader("arena.output", "templates"))


def render(template: str, **values: Any) -> str:
    """``arena/output/templates/TEMPLATE`` rendered with ``values``."""
    return environment().get_template(template).render(**values)
