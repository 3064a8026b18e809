"""The Design: plain, immutable data (frozen dataclasses) that analyses and renderers consume."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

FORMAT_VERSION = 1

ROLE_TIER = {"leaf": 1, "tor": 1, "leaf-a": 1, "leaf-b": 1, "rail": 1, "spine": 2, "core": 3}
LINK_KINDS = ("node-leaf", "leaf-spine", "spine-core", "leaf-leaf")


@dataclass(frozen=True, slots=True)
class NodeShape:
    """What every node of the cluster looks like (railplan plans homogeneous clusters)."""

    model: str
    gpus: int
    nics: int
    ports_per_nic: int
    port_speed_gbps: int
    nic_model: str
    form_factor: str
    ports_per_cage: int
    #: plane of each node port (index = node port number)
    port_plane: tuple[int, ...]
    #: rail of each node port inside its plane
    port_rail: tuple[int, ...]

    @property
    def ports(self) -> int:
        return self.nics * self.ports_per_nic

    def nic_of(self, port: int) -> int:
        return port // self.ports_per_nic

    def port_name(self, port: int) -> str:
        """Host-side name of a node port, e.g. ``nic3`` or ``nic1.p2``."""
        nic = port // self.ports_per_nic
        if self.ports_per_nic == 1:
            return f"nic{nic}"
        return f"nic{nic}.p{port % self.ports_per_nic + 1}"


@dataclass(frozen=True, slots=True)
class Node:
    """A GPU server."""

    id: str
    index: int
    su: int
    pod: int
    rack: int


@dataclass(frozen=True, slots=True)
class Switch:
    """A switch with its role in the fabric."""

    id: str
    model: str
    role: str
    plane: int
    radix: int
    port_speed_gbps: int
    ports_per_cage: int
    su: int = -1
    pod: int = -1
    group: str = ""
    rail: int = -1
    rack: int = -1

    @property
    def tier(self) -> int:
        return ROLE_TIER[self.role]

    def port_name(self, port: int) -> str:
        """Front-panel name of a logical port: ``P17`` or ``P9/2`` when a cage carries several."""
        if self.ports_per_cage == 1:
            return f"P{port + 1}"
        return f"P{port // self.ports_per_cage + 1}/{port % self.ports_per_cage + 1}"


@dataclass(frozen=True, slots=True)
class Link:
    """A point-to-point link between two ports (a end toward the nodes, b end toward the core)."""

    id: str
    kind: str
    a_device: str
    a_port: int
    b_device: str
    b_port: int
    rate_gbps: int
    plane: int
    rail: int = -1


@dataclass(frozen=True, slots=True)
class Sizing:
    """The figures the construction chose, and the closed-form bounds beside them."""

    tiers: int
    switch_model: str
    radix: int
    oversubscription: str
    leaf_down: int
    leaf_up: int
    su_nodes: int
    sus: int
    pods: int
    lower_bound_switches: int
    whole_su: bool
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Routing:
    """How traffic is routed on this design (consumed by the collision analyzer)."""

    policy: str  # "ecmp", "dmodk", "deterministic", "adaptive"
    hash_fields: tuple[str, ...] = ("src_ip", "dst_ip", "proto", "src_port", "dst_port")
    adaptive_classes: tuple[int, ...] = ()
    description: str = ""


@dataclass(frozen=True, slots=True)
class Rack:
    """A rack on the floor: ``kind`` is ``compute`` or ``network``; x/y of its front-left corner."""

    id: str
    row: int
    position: int
    kind: str
    x_m: float
    y_m: float
    height_u: int


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a device sits: rack id and lowest rack unit (1-based), with its height in U."""

    device: str
    rack: str
    u: int
    height_u: int


@dataclass(frozen=True, slots=True)
class Cable:
    """The physical cable of one link: media part, optics at each end, routed length, labels."""

    id: str
    link_id: str
    media: str
    transceiver_a: str
    transceiver_b: str
    length_m: float
    label_a: str
    label_b: str
    colour: str


@dataclass(frozen=True, slots=True)
class Design:
    """A complete fabric: nodes, switches and links, with how it was sized and is routed."""

    name: str
    topology: str
    gpus: int
    planes: int
    shape: NodeShape
    sizing: Sizing
    routing: Routing
    nodes: tuple[Node, ...]
    switches: tuple[Switch, ...]
    links: tuple[Link, ...]
    spec: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    racks: tuple[Rack, ...] = ()
    placements: tuple[Placement, ...] = ()
    cables: tuple[Cable, ...] = ()

    # -- convenience views (computed, never stored) ---------------------------------------
    def switch_counts(self) -> dict[str, int]:
        """Switches per tier: ``{"leaf", "spine", "core", "total"}``."""
        counts = {"leaf": 0, "spine": 0, "core": 0}
        for sw in self.switches:
            counts[("leaf", "spine", "core")[sw.tier - 1]] += 1
        counts["total"] = len(self.switches)
        return counts

    def link_counts(self) -> dict[str, int]:
        """Links per kind: ``{"node_leaf", "leaf_spine", "spine_core", "leaf_leaf"}``."""
        counts = {k.replace("-", "_"): 0 for k in LINK_KINDS}
        for link in self.links:
            counts[link.kind.replace("-", "_")] += 1
        return counts

    def switch_by_id(self) -> dict[str, Switch]:
        return {s.id: s for s in self.switches}

    def node_by_id(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}


# -- JSON ------------------------------------------------------------------------------------


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
