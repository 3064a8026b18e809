"""A Design to JSON text and back: lossless, stable key order, one item per line."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import fields
from functools import cache
from json.encoder import encode_basestring_ascii  # what json.dumps uses for a str (ASCII)
from operator import attrgetter
from typing import Any

from railplan.design.row_encode import encode_rows
from railplan.design.types import (
    Design,
)
from railplan.design.validation import FORMAT_VERSION, text_design, validated_design
from railplan.gc_pause import paused

#: fields added after format 1 was fixed: written only when they differ from this default, so
#: designs that do not use them keep their exact bytes
SPARSE: dict[str, Any] = {
    "up_from_port": 0,
    "up_speed_gbps": 0,
    "up_ports_per_cage": 0,
    "spare": False,
    "tier_sizing": (),
    "reserved_per_leaf": 0,
    "attachment": "auto",
    "domain_nodes": 1,
    "spine_groups": 1,
}
_WRITTEN_SPARSE = frozenset(SPARSE)


def _row(obj: Any) -> dict[str, Any]:
    out = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        if f.name in SPARSE and value == SPARSE[f.name]:
            continue
        if f.name == "tier_sizing":
            value = [_row(t) for t in value]
        out[f.name] = value
    return out


def _lines(items: Iterable[Any]) -> Iterator[str]:
    """Each item as ``json.dumps`` of its row (sorted keys, compact): the reference encoding."""
    for item in items:
        yield json.dumps(_row(item), sort_keys=True, separators=(",", ":"))


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _float_text(value: float) -> str:
    """``json.dumps`` of a float: its repr, or NaN / Infinity / -Infinity."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _encoded(values: list[Any]) -> list[str]:
    """``json.dumps`` of every value of one column, by the column's one type where it has one."""
    kinds = set(map(type, values))
    if kinds == {str}:
        return list(map(encode_basestring_ascii, values))
    if kinds == {int}:
        return list(map(int.__repr__, values))
    if kinds == {float}:
        if all(map(math.isfinite, values)):
            return list(map(float.__repr__, values))
        return list(map(_float_text, values))
    return list(map(_dump, values))


@cache
def _row_plan(owner: type) -> tuple[tuple[str, ...], str] | None:
    """The sorted field names of ``owner`` and a ``%`` template of one row; None when the first
    sorted field may be left out (sparse), so a row's first comma could not be fixed here."""
    names = tuple(sorted(f.name for f in fields(owner)))
    if not names or names[0] in SPARSE or "tier_sizing" in names:
        return None
    parts = []
    for i, name in enumerate(names):
        if name in SPARSE:
            parts.append("%s")  # ',"name":value', or nothing when the value is the default
        else:
            parts.append(("" if i == 0 else ",") + json.dumps(name) + ":%s")
    return names, "{" + "".join(parts) + "}"  # field names are identifiers: no "%" in them


def _rows_text(items: tuple[Any, ...]) -> str:
    """``",\n".join(_lines(items))``: by msgspec where it writes the same bytes
    (``row_encode``), else column by column: each field's values are read and encoded in one
    pass (C loops), then every row is one ``%`` of its template."""
    kinds = set(map(type, items))
    plan = _row_plan(next(iter(kinds))) if len(kinds) == 1 else None
    if plan is None:
        return ",\n".join(_lines(items))
    fast = encode_rows(items, next(iter(kinds)), _WRITTEN_SPARSE)  # msgspec, where it agrees
    if fast is not None:
        return fast
    names, template = plan
    columns = []
    for name in names:
        values = list(map(attrgetter(name), items))
        if name in SPARSE:
            default = SPARSE[name]
            key = "," + json.dumps(name) + ":"
            columns.append([key + _dump(v) if v != default else "" for v in values])
        else:
            columns.append(_encoded(values))
    row: Callable[[tuple[str, ...]], str] = template.__mod__
    return ",\n".join(map(row, zip(*columns, strict=True)))


#: rows encoded at a time by ``design_json_chunks``: big enough that the per-block work is
#: negligible, small enough that a block's text (a few MB) is written while the next is made
_BLOCK_ROWS = 32_768


def design_to_json(design: Design) -> str:
    """Serialise a Design to JSON text: stable key order, one node/switch/link per line."""
    return "".join(design_json_chunks(design))


def design_json_chunks(design: Design) -> Iterator[str]:
    """``design_to_json``'s text in pieces, in order: the header, then each row list a block
    of rows at a time (a writer can write one piece while the next is encoded)."""
    head = {
        "format": FORMAT_VERSION,
        "name": design.name,
        "topology": design.topology,
        "gpus": design.gpus,
        "planes": design.planes,
        "shape": _row(design.shape),
        "sizing": _row(design.sizing),
        "routing": _row(design.routing),
        "spec": design.spec,
    }
    yield "".join(
        [
            "{\n",
            *(f"{json.dumps(k)}:{json.dumps(head[k], sort_keys=True)},\n" for k in sorted(head)),
        ]
    )
    lists: tuple[tuple[str, tuple[Any, ...]], ...] = (
        ("cables", design.cables),
        *((("devices", design.devices),) if design.devices else ()),
        ("links", design.links),
        ("nodes", design.nodes),
        *((("panels", design.panels),) if design.panels else ()),
        ("placements", design.placements),
        ("racks", design.racks),
        *((("segments", design.segments),) if design.segments else ()),
        ("switches", design.switches),
    )
    for key, items in lists:
        sep = "," if key != lists[-1][0] else ""
        if not items:
            yield f'"{key}":[]{sep}\n'
            continue
        yield f'"{key}":[\n'
        encoded = _encoded_beside(items)
        if encoded is not None:
            yield encoded
        else:
            yield from _row_blocks(items)
        yield f"]{sep}\n"
    yield "}\n"


def _row_blocks(items: tuple[Any, ...]) -> Iterator[str]:
    """The rows of one list as design.json has them, a block of rows at a time."""
    for start in range(0, len(items), _BLOCK_ROWS):
        more = start + _BLOCK_ROWS < len(items)
        yield _rows_text(items[start : start + _BLOCK_ROWS]) + (",\n" if more else "\n")


#: a row list being encoded in a forked child (``rows_text_beside``): the very tuple, and the
#: call that waits for its text
_BESIDE: list[tuple[tuple[Any, ...], Callable[[], tuple[bytes, int]]]] = []
#: rows from which encoding beside pays for the fork (below, the parent encodes in no time)
BESIDE_FROM_ROWS = 50_000


def rows_text_beside(items: tuple[Any, ...]) -> None:
    """Encode ``items``, a design's row list (its links, say, known before the layout), as
    ``design_json_chunks`` writes them, in a forked child (``railplan.forked.in_child``) while
    the caller goes on; a design written later that holds this very tuple takes the child's
    text instead of encoding the rows again (the same bytes: the child runs the same code; a
    child that fails has the parent encode them). One list at a time; a short list is left to
    the writer."""
    if len(items) < BESIDE_FROM_ROWS:
        return
    from railplan.forked import in_child

    _BESIDE[:] = [(items, in_child(lambda: ("".join(_row_blocks(items)).encode(), 0)))]


def release_beside() -> None:
    """Wait for a child still encoding a row list no design took (the command ends without
    writing, say) and drop its text: no child is left behind."""
    if _BESIDE:
        _, text = _BESIDE.pop()
        text()


def _encoded_beside(items: tuple[Any, ...]) -> str | None:
    """The text of ``items`` encoded beside (taken once), or None when they were not."""
    if not _BESIDE or _BESIDE[0][0] is not items:
        return None
    _, text = _BESIDE.pop()
    return text()[0].decode()


def design_from_dict(data: Any, where: str = "design") -> Design:
    """Rebuild a Design from the dict parsed out of ``design_to_json`` output.

    Every field is type-checked (pydantic, ``design.validation``) first: an untrusted or edited
    design.json raises DesignFileError with one line per problem, never a KeyError.
    """
    return validated_design(data, where)


def design_from_written(text: str) -> Design | None:
    """The Design of a design.json's text when its row lists are as ``design_to_json`` writes
    them and every field passes (``validation.text_design``); None: parse it and check it."""
    return text_design(text, _WRITTEN_SPARSE)


def design_from_json(text: str, where: str = "design") -> Design:
    """Rebuild a Design from ``design_to_json`` text: its row lists read straight from the
    text when they are as written, else parsed and checked row by row, with the same
    refusals. The cyclic collector is paused meanwhile (``railplan/gc_pause.py``): a big
    design is a million acyclic rows, and the collector's walks over them would double the
    time."""
    with paused():
        design = design_from_written(text)
        if design is not None:
            return design
        return design_from_dict(json.loads(text), where)
