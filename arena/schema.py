"""One schema for user settings: pydantic validates them, and the same field definitions say what is allowed
(in error messages) and generate the documentation tables (docs/leagues.md).

Why pydantic in strict mode: a TOML ``"false"`` must not become ``True``, ``true`` must not be an integer,
``512.5`` must not be truncated, and ``inf``/``nan`` must not reach the sandbox. Its errors carry the location,
the input and the failed constraint; :func:`explain` turns the first one into arena's one-line message.
"""
from __future__ import annotations

import json
import math
import types
import typing
from collections.abc import Callable
from typing import Any

import annotated_types as at
from pydantic import ConfigDict, ValidationError
from pydantic.fields import FieldInfo

STRICT = ConfigDict(strict=True, allow_inf_nan=False, extra="forbid", use_attribute_docstrings=True)
"""Every settings schema: exact TOML types (booleans only for booleans, integers only for integers), finite
numbers, no unknown keys, meanings from the docstrings under the fields."""


def fields_of(schema: Any) -> dict[str, FieldInfo]:
    """The pydantic fields of a model or pydantic dataclass, in definition order."""
    found = getattr(schema, "__pydantic_fields__", None) or getattr(schema, "model_fields", None)
    if found is None:
        raise TypeError(f"{schema!r} is not a pydantic schema")
    return dict(found)


def _number(x: Any) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return "2**63-1" if x == 2**63 - 1 else str(x)


def _bounds(metadata: list[Any]) -> str:
    low = high = ""
    for m in metadata:
        if isinstance(m, at.Gt):
            low = f"{_number(m.gt)} < "
        elif isinstance(m, at.Ge):
            low = f"{_number(m.ge)} <= "
        elif isinstance(m, at.Lt):
            high = f" < {_number(m.lt)}"
        elif isinstance(m, at.Le):
            high = f" <= {_number(m.le)}"
    return f"{low}x{high}" if low or high else ""


def type_name(annotation: Any) -> str:
    """The TOML type of an annotation, for the docs' Type column."""
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(a) for a in args)
    if origin is typing.Literal:
        return "string"
    if origin is list:
        return f"list of {type_name(args[0])}s" if args else "list"
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(annotation, getattr(
        annotation, "__name__", str(annotation)).lower())


def _override(field: FieldInfo, what: str) -> str | None:
    """A field's own words for ``type``, ``allowed`` or ``default`` (``Field(json_schema_extra={...})``), for
    keys whose annotation does not say it well (a table, a spec or a list of specs)."""
    extra = field.json_schema_extra
    return extra.get(what) if isinstance(extra, dict) else None  # type: ignore[return-value]


def allowed(field: FieldInfo) -> str:
    """What a field accepts, in words: ``an integer, 16 <= x <= 1048576``."""
    own = _override(field, "allowed")
    if own is not None:
        return own
    annotation = field.annotation
    optional = type(None) in typing.get_args(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    inner = args[0] if optional and len(args) == 1 else annotation
    metadata = list(field.metadata)
    if typing.get_origin(inner) is typing.Annotated:
        inner, *extra = typing.get_args(inner)
        metadata += [m for e in extra for m in (getattr(e, "metadata", None) or [e])]
    bounds = _bounds(metadata)
    if inner is bool:
        text = "true or false (a TOML boolean, not a string)"
    elif inner is int:
        text = "an integer" + (f", {bounds}" if bounds else "")
    elif inner is float:
        text = "a finite number" + (f", {bounds}" if bounds else "")
    elif typing.get_origin(inner) is typing.Literal:
        text = "one of " + ", ".join(json.dumps(c) for c in typing.get_args(inner))
    elif inner is str:
        text = "a non-empty string"
    else:
        text = f"a {type_name(inner)}"
    return text + (" (or left out)" if optional and field.default is None else "")


def show(value: Any) -> str:
    """A value as the user wrote it in TOML, short and on one line (strings quoted and escaped)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return "a table"
    text = json.dumps(value, ensure_ascii=True, default=str) if isinstance(value, (str, list)) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def explain(exc: ValidationError, schema: Any, *, where: Callable[[tuple[Any, ...]], str] | None = None) -> str:
    """arena's one-line message for the first error of ``exc``: the key, the value, and what is allowed.

    Args:
        exc: what pydantic raised validating ``schema``.
        schema: the model or pydantic dataclass that was validated (its fields say what is allowed).
        where: names a location for the user (default: dotted, ``limits.move_time``).
    """
    error = exc.errors()[0]
    loc = tuple(error["loc"])
    key = where(loc) if where else ".".join(str(p) for p in loc)
    fields = fields_of(schema)
    name = loc[-1] if loc else ""
    if error["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
        return f"unknown key {key!r}; valid keys: {', '.join(fields)}"
    if error["type"] == "missing":
        return f"{key} is required: {allowed(fields[name])}" if name in fields else f"{key} is required"
    if name in fields:
        return f"{key} = {show(error.get('input'))} is not allowed: {allowed(fields[name])}"
    return f"{key} = {show(error.get('input'))} is not allowed: {error['msg']}"


def docs_rows(schema: Any, prefix: str = "") -> list[tuple[str, str, str, str, str]]:
    """(key, type, default, allowed, meaning) for each field: the rows of a documentation table."""
    rows = []
    for name, field in fields_of(schema).items():
        default = field.default
        shown = _override(field, "default") or (
            "required" if field.is_required() else ("none" if default is None else show(default)))
        meaning = " ".join((field.description or "").split())
        kind = _override(field, "type") or type_name(field.annotation)
        rows.append((f"`{prefix}{name}`", kind, shown, allowed(field), meaning))
    return rows


def docs_table(rows: list[tuple[str, str, str, str, str]]) -> str:
    """A Markdown table of :func:`docs_rows` (pipes in the text escaped)."""
    lines = ["| Key | Type | Default | Allowed | Meaning |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)
