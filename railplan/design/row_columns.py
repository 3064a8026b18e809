"""A design.json's row lists checked and built column by column: the same rules, C-speed loops.

``validation`` checks every row of a list against a pydantic TypedDict, which costs a Python-level
dict per row and a validator call per field (2.3 s for the 1.2 million rows of a 131,072-GPU
design). Here each field of a list is one column, checked by the very same constrained field
type (``validation._field_type``) in one pydantic call over the whole column, in strict mode.
Strict mode takes the value unchanged (a JSON integer for an integer, a string for a string, a
float for a float: never ``"1"`` for 1 or ``1`` for 1.0), so what it accepts the row check
accepts too, unchanged: a list that passes here is the list the row check would return. A list
that does not pass goes to the row check, which words every problem as before; so this is a
shortcut, never a second set of rules.

``built`` makes the frozen dataclass instances the same way: each object is allocated once and
every field set through its slot descriptor over the whole column (the dataclass ``__init__``,
one Python call per object with one ``object.__setattr__`` per field, took as long again).
"""

from __future__ import annotations

import dataclasses
import typing
from collections import deque
from collections.abc import Callable, Sequence
from functools import cache
from itertools import repeat
from operator import itemgetter, methodcaller
from typing import Any

from pydantic import TypeAdapter, ValidationError

_MISSING = object()


@cache
def _columns_of(owner: type, field_type: Callable[[type, str, Any], Any]) -> tuple[Any, ...]:
    """Per field: its name, default (``_MISSING`` if none), the column's check and type hint."""
    hints = typing.get_type_hints(owner)
    out = []
    for f in dataclasses.fields(owner):
        if f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{owner.__name__}.{f.name}: a default factory is not a row field")
        kind = field_type(owner, f.name, hints[f.name])
        default = _MISSING if f.default is dataclasses.MISSING else f.default
        out.append((f.name, default, TypeAdapter(list[kind]), hints[f.name]))  # type: ignore[valid-type]
    return tuple(out)


def checked_columns(
    rows: Any, owner: type, field_type: Callable[[type, str, Any], Any]
) -> dict[str, Sequence[Any]] | None:
    """Every field of ``rows`` as a column (defaults filled in) when each row is a dict the row
    check of ``owner`` accepts unchanged; else None.

    None says only "not proven here": the caller then runs the row check, which finds and words
    the problem (or, for a value strict mode refuses and lax mode takes, accepts it).
    """
    if not isinstance(rows, list) or set(map(type, rows)) - {dict}:
        return None
    keys = 0
    columns: dict[str, Sequence[Any]] = {}
    for name, default, adapter, hint in _columns_of(owner, field_type):
        if default is _MISSING:
            try:
                column = list(map(itemgetter(name), rows))
            except KeyError:
                return None
            given = column
        else:
            column = list(map(methodcaller("get", name, _MISSING), rows))
            given = [v for v in column if v is not _MISSING]
            if len(given) < len(column):
                column = [default if v is _MISSING else v for v in column]
            else:
                given = column
        keys += len(given)
        if hint is float and set(map(type, given)) - {float}:
            return None  # an integer where a float goes: even strict mode makes it a float
        try:
            adapter.validate_python(given, strict=True)
        except ValidationError:
            return None
        columns[name] = column
    if keys != sum(map(len, rows)):
        return None  # a row has a key the dataclass does not
    return columns


def built(
    owner: type, rows: list[dict[str, Any]], columns: dict[str, Sequence[Any]] | None = None
) -> tuple[Any, ...]:
    """``tuple(owner(**row) for row in rows)`` for rows of known fields, built column by column
    (from ``columns``, every field's column, when they were read so; ``rows`` is then unused).

    Only for a frozen, slotted dataclass without ``__post_init__`` or default factories (every
    row type of a design); any other class is built row by row.
    """
    fields = dataclasses.fields(owner)
    plain = (
        not hasattr(owner, "__post_init__")
        and "__slots__" in owner.__dict__
        and all(f.default_factory is dataclasses.MISSING for f in fields)
    )
    if columns is not None:
        count = len(columns[fields[0].name])
        if not plain:
            names = [f.name for f in fields]
            return tuple(
                owner(**dict(zip(names, values, strict=True)))
                for values in zip(*(columns[n] for n in names), strict=True)
            )
    else:
        count = len(rows)
        if not plain:
            return tuple(owner(**row) for row in rows)
    if not count:
        return ()
    objects: list[Any] = list(map(object.__new__, repeat(owner, count)))
    for f in fields:
        if columns is not None:
            column = columns[f.name]
        elif f.default is dataclasses.MISSING:
            column = list(map(itemgetter(f.name), rows))
        else:
            column = list(map(methodcaller("get", f.name, f.default), rows))
        deque(map(owner.__dict__[f.name].__set__, objects, column), maxlen=0)
    return tuple(objects)
