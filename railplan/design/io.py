"""A Design to JSON text and back: lossless, stable key order, one item per line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import fields
from typing import Any

from railplan.design.types import (
    Design,
)
from railplan.design.validation import FORMAT_VERSION, validated_design

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
    for item in items:
        yield json.dumps(_row(item), sort_keys=True, separators=(",", ":"))


def design_to_json(design: Design) -> str:
    """Serialise a Design to JSON text: stable key order, one node/switch/link per line."""
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
    parts = ["{"]
    for key in sorted(head):
        parts.append(f"{json.dumps(key)}:{json.dumps(head[key], sort_keys=True)},")
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
        body = ",\n".join(_lines(items))
        sep = "," if key != lists[-1][0] else ""
        parts.append(f'"{key}":[\n{body}\n]{sep}' if body else f'"{key}":[]{sep}')
    parts.append("}")
    return "\n".join(parts) + "\n"


def design_from_dict(data: Any, where: str = "design") -> Design:
    """Rebuild a Design from the dict parsed out of ``design_to_json`` output.

    Every field is type-checked (pydantic, ``design.validation``) first: an untrusted or edited
    design.json raises DesignFileError with one line per problem, never a KeyError.
    """
    return validated_design(data, where)


def design_from_json(text: str) -> Design:
    return design_from_dict(json.loads(text))
