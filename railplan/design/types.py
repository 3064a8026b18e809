"""The Design: plain, immutable data (frozen dataclasses) that every later stage consumes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from railplan.slot_init import slot_init

_KIND = attrgetter("kind")
ROLE_TIER = {"leaf": 1, "tor": 1, "leaf-a": 1, "leaf-b": 1, "rail": 1, "spine": 2, "core": 3}
#: ``device-leaf``: an attached device (e.g. a fabric-manager appliance) on reserved leaf ports
LINK_KINDS = ("node-leaf", "leaf-spine", "spine-core", "leaf-leaf", "device-leaf")


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
    #: consecutive nodes that share one NVLink domain (18 trays of an NVL72 rack; 1: the node)
    domain_nodes: int = 1

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
    """A GPU server; a ``spare`` one is a cabled hot spare, not counted in the cluster's GPUs."""

    id: str
    index: int
    su: int
    pod: int
    rack: int
    spare: bool = False


@dataclass(frozen=True, slots=True)
class Device:
    """A non-GPU device cabled to reserved leaf ports (a fabric-manager appliance, ...).

    It stands in the node slot ``index`` (in compute rack ``rack``) that its ports were taken
    from, as a removed node would leave it. Its ports are numbered 0..ports-1, plane by plane:
    port p is in plane ``p // ports_per_plane``.
    """

    id: str
    purpose: str
    ports: int
    ports_per_plane: int
    port_speed_gbps: int
    form_factor: str
    index: int
    rack: int
    su: int = -1

    def plane_of(self, port: int) -> int:
        return port // self.ports_per_plane

    def port_name(self, port: int) -> str:
        return f"P{port + 1}"


@dataclass(frozen=True, slots=True)
class Switch:
    """A switch with its role in the fabric.

    Ports below ``up_from_port`` run at ``port_speed_gbps`` with ``ports_per_cage`` per cage;
    when ``up_from_port`` is above 0 the ports from it on (toward the next tier) run at
    ``up_speed_gbps`` with ``up_ports_per_cage`` per cage, starting on a cage of their own.
    ``radix`` counts the logical ports of both sections.
    """

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
    up_from_port: int = 0
    up_speed_gbps: int = 0
    up_ports_per_cage: int = 0

    @property
    def tier(self) -> int:
        return ROLE_TIER[self.role]

    @property
    def mixed_speed(self) -> bool:
        return self.up_from_port > 0

    def speed_of(self, port: int) -> int:
        """Gb/s of logical ``port``."""
        if self.up_from_port and port >= self.up_from_port:
            return self.up_speed_gbps
        return self.port_speed_gbps

    def cage_of(self, port: int) -> tuple[int, int, int]:
        """(cage index, slot in the cage, ports in that cage) of logical ``port``."""
        if self.up_from_port and port >= self.up_from_port:
            first = -(-self.up_from_port // self.ports_per_cage)
            ppc = self.up_ports_per_cage
            rel = port - self.up_from_port
            return first + rel // ppc, rel % ppc, ppc
        return port // self.ports_per_cage, port % self.ports_per_cage, self.ports_per_cage

    @property
    def cage_count(self) -> int:
        """Cages the switch's logical ports fill."""
        if not self.up_from_port:
            return self.radix // self.ports_per_cage
        first = -(-self.up_from_port // self.ports_per_cage)
        return first + (self.radix - self.up_from_port) // self.up_ports_per_cage

    def cage_ports(self, cage: int) -> int:
        """Logical ports in ``cage`` (0-based)."""
        if self.up_from_port and cage >= -(-self.up_from_port // self.ports_per_cage):
            return self.up_ports_per_cage
        return self.ports_per_cage

    def port_at(self, cage: int, slot: int) -> int | None:
        """The logical port in ``slot`` of ``cage`` (both 0-based), the inverse of ``cage_of``."""
        if not 0 <= cage < self.cage_count or not 0 <= slot < self.cage_ports(cage):
            return None
        first_up = -(-self.up_from_port // self.ports_per_cage) if self.up_from_port else 0
        if self.up_from_port and cage >= first_up:
            return self.up_from_port + (cage - first_up) * self.up_ports_per_cage + slot
        port = cage * self.ports_per_cage + slot
        return port if not self.up_from_port or port < self.up_from_port else None

    def port_name(self, port: int) -> str:
        """Front-panel name of a logical port: ``P17`` or ``P9/2`` when a cage carries several."""
        cage, slot, ppc = self.cage_of(port)
        if ppc == 1:
            return f"P{cage + 1}"
        return f"P{cage + 1}/{slot + 1}"


@slot_init  # built in the hundreds of thousands: see railplan/slot_init.py
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
class TierSizing:
    """How one tier was sized: model, speeds, down and up ports per switch, the asked ratio.

    ``down_ports`` is what one switch offers the tier below (its nodes or lower switches),
    ``up_ports`` what it keeps toward the tier above (held back, uncabled, in the top tier
    when a ratio asks for it).
    """

    role: str
    model: str
    down_gbps: int
    up_gbps: int
    down_ports: int
    up_ports: int
    oversubscription: str


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
    #: per tier, leaf first: its model, port speeds, ports per switch and ratio as sized
    tier_sizing: tuple[TierSizing, ...] = ()
    #: down ports every leaf keeps from the active nodes (kept free, or for spare nodes)
    reserved_per_leaf: int = 0
    #: how a NIC's ports meet the leaves: auto, single-tor or dual-tor
    attachment: str = "auto"
    #: rail groups of a plane, each with spines of its own (``fabric.spine_groups``)
    spine_groups: int = 1


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


@slot_init  # built in the hundreds of thousands: see railplan/slot_init.py
@dataclass(frozen=True, slots=True)
class Placement:
    """Where a device sits: rack id and lowest rack unit (1-based), with its height in U."""

    device: str
    rack: str
    u: int
    height_u: int


@slot_init  # built in the hundreds of thousands: see railplan/slot_init.py
@dataclass(frozen=True, slots=True)
class Cable:
    """The cabling of one link: media part, optics at each end, length, labels.

    ``physical`` names the physical item the link rides from its a end: one id per physical
    cable, so the two links of a twin-port DAC or a 1:2 splitter share it, with ``leg`` saying
    which (``A1-B1``: a-end position 1 to b-end position 1). A link through the fibre plant has
    its pieces in ``Design.segments``; its ``media`` is then the part between the panels and
    ``length_m`` the whole channel.
    """

    id: str
    link_id: str
    media: str
    transceiver_a: str
    transceiver_b: str
    length_m: float
    label_a: str
    label_b: str
    colour: str
    physical: str = ""
    leg: str = ""


@slot_init  # built in the hundreds of thousands: see railplan/slot_init.py
@dataclass(frozen=True, slots=True)
class PlantSegment:
    """One piece of a link through the fibre plant, from the link's a end (``seq`` 1) on.

    A piece is one leg of a physical item: a harness from a module connector to a panel port,
    a trunk position or patch cord between two panels. Ends are a device port (``P9/2``) or a
    panel port with its side (``P07/front``, ``P07/rear``).
    """

    link_id: str
    seq: int
    physical: str
    part: str
    leg: str
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    length_m: float


@dataclass(frozen=True, slots=True)
class PatchPanel:
    """A fibre housing in a rack: its adapter plates and how many of its ports carry a link."""

    id: str
    part: str
    cassette: str
    rack: str
    u: int
    height_u: int
    #: couplers the installed plates give, and those a link uses
    ports: int
    used: int
    cassettes: int


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
    devices: tuple[Device, ...] = ()
    #: the fibre plant: patch panels (also in ``placements``) and the pieces of its links
    panels: tuple[PatchPanel, ...] = ()
    segments: tuple[PlantSegment, ...] = ()

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
        for kind, n in Counter(map(_KIND, self.links)).items():  # counted in C
            counts[kind.replace("-", "_")] += n  # KeyError for a kind no fabric has
        return counts

    def switch_by_id(self) -> dict[str, Switch]:
        return {s.id: s for s in self.switches}

    def node_by_id(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    def device_by_id(self) -> dict[str, Device]:
        return {d.id: d for d in self.devices}

    def port_name(
        self, device: str, port: int, switches: Mapping[str, Switch] | None = None
    ) -> str:
        """A port's name: ``P17``/``P9/2`` on a switch, ``P2`` on a device, ``nic3`` on a node."""
        sw = (switches if switches is not None else self.switch_by_id()).get(device)
        if sw is not None:
            return sw.port_name(port)
        if any(d.id == device for d in self.devices):
            return f"P{port + 1}"
        return self.shape.port_name(port)

    @property
    def active_nodes(self) -> int:
        """Nodes counted in the cluster's GPUs (spares left out)."""
        return sum(1 for n in self.nodes if not n.spare)
