"""A block of design rows encoded by msgspec in C, when that gives ``json.dumps``'s very bytes.

``design_to_json`` writes each row as ``json.dumps(row, sort_keys=True, separators=(",", ":"))``
(``ensure_ascii`` on), one row a line. msgspec's encoder with ``order="sorted"`` writes a
dataclass with the same keys in the same order and the same compact separators, 3-4 times as
fast, but differs from ``json`` in four places, each guarded here so the bytes never differ:

- a character outside ASCII is written as UTF-8 (``json``: an escape, ``\\u00e9`` for é), and DEL as it is
  (``json``: ``\\u007f``): a block with either is left to ``json``;
- escapes: a block with any backslash at all (a quote, backslash or control character in a
  string) is left to ``json``, whose escapes are then the ones written;
- floats: msgspec writes the shortest round-trip digits as ``repr`` does, but switches to
  exponents at other points (``1e16`` for ``1e+16``, ``0.00001`` for ``1e-05``; NaN and
  infinities as ``null``): a block whose float fields hold a value outside 0 or
  [1e-4, 1e16) in magnitude is left to ``json`` (inside it the two agree digit for digit,
  ``tests/test_row_encode.py`` checks a million random values);
- rows: the encoder writes a list as one line; the rows are split where ``},{`` stands, which is
  safe only when it stands exactly once between each two rows (never inside a string).

Only a row type without sparse fields (written only when not their default) qualifies, and each
field is taken to hold its annotated type (as every design railplan builds or reads does).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from functools import cache
from operator import attrgetter
from typing import Any

_ENCODER: list[Any] = []


def encode_rows(items: tuple[Any, ...], owner: type, sparse: Iterable[str]) -> str | None:
    """``",\\n".join`` of every row's ``json.dumps`` (sorted keys, compact), or None when one
    of the guards above leaves the block to ``json``."""
    floats = _float_fields(owner, frozenset(sparse))
    if floats is None or not items:
        return None
    for name in floats:
        if not all(map(_fixed_alike, set(map(attrgetter(name), items)))):
            return None
    import msgspec

    if not _ENCODER:
        _ENCODER.append(msgspec.json.Encoder(order="sorted"))
    try:
        data: bytes = _ENCODER[0].encode(items)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
        return None
    if not data.isascii() or b"\\" in data or b"\x7f" in data:
        return None
    rows = data[1:-1].replace(b"},{", b"},\n{")
    if len(rows) - (len(data) - 2) != len(items) - 1:  # one "},{" between each two rows, no other
        return None
    return rows.decode()


@cache
def _float_fields(owner: type, sparse: frozenset[str]) -> tuple[str, ...] | None:
    """The fields of ``owner`` annotated float; None when it has a sparse or nested field."""
    if not dataclasses.is_dataclass(owner):
        return None
    out = []
    for f in dataclasses.fields(owner):
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        if f.name in sparse or not _plain(kind):
            return None
        if "float" in kind:
            out.append(f.name)
    return tuple(out)


_PLAIN = frozenset({"str", "int", "float", "bool"})


def _plain(kind: str) -> bool:
    """A scalar annotation msgspec and ``json`` write alike (with the guards above)."""
    return kind in _PLAIN


def _fixed_alike(value: object) -> bool:
    """A number msgspec writes as ``json`` does: not a float, or 0 or of magnitude in [1e-4,
    1e16) (both then write ``repr``'s fixed-point digits)."""
    if type(value) is not float:
        return type(value) is int or type(value) is bool
    return value == 0 or (math.isfinite(value) and 1e-4 <= abs(value) < 1e16)
