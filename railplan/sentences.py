"""Pydantic's validation errors said as railplan's sentences: what the field must be, and what it is.

Pydantic words its errors for programmers ("Input should be a valid dictionary or instance of
Sourced", "Input should be less than or equal to 60"); every loader (specs, catalogs, a
design.json, name maps) turns each error into one sentence through ``sentence`` instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from railplan.identifiers import shorten

_KINDS = {
    "dict_type": "a mapping of fields (key: value)",
    "model_type": "a mapping of fields (key: value)",
    "model_attributes_type": "a mapping of fields (key: value)",
    "typed_dict_type": "a mapping of fields (key: value)",
    "dataclass_type": "a mapping of fields (key: value)",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "string_type": "text",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "none_required": "empty (null)",
}


def _shown(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    return shorten(repr(value), 60)


def path_of(loc: Sequence[str | int]) -> str:
    """A JSON path: ``switches[5].ports_per_cage``."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def sentence(err: Mapping[str, Any]) -> str:
    """One pydantic error (an item of ``ValidationError.errors()``) as a plain sentence."""
    kind = str(err.get("type", ""))
    ctx = err.get("ctx") or {}
    given = err.get("input")
    if kind in _KINDS:
        return f"must be {_KINDS[kind]}, not {_shown(given)}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        word = {
            "greater_than_equal": "at least",
            "less_than_equal": "at most",
            "greater_than": "above",
            "less_than": "below",
        }[kind]
        bound = next(iter(ctx.values()), "?")
        return f"must be {word} {bound}, not {_shown(given)}"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected', '?')}, not {_shown(given)}"
    if kind == "missing":
        return "is missing; add it"
    if kind == "extra_forbidden":
        return "unknown field; remove it or check its spelling"
    if kind in ("too_long", "too_short"):
        most = ctx.get("max_length", ctx.get("min_length", "?"))
        word = "at most" if kind == "too_long" else "at least"
        return f"must list {word} {most} items, not {ctx.get('actual_length', '?')}"
    if kind in ("string_too_long", "string_too_short"):
        most = ctx.get("max_length", ctx.get("min_length", "?"))
        word = "at most" if kind == "string_too_long" else "at least"
        return f"must be {word} {most} characters long"
    if kind == "string_pattern_mismatch":
        return "not a safe name (letters, digits, '.', '_', '-', starting with a letter or digit)"
    if kind == "union_tag_invalid" or kind == "union_tag_not_found":
        return f"must name one of its kinds ({ctx.get('expected_tags', '?')})"
    msg = str(err.get("msg", "is not valid")).removeprefix("Value error, ")
    msg = msg.removeprefix("Assertion failed, ")
    if msg.startswith("Input should be "):
        return "must be " + msg.removeprefix("Input should be ") + f", not {_shown(given)}"
    return msg


_PHRASES = (
    ("Input should be less than or equal to", "must be at most"),
    ("Input should be greater than or equal to", "must be at least"),
    ("Input should be less than", "must be below"),
    ("Input should be greater than", "must be above"),
    ("Input should be a valid integer", "must be a whole number"),
    ("Input should be a valid number", "must be a number"),
    ("Input should be", "must be"),
)


def plain(message: str) -> str:
    """A message worded by pydantic or click (``Input should be less than or equal to 64``)
    in railplan's words (``must be at most 64``)."""
    for old, new in _PHRASES:
        message = message.replace(old, new)
    return message
