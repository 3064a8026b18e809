"""A design.json read straight from its text: each row list by one regular expression per row type.

``design_to_json`` writes every row on a line of its own, keys sorted, compact separators. A
list written that way is read here by one compiled pattern of the row (``re.findall``: a C
loop, about twice as fast as ``json.loads`` over the same rows, and no dict per row), and
each field's column is converted and bounded in one pass. Every field's pattern is derived
from the very pydantic type the row check uses (``validation._field_type``): an id is the
id pattern itself, a choice the alternation of its values, a number a JSON number whose
value is then held to the type's ``ge``/``le``, free text a JSON string without escapes or
control characters of at most the type's length. What a pattern takes, the strict row check
takes too, unchanged (``tests/test_design_text.py`` holds each field's pattern to pydantic on
random values), so a list read here is the list the row check returns.

Anything else (a key out of order, a space after a colon, an escape in a string, an integer
in a float field, a duplicate key, a number out of range) is "not read here": the caller
then parses the file with ``json.loads`` and the row check words the problems as before.
So this is a shortcut, never a second set of rules.

The rest of the file (header fields, the node shape, the spec, any row list not in the
written form) is parsed by ``json``'s own scanner at its position in the text, with the
number rules of ``safe_load.load_json``.

``RowReader.form`` holds a whole list to the same row patterns in one match without groups;
``row_decode`` uses it before msgspec builds the rows (the faster reader of a list whose row
type msgspec takes), and ``read_rows`` stays the reader of any other.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from collections.abc import Callable, Sequence
from functools import cache
from typing import Annotated, Any, Literal

from railplan.identifiers import ID_PATTERN
from railplan.safe_load import JSON_NUMBERS

#: a JSON integer of at most 18 digits (the row types' bounds are far below 10**18)
_INT = r"-?(?:0|[1-9][0-9]{0,17})"
#: a JSON number with a fraction or an exponent (``json.loads`` makes it a float; an integer
#: in a float field is one strict mode refuses, so it is not read here)
_FLOAT = _INT + r"(?:\.[0-9]{1,40}(?:[eE][-+]?[0-9]{1,4})?|[eE][-+]?[0-9]{1,4})"
#: a character of a JSON string that stands for itself and that no row text refuses: no
#: quote, backslash (an escape), control character or lone surrogate
_PLAIN_CHAR = r'[^"\\\x00-\x1f\x7f\ud800-\udfff]'
_OPTIONAL_ID_PATTERN = f"(?:{ID_PATTERN})|^$"
_TEXT_PATTERN = r"^[^\x00-\x1f\x7f]*$"
_WHITESPACE = re.compile(r"[ \t\n\r]*")


@dataclasses.dataclass(frozen=True)
class FieldRule:
    """How one field is read: its pattern (one group), how its text becomes the value, and
    the bounds the value must lie within (None: the pattern says all)."""

    pattern: str
    convert: Callable[[str], Any] | None
    low: Any = None
    high: Any = None

    @property
    def bare(self) -> str:
        """The pattern with its group made non-capturing (a whole list checked in one match)."""
        at = self.pattern.index("(")  # the value's group: first, or just inside the quote
        return self.pattern[:at] + "(?:" + self.pattern[at + 1 :]


#: the metadata classes a field's constraints come as (pydantic 2.14 gives ``allow_inf_nan``
#: its own ``AllowInfNan`` class where 2.13 put it in the general metadata)
_KNOWN_METADATA = {"Ge", "Le", "Strict", "MaxLen", "_PydanticGeneralMetadata", "AllowInfNan"}


def _general(info: Any, key: str) -> Any:
    """A constraint kept by name in a field's metadata (``pattern``, ``allow_inf_nan``),
    whichever metadata class pydantic keeps it in."""
    for item in info.metadata:
        if type(item).__name__ in _KNOWN_METADATA and key in getattr(item, "__dict__", {}):
            return item.__dict__[key]
    return None


def field_rule(kind: Any) -> FieldRule | None:
    """The text rule of one pydantic field type; None for a type this module does not read."""
    if kind is bool:
        return FieldRule("(true|false)", "true".__eq__)
    if typing.get_origin(kind) is Literal:
        values = typing.get_args(kind)
        if not values or not all(isinstance(v, str) for v in values):
            return None
        escaped = sorted(map(re.escape, values), key=len, reverse=True)
        return FieldRule('"(' + "|".join(escaped) + ')"', None)
    if typing.get_origin(kind) is not Annotated:
        return None
    base, *extras = typing.get_args(kind)
    if len(extras) != 1 or not hasattr(extras[0], "metadata"):
        return None
    info = extras[0]
    if {type(m).__name__ for m in info.metadata} - _KNOWN_METADATA:
        return None
    low = next((m.ge for m in info.metadata if type(m).__name__ == "Ge"), None)
    high = next((m.le for m in info.metadata if type(m).__name__ == "Le"), None)
    longest = next((m.max_length for m in info.metadata if type(m).__name__ == "MaxLen"), None)
    pattern = _general(info, "pattern")
    if base is int:
        strict = any(type(m).__name__ == "Strict" and m.strict for m in info.metadata)
        if not strict or low is None or high is None or pattern is not None:
            return None  # lax mode would take "1" or 1.0 for 1
        return FieldRule(f"({_INT})", int, low, high)
    if base is float:
        if _general(info, "allow_inf_nan") is not False or low is None or high is None:
            return None
        return FieldRule(f"({_FLOAT})", float, low, high)
    if base is str:
        if pattern == ID_PATTERN and longest is None:
            return FieldRule('"(' + ID_PATTERN[1:-1] + ')"', None)
        if pattern == _OPTIONAL_ID_PATTERN and longest is None:
            return FieldRule('"((?:' + ID_PATTERN[1:-1] + ')?)"', None)
        if pattern == _TEXT_PATTERN and longest is not None:
            return FieldRule(f'"({_PLAIN_CHAR}{{0,{longest}}})"', None)
    return None


@dataclasses.dataclass(frozen=True)
class RowReader:
    """One row type's compiled line pattern and, per field in dataclass order, where its
    group is, its rule and its default (``optional``: a field ``design_to_json`` leaves out
    at its default, so its key may be missing)."""

    pattern: re.Pattern[str]
    fields: tuple[tuple[str, int, FieldRule, bool, Any], ...]
    #: every row of a list, ``,\n`` between them, in one match without groups (``fullmatch``
    #: over the text between ``[\n`` and ``\n]``): the same rows ``pattern`` takes
    form: re.Pattern[str]


@cache
def row_reader(
    owner: type, field_type: Callable[[type, str, Any], Any], optional: frozenset[str]
) -> RowReader | None:
    """The reader of ``owner``'s rows as ``design_to_json`` writes them; None if a field has
    no text rule, or if the first key (sorted) may be left out."""
    hints = typing.get_type_hints(owner)
    by_name = {f.name: f for f in dataclasses.fields(owner)}
    names = sorted(by_name)
    if not names or names[0] in optional:
        return None
    parts = []
    bare = []
    groups: dict[str, tuple[int, FieldRule, bool]] = {}
    group = 1  # group 1 is the row's opening brace: every line is matched, a row or not
    for i, name in enumerate(names):
        f = by_name[name]
        rule = field_rule(field_type(owner, name, hints[name]))
        if rule is None:
            return None
        key = ("," if i else "") + re.escape(json.dumps(name)) + ":"
        member = key + rule.pattern
        if name in optional:
            if f.default is dataclasses.MISSING:
                return None
            parts.append(f"({member})?")  # the outer group says whether the key is there
            bare.append(f"(?:{key}{rule.bare})?")
            groups[name] = (group + 2, rule, True)
            group += 2
        else:
            parts.append(member)
            bare.append(key + rule.bare)
            groups[name] = (group + 1, rule, False)
            group += 1
    row = r"(\{)" + "".join(parts) + r"\}(?:,\n|\Z)"
    pattern = re.compile(f"^(?:{row}|[^\n]*(?:\n|\\Z))", re.MULTILINE)
    fields = tuple(
        (f.name, *groups[f.name], f.default if f.default is not dataclasses.MISSING else None)
        for f in dataclasses.fields(owner)
    )
    one = r"\{" + "".join(bare) + r"\}"
    return RowReader(pattern, fields, re.compile(f"{one}(?:,\n{one})*+"))


def within_bounds(column: Sequence[Any], rule: FieldRule) -> bool:
    """Whether every value of ``column`` lies within ``rule``'s bounds (none: always)."""
    if not column or rule.low is None:
        return True
    return bool(min(column) >= rule.low and max(column) <= rule.high)


def read_rows(
    text: str, start: int, end: int, reader: RowReader
) -> dict[str, Sequence[Any]] | None:
    """Every field of the rows in ``text[start:end]`` (the lines between ``[\\n`` and
    ``\\n]``; ``start`` begins a line) as a column, defaults filled in; None unless every
    line is one row the reader takes whole."""
    # Each match starts a line (``^``) and ends where the next line starts: a row with its
    # ``,\n`` (or the end), else the line as it is, the brace group left empty. So the
    # matches cover the text line by line, and every line is a row when every match has
    # its brace. (``endpos``: as if the text ended at ``end``.)
    matches = reader.pattern.findall(text, start, end)
    groups = list(zip(*matches, strict=True))
    del matches
    if not groups or groups[0].count("{") != len(groups[0]):
        return None
    columns: dict[str, Sequence[Any]] = {}
    for name, index, rule, optional, default in reader.fields:
        given: Sequence[str] = groups[index - 1]
        if optional:
            present = groups[index - 2]
            given = [t for t, p in zip(given, present, strict=True) if p]
        values = list(map(rule.convert, given)) if rule.convert is not None else given
        if not within_bounds(values, rule):
            return None
        if optional and len(values) < len(present):
            it = iter(values)
            values = [next(it) if p else default for p in present]
        columns[name] = values
    return columns


#: ``json``'s scanner with ``safe_load``'s number rules (a refused number: not read here)
_DECODER = json.JSONDecoder(**JSON_NUMBERS)


def _list_end(text: str, pos: int) -> int:
    """Where the first ``\\n]`` from ``pos`` is (-1: none): its ``]`` found by ``find`` of one
    character (a ``memchr``; a two-character search is several times slower), a few tries,
    then the two-character search."""
    for _ in range(64):
        close = text.find("]", pos)
        if close < 0:
            return -1
        if text[close - 1] == "\n":
            return close - 1
        pos = close + 1
    return text.find("\n]", pos)


def _skip(text: str, pos: int) -> int:
    """The position after the JSON whitespace at ``pos``."""
    space = _WHITESPACE.match(text, pos)
    return space.end() if space is not None else pos


def split_document(
    text: str,
    readers: dict[str, RowReader | None],
    read: Callable[[str, int, int, str], dict[str, Sequence[Any]] | tuple[Any, ...] | None]
    | None = None,
) -> tuple[dict[str, Any], dict[str, dict[str, Sequence[Any]]], dict[str, tuple[Any, ...]]] | None:
    """The top-level object of ``text``: its plain values, the columns of each row list (a
    key of ``readers``) written one row per line, and the lists read as built rows instead;
    None when the text is not one JSON object with unique keys, or a value holds a number
    ``safe_load`` refuses. ``read(text, start, end, key)`` reads a list (``start`` and
    ``end`` as ``read_rows`` takes them) as columns or as a tuple of rows, or None; without
    it, ``read_rows`` does.

    Every value is parsed where it stands, by ``json``'s scanner, except a row list that its
    reader takes whole; a list its reader does not take is parsed too (a list of dicts, left
    to the caller's checks). Together they are what ``json.loads(text)`` gives.
    """
    scan = _DECODER.raw_decode
    values: dict[str, Any] = {}
    columns: dict[str, dict[str, Sequence[Any]]] = {}
    objects: dict[str, tuple[Any, ...]] = {}
    try:
        pos = _skip(text, 0)
        if text[pos : pos + 1] != "{":
            return None
        pos = _skip(text, pos + 1)
        while True:
            if text[pos : pos + 1] != '"':
                return None
            key, pos = scan(text, pos)
            pos = _skip(text, pos)
            if text[pos : pos + 1] != ":" or key in values or key in columns or key in objects:
                return None
            pos = _skip(text, pos + 1)
            got: dict[str, Sequence[Any]] | tuple[Any, ...] | None = None
            reader = readers.get(key)
            if reader is not None and text.startswith("[\n{", pos):
                end = _list_end(text, pos + 1)
                if end > 0:
                    got = (
                        read(text, pos + 2, end, key)
                        if read is not None
                        else read_rows(text, pos + 2, end, reader)
                    )
            if isinstance(got, tuple):
                objects[key] = got
                pos = end + 2
            elif got is not None:
                columns[key] = got
                pos = end + 2
            else:
                values[key], pos = scan(text, pos)
            pos = _skip(text, pos)
            if text[pos : pos + 1] == ",":
                pos = _skip(text, pos + 1)
                continue
            if text[pos : pos + 1] != "}":
                return None
            break
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None
    if _skip(text, pos + 1) != len(text):
        return None
    return values, columns, objects
