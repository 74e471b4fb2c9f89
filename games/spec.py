"""Spec strings: ``name`` or ``name(param=value,...)``, the syntax OpenSpiel uses (``hex(size=11,pie=true)``).

Games and bots share this parser and the :class:`Param` schema, so both give the same errors.

>>> parse_spec("hex(size=11, pie=true)")
('hex', {'size': '11', 'pie': 'true'})
>>> Param(int, 7, "board size", min=2, max=25).convert("size", "11")
11
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from games.errors import GameSpecError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Splits a spec string into its name and raw (string) parameter values.

    Raises:
        GameSpecError: the string is not of the form ``name`` or ``name(key=value,...)``.
    """
    if not isinstance(spec, str):
        raise GameSpecError(f"a spec must be a string like 'hex(size=7)', not {type(spec).__name__}")
    text = spec.strip()
    if "(" not in text and ")" not in text:
        name, body = text, None
    else:
        if not text.endswith(")") or text.count("(") != 1 or text.count(")") != 1:
            raise GameSpecError(f"malformed spec {spec!r}: expected name(key=value,...) with balanced parentheses")
        name, body = text[:-1].split("(", 1)
        name = name.strip()
    if not _NAME.match(name):
        raise GameSpecError(f"malformed spec {spec!r}: {name!r} is not a valid name")
    params: dict[str, str] = {}
    if body is not None and body.strip():
        for part in body.split(","):
            if "=" not in part:
                raise GameSpecError(f"malformed spec {spec!r}: parameter {part.strip()!r} must be key=value")
            key, value = (s.strip() for s in part.split("=", 1))
            if not _NAME.match(key) or not value:
                raise GameSpecError(f"malformed spec {spec!r}: bad parameter {part.strip()!r}")
            if key in params:
                raise GameSpecError(f"malformed spec {spec!r}: parameter {key!r} given twice")
            params[key] = value
    return name, params


def format_value(value: Any) -> str:
    """The spec-string form of a parameter value (bools as true/false)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def format_spec(name: str, params: Mapping[str, Any]) -> str:
    """The inverse of :func:`parse_spec` for already-converted values."""
    if not params:
        return name
    return f"{name}(" + ",".join(f"{k}={format_value(v)}" for k, v in params.items()) + ")"


@dataclass(frozen=True)
class Param:
    """One parameter of a game or bot."""

    kind: type
    """``int``, ``float``, ``bool`` or ``str``."""
    default: Any
    """The value used when the spec does not give one (``None``: computed, e.g. drawn from ``seed``)."""
    doc: str = ""
    """One line for ``arena games`` / ``arena bots``."""
    min: float | None = None
    """Smallest allowed value (numbers)."""
    max: float | None = None
    """Largest allowed value (numbers)."""
    choices: tuple[str, ...] | None = None
    """Allowed values (strings)."""
    parser: Callable[[str], Any] | None = field(default=None, compare=False)
    """Custom conversion from the raw string; raises ValueError with a message on a bad value."""

    def describe(self) -> str:
        """The valid values in words, for error messages and help."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.kind is bool:
            return "true or false"
        lo = "" if self.min is None else f"{self.min}"
        hi = "" if self.max is None else f"{self.max}"
        kind = {int: "an integer", float: "a number"}.get(self.kind, self.kind.__name__)
        if lo and hi:
            return f"{kind} from {lo} to {hi}"
        if lo:
            return f"{kind} >= {lo}"
        if hi:
            return f"{kind} <= {hi}"
        return kind

    def convert(self, key: str, raw: Any) -> Any:
        """Converts and range-checks one value (a raw string from a spec, or an already typed value)."""
        try:
            if self.parser is not None:
                return self.parser(raw if isinstance(raw, str) else format_value(raw))
            value = self._convert(raw)
        except (ValueError, TypeError, OverflowError) as exc:
            # the parser's own words, unless they only repeat what is allowed (said once, after "must be")
            detail = f" ({exc})" if str(exc) and "invalid literal" not in str(exc) and \
                self.describe() not in str(exc) else ""
            raise GameSpecError(f"bad value {raw!r} for {key!r}{detail}: must be {self.describe()}") from None
        if self.kind in (int, float):
            if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
                raise GameSpecError(f"bad value {raw!r} for {key!r}: must be {self.describe()}")
        if self.choices and value not in self.choices:
            raise GameSpecError(f"bad value {raw!r} for {key!r}: must be {self.describe()}")
        return value

    def _convert(self, raw: Any) -> Any:
        if self.kind is bool:
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise ValueError("not a boolean")
        if self.kind is int:
            if isinstance(raw, bool):
                raise ValueError("not an integer")
            if isinstance(raw, float):
                if not raw.is_integer():
                    raise ValueError("not an integer")
                return int(raw)
            return int(str(raw).strip())
        if self.kind is float:
            value = float(raw)
            if not math.isfinite(value):
                raise ValueError("not a finite number")
            return value
        return str(raw).strip()


def resolve_params(owner: str, schema: Mapping[str, Param], given: Mapping[str, Any]) -> dict[str, Any]:
    """Checks ``given`` against ``schema`` and returns every parameter's value (defaults filled in).

    Raises:
        GameSpecError: an unknown parameter or a bad value; the message lists the valid choices.
    """
    unknown = [k for k in given if k not in schema]
    if unknown:
        valid = ", ".join(schema) or "none"
        raise GameSpecError(f"unknown parameter {unknown[0]!r} for {owner}; valid parameters: {valid}")
    values = {k: p.default for k, p in schema.items()}
    for key, raw in given.items():
        values[key] = schema[key].convert(key, raw)
    return values
