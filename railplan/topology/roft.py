"""Rail-optimized fat-tree (ROFT): closed form, no solver; each tier sized from its own switch."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from itertools import repeat

from railplan.catalog import SwitchModel
from railplan.design import Design, Device, Node, NodeShape, Routing, Sizing, TierSizing
from railplan.errors import InfeasibleError
from railplan.spec import Spec, spec_to_dict
from railplan.topology.clos import (
    CapacityExceeded,
    UpLeaf,
    UpperPlan,
    pod_capacity_groups,
)
from railplan.topology.reserved import Reserved, reserve
from railplan.topology.spine_groups import build_grouped_upper
from railplan.topology.tiers import (
    TierModels,
    TierSplit,
    UpperTiers,
    per_tier,
    tier_speeds,
    tier_split,
    uplinks_for,
    upper_tiers,
)
from railplan.topology.wiring import FabricBuilder


def rails_per_plane(shape: NodeShape) -> int:
    """Rails of one plane: distinct rails among the node ports of plane 0."""
    return len({r for r, p in zip(shape.port_rail, shape.port_plane, strict=True) if p == 0})


def ports_per_rail(shape: NodeShape) -> int:
    """Node ports one node puts on each leaf of its SU (2 with single-tor dual-port NICs)."""
    return shape.port_plane.count(0) // max(1, rails_per_plane(shape))


def node_id(index: int, count: int) -> str:
    return f"node{index + 1:0{id_width(count)}d}"


def id_width(count: int) -> int:
    """Digits of the node ids of ``count`` nodes (at least 4: node0001)."""
    return max(4, len(str(count)))


def make_nodes(
    count: int, su_nodes: int, sus_per_pod: int, nodes_per_rack: int
) -> tuple[Node, ...]:
    width = id_width(count)
    # positional, in Node's field order (id, index, su, pod, rack): 16,384 nodes at 131k GPUs
    return tuple(
        Node(
            f"node{i + 1:0{width}d}",
            i,
            i // su_nodes if su_nodes else 0,
            (i // su_nodes) // sus_per_pod if su_nodes and sus_per_pod else 0,
            i // nodes_per_rack,
        )
        for i in range(count)
    )


def su_members(n_active: int, su_active: int, spares: int, sus: int) -> list[list[str]]:
    """The node ids of each SU as ``su_nodes_of`` numbers and groups them (its nodes of
    ``su``, in order), without making the nodes: the wiring needs only their ids."""
    width = id_width(n_active + sus * spares)
    out: list[list[str]] = []
    start = 1
    for su in range(sus):
        size = max(0, min(su_active, n_active - su * su_active)) + spares
        out.append([f"node{i:0{width}d}" for i in range(start, start + size)])
        start += size
    return out


def su_nodes_of(
    n_active: int, su_active: int, spares: int, sus: int, sus_per_pod: int, nodes_per_rack: int
) -> tuple[Node, ...]:
    """Nodes SU by SU: each SU's active nodes, then its spare nodes; indices run on."""
    if not spares:
        return make_nodes(n_active, su_active, sus_per_pod, nodes_per_rack)
    total = n_active + sus * spares
    width = id_width(total)
    out: list[Node] = []
    for su in range(sus):
        active = max(0, min(su_active, n_active - su * su_active))
        for k in range(active + spares):
            i = len(out)
            out.append(
                Node(
                    id=f"node{i + 1:0{width}d}",
                    index=i,
                    su=su,
                    pod=su // sus_per_pod if sus_per_pod else 0,
                    rack=i // nodes_per_rack,
                    spare=k >= active,
                )
            )
    return tuple(out)


def node_ports(shape: NodeShape, plane: int, rail: int) -> list[int]:
    """The node ports of ``plane`` on ``rail`` (one, or a NIC's ports with single-tor)."""
    ports = [
        port
        for port, (p, r) in enumerate(zip(shape.port_plane, shape.port_rail, strict=True))
        if p == plane and r == rail
    ]
    assert ports, "no node port for plane/rail"
    return ports


def roft(spec: Spec, shape: NodeShape, models: SwitchModel | TierModels) -> Design:
    """Rail k of every node in an SU on leaf k of that SU; leaves spread uplinks over spines."""
    tm = TierModels.of(models)
    n_nodes = spec.cluster.gpus // shape.gpus
    planes = spec.fabric.planes
    speeds = tier_speeds(spec, shape)
    leaf = tier_split(
        tm.leaf, speeds.leaf_down, speeds.leaf_up, spec.fabric.oversubscription_fraction
    )
    upper = upper_tiers(spec, tm, speeds)
    rails, ppr = rails_per_plane(shape), ports_per_rail(shape)
    res = reserve(spec, rails, ppr)
    su_active = res.su_active(leaf.down)
    if su_active < 1:
        raise InfeasibleError(
            f"fabric.reserved_ports: {res.per_leaf} reserved port(s) per leaf leave no node "
            f"port on a {leaf.down}-down-port {tm.leaf.id} leaf; reserve fewer"
        )
    asked = spec.fabric.su_nodes
    if asked is not None:
        if asked > su_active:
            raise InfeasibleError(
                f"fabric.su_nodes: an SU of {asked} nodes needs more than the {leaf.down} down "
                f"ports of a {tm.leaf.id} leaf at {spec.fabric.oversubscription} (it holds "
                f"{su_active} nodes); ask for at most {su_active}"
            )
        su_active = asked
        # a whole SU's leaves keep the ratio for the down ports the SU uses, not the radix's
        leaf = dataclasses.replace(leaf, up=leaf.up_for(res.per_leaf + asked * ppr))
    sus = res.sus(n_nodes, su_active)
    tiers = None if spec.fabric.tiers == "auto" else int(spec.fabric.tiers)
    b = FabricBuilder(leaf.layout, spine=upper.spine_all, core=upper.core)
    per_rack = spec.layout.nodes_per_rack
    members = su_members(n_nodes, su_active, res.spares_per_su, sus)
    plan: UpperPlan | None = None
    up_total = 0
    for plane in range(planes):
        leaves = _wire_leaves(b, spec, shape, members, plane, leaf, res, sus, n_nodes, su_active)
        up_total += sum(lf.up for lf in leaves)
        try:
            plan = build_grouped_upper(
                b, leaves, plane, tiers, rails, upper, spec.fabric.spine_groups
            )
        except CapacityExceeded:
            raise InfeasibleError(_capacity_message(spec, shape, tm, leaf, upper)) from None
    assert plan is not None
    # made once, now that the pods are known (a 2-tier plane has none: pod 0)
    per_pod = plan.groups_per_pod if plan.tiers == 3 else 0
    nodes = su_nodes_of(n_nodes, su_active, res.spares_per_su, sus, per_pod, per_rack)
    detailed = per_tier(spec, tm, speeds) or bool(spec.fabric.reserved_ports)
    lower = planes * rails * sus + upper_lower_bound(up_total, plan.tiers, upper, detailed)
    return Design(
        name=spec.name,
        topology="roft",
        gpus=spec.cluster.gpus,
        planes=planes,
        shape=shape,
        sizing=Sizing(
            tiers=plan.tiers,
            switch_model=tm.leaf.id,
            radix=leaf.layout.radix,
            oversubscription=spec.fabric.oversubscription,
            leaf_down=leaf.down,
            leaf_up=leaf.up,
            su_nodes=su_active,
            sus=sus,
            pods=plan.pods,
            lower_bound_switches=lower,
            whole_su=spec.fabric.whole_su,
            notes=res.notes(su_active, sus, n_nodes),
            tier_sizing=tier_sizing_of(spec, leaf, upper, plan.tiers) if detailed else (),
            reserved_per_leaf=res.per_leaf,
            attachment=spec.fabric.attachment,
            spine_groups=spec.fabric.spine_groups,
        ),
        routing=default_routing(spec, "roft", plan.tiers, tm.leaf.protocol),
        nodes=nodes,
        switches=tuple(b.switches),
        links=tuple(b.links),
        spec=spec_to_dict(spec),
        devices=tuple(b.devices),
    )


def _wire_leaves(
    b: FabricBuilder,
    spec: Spec,
    shape: NodeShape,
    members: Sequence[Sequence[str]],
    plane: int,
    leaf: TierSplit,
    res: Reserved,
    sus: int,
    n_nodes: int,
    su_active: int,
) -> list[UpLeaf]:
    """Leaves of one plane with their node (and device) links, ``members`` the node ids of
    each SU (``su_members``); their uplink needs."""
    rails, ppr = rails_per_plane(shape), ports_per_rail(shape)
    if plane == 0:
        _add_devices(b, spec, shape, res, sum(map(len, members)), sus)
    on_rail = _device_ports(b.devices, plane, rails, ppr)
    leaves: list[UpLeaf] = []
    rail_ports = [node_ports(shape, plane, rail) for rail in range(rails)]
    up_start = leaf.up_start
    for su in range(sus):
        ids = members[su]
        for rail in range(rails):
            lf = b.add_switch(
                f"p{plane}-leaf-su{su + 1:02d}-r{rail}", "leaf", plane, su=su, rail=rail
            )
            ports = rail_ports[rail]
            if len(ports) == 1:
                ends = list(zip(ids, repeat(ports[0])))
            else:
                ends = [(nd, p) for nd in ids for p in ports]
            b.attach("node-leaf", ends, lf, plane, rail)
            devices = on_rail.get(rail, []) if su == sus - 1 else []
            b.attach("device-leaf", list(devices), lf, plane, rail)
            if spec.fabric.whole_su:
                up = leaf.up
            else:
                active = max(0, min(su_active, n_nodes - su * su_active))
                up = leaf.up_for((active + res.spares_per_su) * ppr + len(devices))
            leaves.append(UpLeaf(lf, up, su))
            b.skip_to(lf, up_start)
    return leaves


def _add_devices(
    b: FabricBuilder, spec: Spec, shape: NodeShape, res: Reserved, n_node_slots: int, sus: int
) -> None:
    """One device per cabled reservation, in the node slots after the last node."""
    slot = n_node_slots
    planes = spec.fabric.planes
    for ask in res.asks:
        if ask.cabled:
            b.add_device(
                Device(
                    id=ask.slug,
                    purpose=ask.purpose,
                    ports=ask.count * planes,
                    ports_per_plane=ask.count,
                    port_speed_gbps=shape.port_speed_gbps,
                    form_factor=ask.form_factor,
                    index=slot,
                    rack=slot // spec.layout.nodes_per_rack,
                    su=sus - 1,
                )
            )
        slot += ask.slots


def _device_ports(
    devices: Sequence[Device], plane: int, rails: int, ppr: int
) -> dict[int, list[tuple[str, int]]]:
    """Per rail, the (device, port) pairs of ``plane`` its leaf in the last SU takes."""
    per_rail: dict[int, list[tuple[str, int]]] = {}
    for dev in devices:
        for j in range(dev.ports_per_plane):
            port = plane * dev.ports_per_plane + j
            per_rail.setdefault((j // ppr) % rails, []).append((dev.id, port))
    return per_rail


def upper_lower_bound(up_total: int, tiers: int, upper: UpperTiers, detailed: bool) -> int:
    """Closed-form lower bound on the switches above the leaves."""
    if tiers == 2:
        return math.ceil(up_total / upper.two_tier_capacity())
    if not detailed:
        return 3 * math.ceil(up_total / upper.spine.layout.radix)
    sp = upper.spine
    spine_up = uplinks_for(up_total, sp.layout.down_gbps, sp.layout.up_gbps, sp.ratio)
    spines = max(math.ceil(up_total / sp.down), math.ceil(spine_up / sp.up))
    return spines + math.ceil(spine_up / upper.core.radix)


def tier_sizing_of(
    spec: Spec, leaf: TierSplit, upper: UpperTiers, tiers: int, leaf_role: str = "leaf"
) -> tuple[TierSizing, ...]:
    """Each tier's model, speeds, ports per switch and asked ratio, leaf first."""
    spine_text = "1:1"
    if spec.fabric.spine is not None and spec.fabric.spine.oversubscription is not None:
        spine_text = spec.fabric.spine.oversubscription
    out = [leaf.sizing(leaf_role, spec.fabric.oversubscription)]
    if tiers == 2 and not upper.spine_ratio_given:
        lay = upper.spine_all
        out.append(TierSizing("spine", lay.model.id, lay.down_gbps, 0, lay.radix, 0, spine_text))
    else:
        out.append(upper.spine.sizing("spine", spine_text))
    if tiers == 3:
        core = upper.core
        out.append(TierSizing("core", core.model.id, core.down_gbps, 0, core.radix, 0, "1:1"))
    return tuple(out)


def _capacity_message(
    spec: Spec, shape: NodeShape, tm: TierModels, leaf: TierSplit, upper: UpperTiers
) -> str:
    rails, ppr = rails_per_plane(shape), ports_per_rail(shape)
    down = leaf.down // ppr
    if spec.fabric.tiers == 2:
        cap = upper.two_tier_capacity()
        max_nodes = cap * down // rails if rails <= cap else 0
        kind = "2-tier"
    else:
        max_nodes = upper.core.radix * pod_capacity_groups(upper.spine.down, rails) * down
        kind = "3-tier"
    model = tm.leaf.id if tm.uniform else f"{tm.leaf.id} leaves"
    groups = spec.fabric.spine_groups
    hint = "add planes or pick a larger switch"
    if spec.fabric.tiers == 2:
        max_nodes *= groups  # each rail group holds a 2-tier fabric of its own
        hint = "add planes, group the spines by rail (fabric.spine_groups) or pick a larger switch"
    return (
        f"cluster.gpus: {spec.cluster.gpus} GPUs exceed a {kind} {spec.fabric.oversubscription} "
        f"ROFT of {model} leaves ({leaf_ports(leaf)}) with {spec.fabric.planes} plane(s)"
        + (f" and {groups} spine groups" if groups > 1 else "")
        + f", which holds at most {max_nodes * shape.gpus} GPUs; {hint}"
    )


def leaf_ports(leaf: TierSplit) -> str:
    """A leaf's ports as sized: ``64x400G`` or, with faster uplinks, ``64x400G down, 32x800G
    up`` (never one radix at the down speed: an SN5600 is not a 96 x 400G switch)."""
    lay = leaf.layout
    if not lay.mixed:
        return f"{lay.radix}x{lay.down_gbps}G"
    return f"{leaf.down}x{lay.down_gbps}G down, {leaf.up}x{lay.up_gbps}G up"


def default_routing(spec: Spec, topology: str, tiers: int, protocol: str = "") -> Routing:
    """The routing policy a design records: the spec's choice, else the family's default.

    The default on an InfiniBand Clos (``roft``, ``fat-tree``) is ``dmodk``: the subnet manager
    routes statically by destination LID (OpenSM's ftree engine, opensm/osm_ucast_ftree.c,
    ``fabric_route_to_cns``: destinations in leaf and port order, each given the least-loaded
    up-port at every level, which on a fat tree is D-mod-k); Ethernet hashes (``ecmp``). An
    adaptive policy with a class list on InfiniBand keeps that static routing for the other
    service levels (recorded as ``dmodk`` with the adaptive classes).
    """
    policy: str = spec.fabric.routing.policy
    classes = tuple(spec.fabric.routing.adaptive_classes)
    static = "dmodk" if protocol == "infiniband" and topology in ("roft", "fat-tree") else "ecmp"
    if policy == "default":
        policy = "deterministic" if topology in ("matrix", "rail-only", "single-switch") else static
    elif policy == "adaptive" and classes and static == "dmodk":
        policy = "dmodk"  # AR on the listed SLs only; the rest keep the SM's static routes
    desc = {
        "ecmp": "ECMP at every tier with equal-cost choices; one RoCEv2 flow per QP "
        "(UDP source port from the QP numbers, destination port 4791)",
        "dmodk": "static D-mod-k, as the subnet manager's fat-tree routing (OpenSM ftree) sets "
        "the forwarding tables: the up-port at each level is chosen by destination index "
        "(leaves in order, ports in order on each leaf)",
        "deterministic": "one path per NIC pair: "
        + ("A port -> B port, two switch hops" if topology == "matrix" else "a single switch"),
        "adaptive": "adaptive routing spreads each flow over every equal-cost path",
    }[policy]
    return Routing(policy=policy, adaptive_classes=classes, description=desc)
