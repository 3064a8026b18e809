"""The spec file's fields: pydantic models, so every error names its field path."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from railplan.identifiers import ID_PATTERN, ID_RULE, is_id, shown
from railplan.spec.costs import BillSpec, CostsSpec, SparesSpec
from railplan.spec.labels import parse_label_template
from railplan.spec.requirements import RequirementsSpec
from railplan.spec.tiers import (
    RailOnlySpec,
    ReservedPortsSpec,
    TierSpec,
    normal_ratio,
    ratio_value,
    yaml11_ratio,
)

TOPOLOGIES = ("roft", "rail-only", "matrix", "fat-tree", "single-switch")
#: ``fabric.topology: auto``: railplan picks the family (``railplan plan`` and the TUI take the
#: recommendation of ``railplan recommend``; the library's ``plan`` the field rule)
AUTO_TOPOLOGY = "auto"
ROUTING_POLICIES = ("default", "ecmp", "dmodk", "deterministic", "adaptive")
U_HEIGHT_M = 0.04445  # one rack unit, EIA-310
#: CP-SAT takes a 32-bit random seed
MAX_SEED = 2**31 - 1
#: a floor coordinate, in metres: 10 km either way is far beyond any data hall
MAX_COORD_M = 10_000.0
MAX_NETWORK_RACKS = 4096


def _catalog_id(value: str) -> str:
    if not is_id(value):
        raise ValueError(f"{shown(value)} is not a catalog id; ids use {ID_RULE} characters")
    return value


#: a catalog part id (node, NIC, switch): checked before it is looked up or echoed
CatalogId = Annotated[str, AfterValidator(_catalog_id)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ClusterSpec(_Strict):
    """The compute side: how many GPUs and what each node looks like."""

    gpus: int = Field(ge=1, le=4_194_304, description="Total GPUs in the cluster")
    node: CatalogId | None = Field(
        None, description="Node model id from the catalog (e.g. dgx-h100)"
    )
    gpus_per_node: int | None = Field(None, ge=1, le=64)
    nic: CatalogId | None = Field(None, description="NIC model id from the catalog")
    nics_per_node: int | None = Field(None, ge=1, le=64)
    ports_per_nic: int | None = Field(None, ge=1, le=4)
    port_speed_gbps: int | None = Field(None, gt=0, le=3200)
    bonding: Literal["auto", "bond", "independent"] = Field(
        "auto",
        description="How a multi-port NIC's ports are used: bond (one logical NIC, RoCE LAG "
        "such as mlx5_bond_0 or bnxt_re_bond0; QPs alternate over its ports), independent "
        "(each port its own rail endpoint), or auto (bond on a Matrix, else independent)",
    )


class MatrixSpec(_Strict):
    """Matrix options: which node ports go to leaf group A (the rest go to group B)."""

    a_ports: list[Annotated[int, Field(ge=0, le=255)]] | None = Field(
        None,
        max_length=256,
        description="Node port numbers wired to group A (default: first port of each dual-"
        "port NIC, else the first half of the NICs)",
    )
    links_per_pair: int | None = Field(
        None, ge=1, le=1024, description="Parallel links per A-B leaf pair"
    )


class SingleSwitchSpec(_Strict):
    """Single-switch options: one switch per plane, or a redundant pair joined by ISLs."""

    redundant: bool = Field(
        False,
        description="Two switches per plane joined by an inter-switch link (ISL) bundle, rails "
        "alternating over them, as NVIDIA DGX BasePOD builds 4 or 8 nodes on two QM9700",
    )


class FatTreeSpec(_Strict):
    tors_per_rack: Literal[1, 2] = 1


class RoutingSpec(_Strict):
    policy: Literal["default", "ecmp", "dmodk", "deterministic", "adaptive"] = Field(
        "default",
        description="default: dmodk on an InfiniBand ROFT or fat-tree (the subnet manager's "
        "fat-tree routing, OpenSM ftree), ecmp on Ethernet, deterministic on Matrix, rail-only "
        "and single-switch",
    )
    adaptive_classes: list[Annotated[int, Field(ge=0, le=15)]] = Field(
        default_factory=list, max_length=16, description="IB SLs / classes with AR"
    )


class FabricSpec(_Strict):
    """The network: topology family, allowed switches and how it is sized."""

    topology: Literal["auto", "roft", "rail-only", "matrix", "fat-tree", "single-switch"] = Field(
        "auto",
        description="Topology family; auto: railplan plan takes the recommendation (railplan "
        "recommend: the cheapest design meeting the requirements), the library's plan() the "
        "field rule (a single switch where the cluster fits one, else ROFT)",
    )
    switches: list[CatalogId] | None = Field(
        None,
        description="Allowed switch model ids (default: every catalog switch at the NIC speed)",
    )
    oversubscription: str = Field(
        "1:1",
        description="Leaf down:up bandwidth, e.g. '1:1', '3:1', '17:15' or a decimal '1.133'",
    )
    planes: int = Field(1, ge=1, le=16)
    plane_assignment: Literal["auto", "port", "nic"] = "auto"
    whole_su: bool = Field(True, description="Provision whole scalable units (leaves and uplinks)")
    tiers: Literal["auto", 2, 3] = "auto"
    leaf: TierSpec | None = Field(
        None,
        description="Leaf (ToR) tier: its own switch shortlist, uplink speed and ratio; its "
        "down ports run at the NIC port speed",
    )
    spine: TierSpec | None = Field(
        None,
        description="Spine tier: its own switch shortlist, uplink speed toward the cores and "
        "ratio; its down ports run at the leaf uplink speed",
    )
    core: TierSpec | None = Field(
        None,
        description="Core (super-spine) tier: its own switch shortlist; its ports run at the "
        "spine uplink speed",
    )
    attachment: Literal["auto", "single-tor", "dual-tor"] = Field(
        "auto",
        description="How a NIC's ports meet the leaves: auto (each node port is its own rail), "
        "single-tor (every port of a NIC on one leaf), dual-tor (the ports of each NIC on two "
        "different leaves that serve the same nodes: a ToR pair)",
    )
    reserved_ports: list[ReservedPortsSpec] = Field(
        default_factory=list,
        description="Leaf down ports kept from the nodes: free, for spare nodes, or for an "
        "attached device (ROFT)",
    )
    rail_only: RailOnlySpec = Field(default_factory=RailOnlySpec)
    single_switch: SingleSwitchSpec = Field(default_factory=lambda: SingleSwitchSpec())
    min_spines: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="Fewest spines per plane of a 2-tier fabric (per pod in 3 tiers), e.g. "
        "Juniper's AI data center JVD 'at least 4 spines'; the count rises to the next one "
        "that spreads every leaf's uplinks evenly (a divisor of the uplinks)",
    )
    su_nodes: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="ROFT: nodes per scalable unit (default: as many as a leaf's down ports "
        "hold); each leaf then takes the uplinks that keep the ratio for the ports its SU "
        "uses, e.g. NVIDIA's DGX SuperPOD SU of 32 nodes on 2:1 leaves: 16 uplinks each",
    )
    matrix: MatrixSpec = Field(default_factory=lambda: MatrixSpec())
    fat_tree: FatTreeSpec = Field(default_factory=FatTreeSpec)
    routing: RoutingSpec = Field(default_factory=RoutingSpec)
    spine_groups: int = Field(
        1,
        ge=1,
        le=64,
        description="ROFT: split each plane's rails into this many groups, each with spines of "
        "its own (NVIDIA's B300 Ethernet SuperPOD at 16 SU: 2); a leaf reaches only its "
        "group's spines, so two tiers hold more rails",
    )

    @field_validator("oversubscription", mode="before")
    @classmethod
    def _yaml11_sexagesimal(cls, v: object) -> object:
        return yaml11_ratio(v)

    @field_validator("oversubscription")
    @classmethod
    def _ratio(cls, v: str) -> str:
        return normal_ratio(v)

    @field_validator("switches")
    @classmethod
    def _nonempty(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and not v:
            raise ValueError("list at least one switch model id, or leave it out")
        return list(dict.fromkeys(v)) if v is not None else None  # a repeated id counts once

    @model_validator(mode="after")
    def _groups_in_roft(self) -> FabricSpec:
        if self.spine_groups > 1 and self.topology != "roft":
            raise ValueError(
                f"spine_groups: rail-grouped spines are a ROFT option, not {self.topology}; "
                "leave spine_groups at 1 or use topology roft"
            )
        return self

    @model_validator(mode="after")
    def _tiers_fit(self) -> FabricSpec:
        if self.core is not None and (
            self.core.up_gbps is not None or self.core.oversubscription is not None
        ):
            raise ValueError("core: the core tier has no uplinks; give it only switches")
        if self.leaf is not None and self.leaf.oversubscription is not None:
            given = "oversubscription" in self.model_fields_set
            if given and self.oversubscription != self.leaf.oversubscription:
                raise ValueError(
                    f"oversubscription {self.oversubscription} and leaf.oversubscription "
                    f"{self.leaf.oversubscription} disagree; give the leaf ratio once"
                )
            self.oversubscription = self.leaf.oversubscription
        return self

    @property
    def oversubscription_ratio(self) -> float:
        return float(ratio_value(self.oversubscription))

    @property
    def oversubscription_fraction(self) -> Fraction:
        return ratio_value(self.oversubscription)


class TrayPointSpec(_Strict):
    """A named point of a given cable-tray graph, in floor metres."""

    id: str = Field(min_length=1, max_length=80)
    x_m: float = Field(ge=-MAX_COORD_M, le=MAX_COORD_M)
    y_m: float = Field(ge=-MAX_COORD_M, le=MAX_COORD_M)


class TraySpec(_Strict):
    """Overhead cable trays: along every row and across at the row ends, or a given graph."""

    height_m: float = Field(
        default=2.3, gt=0, le=10, description="Tray height above the floor (above the rack tops)"
    )
    routing: Literal["rows", "graph"] = Field(
        default="rows",
        description="rows: a tray above each row joined by cross trays; graph: points + segments",
    )
    cross_trays: Literal["ends", "ends-and-middle"] = Field(
        default="ends", description="Where the cross trays joining the rows run (rows routing)"
    )
    end_clearance_m: float = Field(
        default=0.6,
        ge=0,
        le=20,
        description="Distance from the longest row's ends to the cross trays",
    )
    points: list[TrayPointSpec] = Field(
        default_factory=list,
        max_length=10_000,
        description="Tray points of a given graph (routing: graph)",
    )
    segments: list[tuple[str, str]] = Field(
        default_factory=list,
        max_length=20_000,
        description="Straight tray runs between two point ids; trays meet only at points",
    )


class PlacementRulesSpec(_Strict):
    """Optional placement rules and the solver's limits."""

    leaves_in_su_rack: bool = Field(
        default=False, description="Every leaf of a scalable unit goes in that SU's network rack"
    )
    spines_in_network_row: bool = Field(
        default=False, description="Spines and cores go in the dedicated network row"
    )
    deterministic_time_s: float | None = Field(
        default=None,
        gt=0,
        le=86_400,
        description=(
            "CP-SAT work budget in deterministic seconds (OR-Tools max_deterministic_time: "
            "machine-independent work units, not wall-clock seconds); default: scales with "
            "the number of switch groups. Giving it (or --time-limit) also runs CP-SAT's joint "
            "model on a small placement the search and its kicks leave outside "
            "relative_gap_limit. Old name: time_limit_s (deprecated)"
        ),
    )
    relative_gap_limit: float = Field(
        default=0.005,
        ge=0,
        lt=1,
        description=(
            "Stop once the placement is proven within this share of the optimum (0.005: "
            "0.5%; OR-Tools relative_gap_limit); 0 asks for proven optimality within the budget"
        ),
    )
    random_seed: int = Field(
        default=1, ge=0, le=MAX_SEED, description="CP-SAT random seed (same seed, same answer)"
    )
    num_workers: int = Field(
        default=1,
        ge=1,
        le=64,
        description="CP-SAT workers (more than one run interleaved, still deterministic)",
    )
    group_size: int = Field(
        default=8, ge=1, le=64, description="Largest block of like switches placed as one unit"
    )

    @model_validator(mode="before")
    @classmethod
    def _deprecated_time_limit(cls, data: object) -> object:
        """``time_limit_s`` (deprecated) is the old name of ``deterministic_time_s``."""
        if isinstance(data, dict) and "time_limit_s" in data:
            data = dict(data)
            old = data.pop("time_limit_s")
            if "deterministic_time_s" in data:
                raise ValueError(
                    "give deterministic_time_s only; time_limit_s is its deprecated old name"
                )
            data["deterministic_time_s"] = old
        return data


class LayoutSpec(_Strict):
    """Floor, racks, trays and labels: where everything physically sits and how cables run."""

    nodes_per_rack: int = Field(default=4, ge=1, le=64)
    racks_per_row: int = Field(default=16, ge=1, le=99, description="Compute racks in one row")
    rack_width_m: float = Field(default=0.6, gt=0, le=5)
    rack_depth_m: float = Field(default=1.2, gt=0, le=5)
    aisle_width_m: float = Field(default=1.2, ge=0, le=20, description="Aisle between two rows")
    row_pitch_m: float | None = Field(
        default=None, gt=0, le=50, description="Row to row distance (default: rack depth + aisle)"
    )
    rack_height_u: int = Field(default=42, ge=8, le=60)
    node_height_u: int = Field(default=8, ge=1, le=20, description="Rack units of one GPU node")
    node_first_u: int = Field(
        default=2, ge=1, le=60, description="Lowest U of the first node in a rack"
    )
    node_u: list[Annotated[int, Field(ge=1, le=60)]] | None = Field(
        default=None,
        max_length=64,
        description="Explicit lowest U of each node slot (overrides node_first_u)",
    )
    network_racks: Literal["end-of-row", "middle-of-row", "in-row", "network-row"] = Field(
        default="end-of-row", description="Where the racks for leaves, spines and cores stand"
    )
    network_rack_count: int | Literal["auto"] = Field(
        default="auto",
        description="Network racks in all (auto: enough for the switches' U and power, +25%)",
    )
    network_rack_reserved_u: int = Field(
        default=2,
        ge=0,
        le=20,
        description="U kept free at the top of a network rack (patch panels)",
    )
    network_rack_power_w: float = Field(
        default=30_000, gt=0, le=1_000_000, description="Power budget of one network rack, in W"
    )
    switch_power: Literal["max", "typical"] = Field(
        default="max", description="Switch power figure counted against the rack budget"
    )
    slack_m: float = Field(default=1.0, ge=0, le=20, description="Slack added to every cable")
    trays: TraySpec = Field(default_factory=TraySpec)
    placement: PlacementRulesSpec = Field(default_factory=PlacementRulesSpec)
    label_template: str = Field(
        default="{rack}-U{u:02d}-{device}-{port}",
        max_length=200,
        description="Cable end label; fields: rack, u, device, port, cable, link, plane, rail",
    )
    colour_by: Literal["rail", "plane"] = Field(default="rail", description="Cable colour scheme")

    @field_validator("network_rack_count")
    @classmethod
    def _rack_count(cls, v: int | str) -> int | str:
        if isinstance(v, int) and not 1 <= v <= MAX_NETWORK_RACKS:
            raise ValueError(f"give 'auto' or a count from 1 to {MAX_NETWORK_RACKS}")
        return v

    @model_validator(mode="after")
    def _nodes_fit(self) -> LayoutSpec:
        slots = self.node_slots()
        if len(slots) < self.nodes_per_rack:
            raise ValueError(
                f"node_u lists {len(slots)} slots for {self.nodes_per_rack} nodes per rack; "
                "list one lowest U per node"
            )
        top = max(slots) + self.node_height_u - 1
        if top > self.rack_height_u:
            raise ValueError(
                f"{self.nodes_per_rack} nodes of {self.node_height_u}U from U{min(slots)} reach "
                f"U{top}, above the {self.rack_height_u}U rack; lower nodes_per_rack or "
                "node_height_u"
            )
        ordered = sorted(slots)
        if any(b - a < self.node_height_u for a, b in itertools.pairwise(ordered)):
            raise ValueError(f"node_u slots overlap: nodes are {self.node_height_u}U tall")
        if self.trays.height_m < self.rack_height_u * U_HEIGHT_M:
            raise ValueError(
                f"trays.height_m {self.trays.height_m} is below the top of a "
                f"{self.rack_height_u}U rack ({self.rack_height_u * U_HEIGHT_M:.2f} m); raise it"
            )
        try:
            parse_label_template(self.label_template)
        except ValueError as exc:
            raise ValueError(f"label_template {shown(self.label_template)}: {exc}") from None
        return self

    def node_slots(self) -> list[int]:
        """Lowest U of each node slot in a compute rack."""
        if self.node_u is not None:
            return list(self.node_u)
        return [self.node_first_u + k * self.node_height_u for k in range(self.nodes_per_rack)]

    @property
    def pitch_m(self) -> float:
        return (
            self.row_pitch_m
            if self.row_pitch_m is not None
            else self.rack_depth_m + self.aisle_width_m
        )


class PhaseSpec(_Strict):
    """One phase of a build-out: a name and the GPUs installed by its end."""

    name: str = Field(min_length=1, max_length=40, pattern=ID_PATTERN)
    gpus: int = Field(ge=1, le=4_194_304, description="GPUs installed once this phase is done")


class Spec(_Strict):
    """A whole railplan spec file."""

    name: str = Field("cluster", min_length=1, max_length=80, pattern=ID_PATTERN)
    cluster: ClusterSpec
    fabric: FabricSpec = Field(default_factory=lambda: FabricSpec())
    layout: LayoutSpec = Field(default_factory=LayoutSpec)
    bill: BillSpec = Field(default_factory=BillSpec)
    costs: CostsSpec = Field(default_factory=CostsSpec)
    spares: SparesSpec = Field(default_factory=SparesSpec)
    requirements: RequirementsSpec | None = Field(
        None,
        description="What railplan recommend (and plan with topology auto) requires of a "
        "design (default: every pair test at full rate, all-to-all pace >= 0.9)",
    )
    phases: list[PhaseSpec] = Field(
        default_factory=list,
        max_length=64,
        description="Build-out phases, smallest first, up to cluster.gpus (the final build, "
        "a last phase of its own when no phase has it). Each phase is cut from the final "
        "design, so its cabling is a subset of the next phase's",
    )

    @model_validator(mode="after")
    def _phases_grow(self) -> Spec:
        if not self.phases:
            return self
        sizes = [p.gpus for p in self.phases]
        if any(b <= a for a, b in itertools.pairwise(sizes)):
            raise ValueError(f"phases: GPUs must grow phase by phase, got {sizes}")
        if sizes[-1] > self.cluster.gpus:
            raise ValueError(
                f"phases: the last phase has {sizes[-1]} GPUs, more than cluster.gpus "
                f"({self.cluster.gpus}), the final build every phase is cut from"
            )
        names = [p.name for p in self.phases]
        if len(set(names)) != len(names):
            raise ValueError("phases: give every phase its own name")
        return self

    @model_serializer(mode="wrap")
    def _without_no_phases(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A spec without phases dumps as it did before phases existed (same design.json)."""
        data: dict[str, Any] = handler(self)
        if not self.phases:
            data.pop("phases", None)
        return data
