"""A row list in the written form decoded by msgspec straight into its frozen dataclasses.

``row_text`` reads a list written by ``design_to_json`` with one regular expression per row
and then converts and builds column by column in Python; at 131,072 GPUs that is about twice
the time of ``json.loads`` on the same file. Here the same text is first held to the same
rules in one match without groups (``RowReader.form``: every row as ``design_to_json`` writes
it, each field's pattern the one ``row_text`` derives from the pydantic type the row check
uses), then decoded by msgspec, which builds each row's dataclass in C (msgspec 0.18+,
"Supported Types: dataclasses"). The numbers' bounds (``ge``/``le``) are then checked on the
built rows' columns. So a list read here is the list ``row_text`` reads: the same keys in the
same order (no duplicate, no unknown key, a left-out field only where the writer leaves it
out, at the dataclass default both fill in), the same strings (no escapes), the same numbers
(``int`` of the digits; msgspec's float parsing is correctly rounded, as Python's ``float``;
``tests/test_design_decode.py`` holds the two to each other on random numbers).

A row type msgspec cannot take as ``row_text`` does (a field whose dataclass annotation is not
the type of its text rule, a ``__post_init__``, a default factory, a class without slots) is
not decoded here: ``row_text.read_rows`` reads it as before (``validation.text_design`` picks
the reader per row type, so a list is matched once either way).
"""

from __future__ import annotations

import dataclasses
import typing
from functools import cache
from operator import attrgetter
from typing import Any

from railplan.design.row_text import FieldRule, RowReader, within_bounds

#: the Python type a text rule's values have (the bool rule converts with ``"true".__eq__``)
_BOOL_PATTERN = "(true|false)"


def _value_type(rule: FieldRule) -> type:
    if rule.pattern == _BOOL_PATTERN:
        return bool
    if rule.convert is int or rule.convert is float:
        return rule.convert
    return str


@cache
def decoder(owner: type, reader: RowReader) -> Any:
    """msgspec's decoder of a list of ``owner`` rows; None when ``owner`` is not a frozen,
    slotted dataclass whose every field is annotated with the type its text rule reads."""
    if not dataclasses.is_dataclass(owner) or "__slots__" not in owner.__dict__:
        return None
    if hasattr(owner, "__post_init__"):
        return None
    hints = typing.get_type_hints(owner)
    fields = dataclasses.fields(owner)
    if any(f.default_factory is not dataclasses.MISSING for f in fields):
        return None
    rules = {name: rule for name, _, rule, _, _ in reader.fields}
    if any(hints[f.name] is not _value_type(rules[f.name]) for f in fields):
        return None
    import msgspec.json  # only where a design file is read (about 15 ms)

    return msgspec.json.Decoder(list[owner])  # type: ignore[valid-type]


def read_objects(
    text: str, start: int, end: int, owner: type, reader: RowReader
) -> tuple[Any, ...] | None:
    """The rows of ``text[start:end]`` (between ``[\\n`` and ``\\n]``, as ``row_text.read_rows``
    takes them) as ``owner`` objects; None unless every row is in the written form, within
    its fields' bounds, and ``owner`` can be decoded here."""
    dec = decoder(owner, reader)
    if dec is None or reader.form.fullmatch(text, start, end) is None:
        return None
    import msgspec

    try:
        rows = dec.decode(text[start - 2 : end + 2])
    except msgspec.DecodeError:  # a number past msgspec's range (the form allows 18 digits)
        return None
    for name, _, rule, _, _ in reader.fields:
        if rule.low is None:
            continue
        if not within_bounds(list(map(attrgetter(name), rows)), rule):
            return None
    return tuple(rows)
