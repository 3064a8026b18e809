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
from collections.abc import Sequence
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import NotRequired, TypedDict

from railplan.design import limits, row_columns, row_decode, row_text
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
from railplan.sentences import path_of, sentence
from railplan.spec.schema import ROUTING_POLICIES, TOPOLOGIES
from railplan.spec.tiers import normal_ratio

FORMAT_VERSION = 1
#: at most this many problems are listed, one line each
MAX_PROBLEMS = 10
MAX_INT = 1_000_000_000
MAX_FLOAT = 1e9
#: kept for callers that read it; the per-list bounds are ``limits.MAX_ROWS``
MAX_ROWS = max(limits.MAX_ROWS.values())

_ID = Annotated[str, Field(pattern=ID_PATTERN)]
_OPTIONAL_ID = Annotated[str, Field(pattern=f"(?:{ID_PATTERN})|^$")]
_TEXT = Annotated[str, Field(max_length=1000, pattern=r"^[^\x00-\x1f\x7f]*$")]
_INT = Annotated[int, Field(ge=-1, le=MAX_INT, strict=True)]
_COUNT = Annotated[int, Field(ge=0, le=MAX_INT, strict=True)]
_FLOAT = Annotated[float, Field(ge=-MAX_FLOAT, le=MAX_FLOAT, allow_inf_nan=False)]


def _ints(low: int, high: int) -> Any:
    """An integer from ``low`` to ``high`` (a JSON integer: ``1e8`` or ``true`` is refused)."""
    return Annotated[int, Field(ge=low, le=high, strict=True)]


def _floats(low: float, high: float) -> Any:
    return Annotated[float, Field(ge=low, le=high, allow_inf_nan=False)]


def _ratio(value: str) -> str:
    """The spec's own ratio rule (``railplan.spec.tiers.normal_ratio``), in normal form."""
    normal = normal_ratio(value)
    if normal != value:
        raise ValueError(f"write the ratio as {normal!r} (railplan's normal form)")
    return value


_RATIO = Annotated[str, Field(max_length=24), AfterValidator(_ratio)]
_PORT = _ints(0, limits.MAX_RADIX - 1)
_GBPS = _ints(1, limits.MAX_GBPS)
_PLANE = _ints(0, limits.MAX_PLANES - 1)
_RAIL = _ints(-1, limits.MAX_RAILS - 1)
_PLACE = _ints(-1, 4 * limits.MAX_NODES)
_U = _ints(1, limits.MAX_U)
_COORD = _floats(-limits.MAX_COORD_M, limits.MAX_COORD_M)
_LENGTH = _floats(-limits.MAX_LENGTH_M, limits.MAX_LENGTH_M)
_TIER_ROLES = Literal["leaf", "tor", "leaf-a", "leaf-b", "rail", "spine", "core"]

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
#: every number's domain, so none implies more work than the largest design railplan builds
#: (a radix of 10^8 would lay out 10^8 ports; a cage of 0 ports divides by zero)
_SPECIAL: dict[tuple[type, str], Any] = {
    (Switch, "role"): Literal[tuple(ROLE_TIER)],
    (Switch, "radix"): _ints(1, limits.MAX_RADIX),
    (Switch, "plane"): _PLANE,
    (Switch, "port_speed_gbps"): _GBPS,
    (Switch, "ports_per_cage"): _ints(1, limits.MAX_PORTS_PER_CAGE),
    (Switch, "up_from_port"): _ints(0, limits.MAX_RADIX - 1),
    (Switch, "up_speed_gbps"): _ints(0, limits.MAX_GBPS),
    (Switch, "up_ports_per_cage"): _ints(0, limits.MAX_PORTS_PER_CAGE),
    (Switch, "rail"): _RAIL,
    (Switch, "su"): _PLACE,
    (Switch, "pod"): _PLACE,
    (Switch, "rack"): _PLACE,
    (Link, "kind"): Literal[LINK_KINDS],
    (Link, "a_port"): _PORT,
    (Link, "b_port"): _PORT,
    (Link, "rate_gbps"): _GBPS,
    (Link, "plane"): _PLANE,
    (Link, "rail"): _RAIL,
    (Node, "index"): _ints(0, limits.MAX_ROWS["nodes"]),
    (Node, "su"): _PLACE,
    (Node, "pod"): _PLACE,
    (Node, "rack"): _PLACE,
    (Device, "ports"): _ints(1, limits.MAX_RADIX),
    (Device, "ports_per_plane"): _ints(1, limits.MAX_RADIX),
    (Device, "port_speed_gbps"): _GBPS,
    (Device, "index"): _ints(0, limits.MAX_ROWS["nodes"]),
    (Device, "rack"): _PLACE,
    (Device, "su"): _PLACE,
    (NodeShape, "gpus"): _ints(1, 64),
    (NodeShape, "nics"): _ints(1, 64),
    (NodeShape, "ports_per_nic"): _ints(1, 4),
    (NodeShape, "port_speed_gbps"): _GBPS,
    (NodeShape, "ports_per_cage"): _ints(1, limits.MAX_PORTS_PER_CAGE),
    (NodeShape, "port_plane"): tuple.__class_getitem__((_PLANE, ...)),
    (NodeShape, "port_rail"): tuple.__class_getitem__((_ints(0, limits.MAX_RAILS - 1), ...)),
    (Sizing, "tiers"): _ints(1, 3),
    (Sizing, "radix"): _ints(1, limits.MAX_RADIX),
    (Sizing, "oversubscription"): _RATIO,
    (Sizing, "leaf_down"): _ints(0, limits.MAX_RADIX),
    (Sizing, "leaf_up"): _ints(0, limits.MAX_RADIX),
    (Sizing, "su_nodes"): _ints(0, limits.MAX_ROWS["nodes"]),
    (Sizing, "sus"): _ints(0, limits.MAX_ROWS["nodes"]),
    (Sizing, "pods"): _ints(0, limits.MAX_ROWS["nodes"]),
    (Sizing, "lower_bound_switches"): _ints(0, limits.MAX_ROWS["switches"]),
    (Sizing, "notes"): Annotated[tuple[_TEXT, ...], Field(max_length=64)],
    (Sizing, "reserved_per_leaf"): _ints(0, limits.MAX_RADIX),
    (Sizing, "attachment"): Literal["auto", "single-tor", "dual-tor"],
    (TierSizing, "role"): _TIER_ROLES,
    (TierSizing, "down_gbps"): _GBPS,
    (TierSizing, "up_gbps"): _ints(0, limits.MAX_GBPS),
    (TierSizing, "down_ports"): _ints(0, limits.MAX_RADIX),
    (TierSizing, "up_ports"): _ints(0, limits.MAX_RADIX),
    (TierSizing, "oversubscription"): _RATIO,
    (Routing, "policy"): Literal[tuple(p for p in ROUTING_POLICIES if p != "default")],
    (Routing, "hash_fields"): Annotated[
        tuple[Literal["src_ip", "dst_ip", "proto", "src_port", "dst_port"], ...],
        Field(max_length=5),
    ],
    (Routing, "adaptive_classes"): Annotated[
        tuple.__class_getitem__((_ints(0, 15), ...)), Field(max_length=16)
    ],
    (Rack, "kind"): Literal["compute", "network"],
    (Rack, "row"): _ints(0, 4 * limits.MAX_NODES),
    (Rack, "position"): _ints(0, 4 * limits.MAX_NODES),
    (Rack, "x_m"): _COORD,
    (Rack, "y_m"): _COORD,
    (Rack, "height_u"): _ints(8, limits.MAX_U),
    (Placement, "rack"): _ID,
    (Placement, "u"): _U,
    (Placement, "height_u"): _U,
    (Cable, "length_m"): _LENGTH,
    (PlantSegment, "seq"): _ints(1, limits.MAX_PIECES),
    (PlantSegment, "length_m"): _LENGTH,
    (PatchPanel, "u"): _U,
    (PatchPanel, "height_u"): _U,
    (PatchPanel, "ports"): _ints(0, 100_000),
    (PatchPanel, "used"): _ints(0, 100_000),
    (PatchPanel, "cassettes"): _ints(0, 4096),
    (Design, "topology"): Literal[TOPOLOGIES],
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


def _rows(owner: type, key: str) -> Any:
    """``list[<owner's row type>]`` of at most the largest design's rows, built at run time."""
    return Annotated[
        list.__class_getitem__(_row_type(owner)), Field(max_length=limits.MAX_ROWS[key])
    ]


@cache
def _design_type() -> Any:
    """The whole file: header fields, the node shape, sizing, routing and the lists."""
    parts = {
        "format": Literal[1],
        "name": _ID,
        "topology": Literal[TOPOLOGIES],
        "gpus": _ints(1, limits.MAX_GPUS),
        "planes": _ints(1, limits.MAX_PLANES),
        "shape": _row_type(NodeShape),
        "sizing": _row_type(Sizing),
        "routing": _row_type(Routing),
        "spec": dict[str, Any],
        "nodes": _rows(Node, "nodes"),
        "switches": _rows(Switch, "switches"),
        "links": _rows(Link, "links"),
        "racks": NotRequired[_rows(Rack, "racks")],
        "placements": NotRequired[_rows(Placement, "placements")],
        "cables": NotRequired[_rows(Cable, "cables")],
        "devices": NotRequired[_rows(Device, "devices")],
        "panels": NotRequired[_rows(PatchPanel, "panels")],
        "segments": NotRequired[_rows(PlantSegment, "segments")],
    }
    design = TypedDict("DesignFile", parts)  # type: ignore[misc]
    design.__pydantic_config__ = _CONFIG  # type: ignore[attr-defined]
    return TypeAdapter(design)


def _problems(exc: ValidationError, where: str) -> str:
    lines = []
    for err in exc.errors()[:MAX_PROBLEMS]:
        path = path_of(err["loc"])
        msg = sentence(err)
        lines.append(f"{where}: {shorten(path or 'top level', 100)}: {shorten(msg, 200)}")
    more = exc.error_count() - MAX_PROBLEMS
    if more > 0:
        lines.append(f"{where}: ... and {more} more problems")
    return "\n".join(lines)


def _cross_field(
    doc: dict[str, Any],
    columns: dict[str, dict[str, Sequence[Any]]],
    objects: dict[str, tuple[Any, ...]] | None = None,
) -> list[str]:
    """Fields that bound each other inside one row (before any of them is used to lay ports out)."""
    problems = []
    shape = doc["shape"]
    ports = shape["nics"] * shape["ports_per_nic"]
    if len(shape["port_plane"]) != ports or len(shape["port_rail"]) != ports:
        problems.append(
            f"shape: port_plane and port_rail must list each of the "
            f"{shape['nics']} x {shape['ports_per_nic']} node ports once"
        )
    built = objects or {}
    switches = _fields(doc, columns, built, "switches", up_from_port=0, radix=None)
    switches |= _fields(doc, columns, built, "switches", up_ports_per_cage=0, up_speed_gbps=0)
    cased = zip(
        switches["up_from_port"],
        switches["radix"],
        switches["up_ports_per_cage"],
        switches["up_speed_gbps"],
        strict=True,
    )
    for i, (up, radix, up_ppc, up_speed) in enumerate(cased):
        if not up:
            continue  # (most switches: one speed)
        if not (up < radix and up_ppc >= 1):
            problems.append(
                f"switches[{i}].up_from_port: {up} needs up_ports_per_cage of at least 1 and "
                f"a radix above it (radix {radix})"
            )
        if not up_speed:
            problems.append(f"switches[{i}].up_speed_gbps: ports from {up} on need a speed")
    devices = _fields(doc, columns, built, "devices", ports=None, ports_per_plane=None)
    for i, (count, per_plane) in enumerate(
        zip(devices["ports"], devices["ports_per_plane"], strict=True)
    ):
        if count % per_plane:
            problems.append(
                f"devices[{i}].ports_per_plane: {per_plane} does not divide its {count} ports"
            )
    return problems


def _fields(
    doc: dict[str, Any],
    columns: dict[str, dict[str, Sequence[Any]]],
    objects: dict[str, tuple[Any, ...]],
    key: str,
    **defaults: Any,
) -> dict[str, Sequence[Any]]:
    """Some fields of a row list as columns: from ``columns`` when the list was read column
    by column, from ``objects`` when it was decoded into its rows, else from its checked rows
    (a left-out field at its default)."""
    if key in objects:
        return {name: [getattr(row, name) for row in objects[key]] for name in defaults}
    if key in columns:
        return {name: columns[key][name] for name in defaults}
    rows = doc.get(key, ())
    return {name: [row.get(name, default) for row in rows] for name, default in defaults.items()}


#: the row lists of a design.json and the dataclass of each row
_LISTS: dict[str, type] = {
    "nodes": Node,
    "switches": Switch,
    "links": Link,
    "racks": Rack,
    "placements": Placement,
    "cables": Cable,
    "devices": Device,
    "panels": PatchPanel,
    "segments": PlantSegment,
}


def _checked_doc(data: dict[str, Any], where: str) -> dict[str, Any]:
    """The whole file through the row-by-row check; its problems, one line each, if any."""
    try:
        doc: dict[str, Any] = _design_type().validate_python(data)
    except ValidationError as exc:
        raise DesignFileError(_problems(exc, where)) from None
    return doc


def _fast_doc(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The checked file and its row lists' columns when every list passes column by column
    (``row_columns``) and the rest, lists left empty, passes the same check; None sends the
    file to ``_checked_doc``, which words the problems (a file both accept gives one dict)."""
    lists = {key: data[key] for key in _LISTS if key in data}
    columns = {}
    for key, rows in lists.items():
        checked = row_columns.checked_columns(rows, _LISTS[key], _field_type)
        if checked is None:
            return None
        columns[key] = checked
    head = {**data, **{key: [] for key in lists}}
    try:
        doc: dict[str, Any] = _design_type().validate_python(head)
    except ValidationError:
        return None
    return {**doc, **lists}, columns


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
    for key, most in limits.MAX_ROWS.items():
        rows = data.get(key)
        if isinstance(rows, list) and len(rows) > most:
            raise DesignFileError(
                f"{where}: {key}: {len(rows):,} rows, more than the largest design railplan "
                f"builds has ({most:,}); plan the cluster in parts"
            )
    fast = _fast_doc(data)
    doc, columns = fast if fast is not None else (_checked_doc(data, where), {})
    problems = _cross_field(doc, columns)
    if problems:
        raise DesignFileError("\n".join(f"{where}: {p}" for p in problems[:MAX_PROBLEMS]))
    return _design(doc, columns)


def text_design(text: str, optional: frozenset[str]) -> Design | None:
    """The Design of a design.json's text when its row lists, read straight from the text
    (``row_text``: the lines ``design_to_json`` writes) or else column by column
    (``row_columns``), and its header all pass; None when anything would need the row check
    or be refused (the caller then parses the text and ``validated_design`` words why).

    ``optional`` names the fields the writer leaves out at their default.
    """
    readers = {
        key: row_text.row_reader(owner, _field_type, optional) for key, owner in _LISTS.items()
    }

    def read(
        text: str, start: int, end: int, key: str
    ) -> dict[str, Sequence[Any]] | tuple[Any, ...] | None:
        """msgspec's rows where it takes the row type, else the columns of the row patterns."""
        reader, owner = readers[key], _LISTS[key]
        assert reader is not None  # (split_document reads only a list with a reader)
        if row_decode.decoder(owner, reader) is not None:
            return row_decode.read_objects(text, start, end, owner, reader)
        return row_text.read_rows(text, start, end, reader)

    split = row_text.split_document(text, readers, read)
    if split is None:
        return None
    values, columns, objects = split
    for key, owner in _LISTS.items():
        if key in values:  # a list not in the written form (or not a list at all)
            checked = row_columns.checked_columns(values[key], owner, _field_type)
            if checked is None:
                return None
            columns[key] = checked
    for key, most in limits.MAX_ROWS.items():
        if key in columns and _row_count(columns[key]) > most:
            return None
        if key in objects and len(objects[key]) > most:
            return None
    try:
        doc: dict[str, Any] = _design_type().validate_python(
            {**values, **{key: [] for key in (*columns, *objects)}}
        )
    except ValidationError:
        return None
    if _cross_field(doc, columns, objects):
        return None
    return _design(doc, columns, objects)


def _row_count(columns: dict[str, Sequence[Any]]) -> int:
    return len(next(iter(columns.values())))


def _design(
    doc: dict[str, Any],
    columns: dict[str, dict[str, Sequence[Any]]],
    objects: dict[str, tuple[Any, ...]] | None = None,
) -> Design:
    """The Design of a checked file: rows built from their columns where they were read so,
    or as ``objects`` already built."""
    shape = doc["shape"]
    built = objects or {}

    def build(owner: type, key: str) -> tuple[Any, ...]:
        if key in built:
            return built[key]
        return row_columns.built(owner, doc.get(key, []), columns.get(key))

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


def design_json_schema() -> dict[str, Any]:
    """JSON Schema of a design.json (``railplan schema --design``): every field, its bounds and
    its closed choices, as the loader enforces them. What no schema can say (the wiring agrees
    with the embedded spec) is re-derived at load (``railplan.pipeline.rederive``)."""
    schema: dict[str, Any] = _design_type().json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "railplan design.json (format 1)"
    return schema
