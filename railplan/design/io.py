"""A Design to JSON text and back: lossless, stable key order, one item per line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import fields
from typing import Any

from railplan.design.types import (
    Cable,
    Design,
    Link,
    Node,
    NodeShape,
    Placement,
    Rack,
    Routing,
    Sizing,
    Switch,
)

FORMAT_VERSION = 1


def _row(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


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
    lists = (
        ("cables", design.cables),
        ("links", design.links),
        ("nodes", design.nodes),
        ("placements", design.placements),
        ("racks", design.racks),
        ("switches", design.switches),
    )
    for key, items in lists:
        body = ",\n".join(_lines(items))
        sep = "," if key != lists[-1][0] else ""
        parts.append(f'"{key}":[\n{body}\n]{sep}' if body else f'"{key}":[]{sep}')
    parts.append("}")
    return "\n".join(parts) + "\n"


def _tuples(row: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in row.items()}


def design_from_dict(data: dict[str, Any]) -> Design:
    """Rebuild a Design from the dict parsed out of ``design_to_json`` output."""
    if data.get("format") != FORMAT_VERSION:
        raise ValueError(f"unsupported design format {data.get('format')!r}")
    return Design(
        name=data["name"],
        topology=data["topology"],
        gpus=data["gpus"],
        planes=data["planes"],
        shape=NodeShape(**_tuples(data["shape"])),
        sizing=Sizing(**_tuples(data["sizing"])),
        routing=Routing(**_tuples(data["routing"])),
        nodes=tuple(Node(**r) for r in data["nodes"]),
        switches=tuple(Switch(**r) for r in data["switches"]),
        links=tuple(Link(**r) for r in data["links"]),
        spec=data.get("spec", {}),
        racks=tuple(Rack(**r) for r in data.get("racks", [])),
        placements=tuple(Placement(**r) for r in data.get("placements", [])),
        cables=tuple(Cable(**r) for r in data.get("cables", [])),
    )


def design_from_json(text: str) -> Design:
    return design_from_dict(json.loads(text))
