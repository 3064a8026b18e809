"""A design.json's fields type-checked with pydantic before a Design is built from them.

The pydantic models are derived from the frozen dataclasses in ``design.types`` (so a field
added there is checked here without a second list to keep in step), with bounds by field:
ids and device names match ``railplan.identifiers.ID_PATTERN`` (they reach scripts and host
files), a role or link kind is one railplan knows, numbers are finite and bounded, free text
has no control characters. What the fields mean together (ports in range, one cable per link,
no overlapping racks) is ``railplan.validate.check``'s job, run by ``DesignSource`` next.
"""

from __future__ import annotations

import dataclasses
import typing
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import NotRequired, TypedDict

from railplan.design.types import (
    LINK_KINDS,
    ROLE_TIER,
    Cable,
    Design,
    Device,
    Link,
    Node,
    NodeShape,
    PatchPanel,
    Placement,
    PlantSegment,
    Rack,
    Routing,
    Sizing,
    Switch,
    TierSizing,
)
from railplan.errors import DesignFileError
from railplan.identifiers import ID_PATTERN, shorten

FORMAT_VERSION = 1
#: at most this many problems are listed, one line each
MAX_PROBLEMS = 10
MAX_INT = 1_000_000_000
MAX_FLOAT = 1e9
MAX_ROWS = 50_000_000

_ID = Annotated[str, Field(pattern=ID_PATTERN)]
_OPTIONAL_ID = Annotated[str, Field(pattern=f"(?:{ID_PATTERN})|^$")]
_TEXT = Annotated[str, Field(max_length=1000, pattern=r"^[^\x00-\x1f\x7f]*$")]
_INT = Annotated[int, Field(ge=-1, le=MAX_INT)]
_COUNT = Annotated[int, Field(ge=0, le=MAX_INT)]
_FLOAT = Annotated[float, Field(ge=-MAX_FLOAT, le=MAX_FLOAT, allow_inf_nan=False)]

#: fields whose value is an id (checked against ID_PATTERN); "" allowed for the optional ones
_IDS = {
    "id",
    "a_device",
    "b_device",
    "device",
    "link_id",
    "media",
    "name",
    "model",
    "nic_model",
    "switch_model",
}
_OPTIONAL_IDS = {"transceiver_a", "transceiver_b", "group"}
_SPECIAL: dict[tuple[type, str], Any] = {
    (Switch, "role"): Literal[tuple(ROLE_TIER)],
    (Link, "kind"): Literal[LINK_KINDS],
    (Placement, "rack"): _ID,
    (Rack, "kind"): Literal["compute", "network"],
    (Design, "topology"): _ID,
    (NodeShape, "port_plane"): tuple[Annotated[int, Field(ge=0, le=64)], ...],
    (NodeShape, "port_rail"): tuple[Annotated[int, Field(ge=0, le=1024)], ...],
}
_CONFIG = ConfigDict(extra="forbid", allow_inf_nan=False)


def _field_type(owner: type, name: str, hint: Any) -> Any:
    """The constrained pydantic type of one dataclass field."""
    if (owner, name) in _SPECIAL:
        return _SPECIAL[(owner, name)]
    if hint is str:
        if name in _IDS:
            return _ID
        return _OPTIONAL_ID if name in _OPTIONAL_IDS else _TEXT
    if hint is bool:
        return bool
    if hint is int:
        return _COUNT if name in ("gpus", "planes", "tiers", "radix") else _INT
    if hint is float:
        return _FLOAT
    if typing.get_origin(hint) is tuple:
        (item, *_rest) = typing.get_args(hint)
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            return tuple.__class_getitem__((_row_type(item), ...))
        return tuple[_field_type(owner, name, item), ...]  # type: ignore[misc]
    return hint


@cache
def _row_type(owner: type) -> Any:
    """A TypedDict with the fields of the dataclass ``owner``, each constrained (pydantic
    validates a TypedDict into a plain dict, twice as fast as into a model)."""
    hints = typing.get_type_hints(owner)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(owner):
        kind = _field_type(owner, f.name, hints[f.name])
        has_default = f.default is not dataclasses.MISSING or (
            f.default_factory is not dataclasses.MISSING
        )
        fields[f.name] = NotRequired[kind] if has_default else kind
    row = TypedDict(f"{owner.__name__}Row", fields)  # type: ignore[misc]
    row.__pydantic_config__ = _CONFIG  # type: ignore[attr-defined]
    return row


def _rows(owner: type) -> Any:
    """``list[<owner's row type>]``, built at run time."""
    return list.__class_getitem__(_row_type(owner))


@cache
def _design_type() -> Any:
    """The whole file: header fields, the node shape, sizing, routing and the lists."""
    parts = {
        "format": Literal[1],
        "name": _ID,
        "topology": _ID,
        "gpus": _COUNT,
        "planes": Annotated[int, Field(ge=1, le=64)],
        "shape": _row_type(NodeShape),
        "sizing": _row_type(Sizing),
        "routing": _row_type(Routing),
        "spec": NotRequired[dict[str, Any]],
        "nodes": _rows(Node),
        "switches": _rows(Switch),
        "links": _rows(Link),
        "racks": NotRequired[_rows(Rack)],
        "placements": NotRequired[_rows(Placement)],
        "cables": NotRequired[_rows(Cable)],
        "devices": NotRequired[_rows(Device)],
        "panels": NotRequired[_rows(PatchPanel)],
        "segments": NotRequired[_rows(PlantSegment)],
    }
    design = TypedDict("DesignFile", parts)  # type: ignore[misc]
    design.__pydantic_config__ = _CONFIG  # type: ignore[attr-defined]
    return TypeAdapter(design)


def _problems(exc: ValidationError, where: str) -> str:
    lines = []
    for err in exc.errors()[:MAX_PROBLEMS]:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "string_pattern_mismatch":
            msg = (
                "not a safe name (letters, digits, '.', '_', '-', starting with a letter or digit)"
            )
        elif err["type"] == "extra_forbidden":
            msg = "unknown field"
        lines.append(f"{where}: {shorten(path or 'top level', 100)}: {shorten(msg, 200)}")
    more = exc.error_count() - MAX_PROBLEMS
    if more > 0:
        lines.append(f"{where}: ... and {more} more problems")
    return "\n".join(lines)


def validated_design(data: Any, where: str = "design") -> Design:
    """A Design from parsed JSON whose every field has its type and bounds; else DesignFileError."""
    if not isinstance(data, dict):
        raise DesignFileError(f"{where}: not a railplan design file (a JSON object is expected)")
    if data.get("format") != FORMAT_VERSION:
        if "format" not in data:
            raise DesignFileError(
                f'{where}: this JSON is not a railplan design (it has no "format" key); give '
                "a spec .yaml or a design.json written by railplan plan SPEC -o DIR"
            )
        raise DesignFileError(
            f"{where}: not a railplan design file (format {shorten(repr(data.get('format')))}, "
            f"expected {FORMAT_VERSION}); write one with railplan plan -o DIR"
        )
    missing = [
        k for k in ("name", "topology", "shape", "sizing", "nodes", "links") if k not in data
    ]
    if missing:
        raise DesignFileError(
            f"{where}: not a railplan design file (no {', '.join(missing)}); write one with "
            "railplan plan SPEC -o DIR"
        )
    keys = ("nodes", "switches", "links", "racks", "placements", "cables", "devices", "panels")
    for key in (*keys, "segments"):
        rows = data.get(key)
        if isinstance(rows, list) and len(rows) > MAX_ROWS:
            raise DesignFileError(f"{where}: {len(rows):,} {key} is beyond what railplan plans")
    try:
        doc: dict[str, Any] = _design_type().validate_python(data)
    except ValidationError as exc:
        raise DesignFileError(_problems(exc, where)) from None
    shape = doc["shape"]
    ports = shape["nics"] * shape["ports_per_nic"]
    if len(shape["port_plane"]) != ports or len(shape["port_rail"]) != ports:
        raise DesignFileError(
            f"{where}: shape: port_plane and port_rail must list each of the "
            f"{shape['nics']} x {shape['ports_per_nic']} node ports once"
        )

    def build(owner: type, key: str) -> tuple[Any, ...]:
        return tuple(owner(**row) for row in doc.get(key, ()))

    return Design(
        name=doc["name"],
        topology=doc["topology"],
        gpus=doc["gpus"],
        planes=doc["planes"],
        shape=NodeShape(**shape),
        sizing=Sizing(
            **{
                **doc["sizing"],
                "tier_sizing": tuple(TierSizing(**t) for t in doc["sizing"].get("tier_sizing", ())),
            }
        ),
        routing=Routing(**doc["routing"]),
        nodes=build(Node, "nodes"),
        switches=build(Switch, "switches"),
        links=build(Link, "links"),
        spec=doc.get("spec", {}),
        racks=build(Rack, "racks"),
        placements=build(Placement, "placements"),
        cables=build(Cable, "cables"),
        devices=build(Device, "devices"),
        panels=build(PatchPanel, "panels"),
        segments=build(PlantSegment, "segments"),
    )
