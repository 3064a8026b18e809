"""Rail-optimized fat-tree (ROFT) and rail-only constructions: closed form, no solver."""

from __future__ import annotations

import math

from railplan.catalog import SwitchModel
from railplan.design import Design, Node, NodeShape, Routing, Sizing
from railplan.errors import InfeasibleError
from railplan.spec import Spec
from railplan.topology.clos import CapacityExceeded, UpLeaf, build_upper, pod_capacity_groups
from railplan.topology.shape import leaf_split, switch_radix
from railplan.topology.wiring import FabricBuilder


def rails_per_plane(shape: NodeShape) -> int:
    return shape.ports // max(1, len(set(shape.port_plane)))


def node_id(index: int, count: int) -> str:
    return f"node{index + 1:0{max(4, len(str(count)))}d}"


def make_nodes(
    count: int, su_nodes: int, sus_per_pod: int, nodes_per_rack: int
) -> tuple[Node, ...]:
    return tuple(
        Node(
            id=node_id(i, count),
            index=i,
            su=i // su_nodes if su_nodes else 0,
            pod=(i // su_nodes) // sus_per_pod if su_nodes and sus_per_pod else 0,
            rack=i // nodes_per_rack,
        )
        for i in range(count)
    )


def roft(spec: Spec, shape: NodeShape, model: SwitchModel) -> Design:
    """Rail k of every node in an SU on leaf k of that SU; leaves spread uplinks over spines."""
    n_nodes = spec.cluster.gpus // shape.gpus
    planes = spec.fabric.planes
    radix = switch_radix(model, shape.port_speed_gbps)
    split = leaf_split(radix, spec.fabric.oversubscription_ratio)
    rails = rails_per_plane(shape)
    sus = math.ceil(n_nodes / split.down)
    tiers = None if spec.fabric.tiers == "auto" else int(spec.fabric.tiers)
    b = FabricBuilder(model, shape.port_speed_gbps, radix)
    nodes = make_nodes(n_nodes, split.down, 0, spec.layout.nodes_per_rack)
    upper = None
    up_total = 0
    for plane in range(planes):
        leaves: list[UpLeaf] = []
        for su in range(sus):
            members = nodes[su * split.down : (su + 1) * split.down]
            up = split.up if spec.fabric.whole_su else split.up_for(len(members))
            for rail in range(rails):
                leaf = b.add_switch(
                    f"p{plane}-leaf-su{su + 1:02d}-r{rail}", "leaf", plane, su=su, rail=rail
                )
                leaves.append(UpLeaf(leaf, up, su))
                up_total += up
                port = _node_port(shape, plane, rail)
                for node in members:
                    b.add_link("node-leaf", node.id, port, leaf, b.take_port(leaf), plane, rail)
                b.skip_to(leaf, split.down)
        try:
            upper = build_upper(b, leaves, plane, tiers, rails)
        except CapacityExceeded:
            raise InfeasibleError(
                _capacity_message(spec, shape, model, radix, split.down, rails)
            ) from None
    assert upper is not None
    if upper.tiers == 3:
        nodes = make_nodes(n_nodes, split.down, upper.groups_per_pod, spec.layout.nodes_per_rack)
    leaves_lb = planes * rails * sus
    per_tier_up = math.ceil(up_total / radix)
    lower = leaves_lb + (per_tier_up if upper.tiers == 2 else 3 * per_tier_up)
    return Design(
        name=spec.name,
        topology="roft",
        gpus=spec.cluster.gpus,
        planes=planes,
        shape=shape,
        sizing=Sizing(
            tiers=upper.tiers,
            switch_model=model.id,
            radix=radix,
            oversubscription=spec.fabric.oversubscription,
            leaf_down=split.down,
            leaf_up=split.up,
            su_nodes=split.down,
            sus=sus,
            pods=upper.pods,
            lower_bound_switches=lower,
            whole_su=spec.fabric.whole_su,
        ),
        routing=default_routing(spec, "roft", upper.tiers),
        nodes=nodes,
        switches=tuple(b.switches),
        links=tuple(b.links),
        spec=spec.model_dump(mode="json"),
    )


def _node_port(shape: NodeShape, plane: int, rail: int) -> int:
    for port, (p, r) in enumerate(zip(shape.port_plane, shape.port_rail, strict=True)):
        if p == plane and r == rail:
            return port
    raise AssertionError("no node port for plane/rail")


def _capacity_message(
    spec: Spec, shape: NodeShape, model: SwitchModel, radix: int, down: int, rails: int
) -> str:
    if spec.fabric.tiers == 2:
        max_nodes = radix * down // rails if rails <= radix else 0
        kind = "2-tier"
    else:
        max_nodes = radix * pod_capacity_groups(radix, rails) * down
        kind = "3-tier"
    max_gpus = max_nodes * shape.gpus
    return (
        f"cluster.gpus: {spec.cluster.gpus} GPUs exceed a {kind} {spec.fabric.oversubscription} "
        f"ROFT of {model.id} ({radix}x{shape.port_speed_gbps}G) with {spec.fabric.planes} "
        f"plane(s), which holds at most {max_gpus} GPUs; add planes or pick a larger switch"
    )


def rail_only(spec: Spec, shape: NodeShape, model: SwitchModel) -> Design:
    """One switch per rail (or one switch for every port when they all fit); no spines."""
    n_nodes = spec.cluster.gpus // shape.gpus
    planes = spec.fabric.planes
    radix = switch_radix(model, shape.port_speed_gbps)
    rails = rails_per_plane(shape)
    if n_nodes > radix:
        raise InfeasibleError(
            f"cluster.gpus: rail-only holds at most {radix} nodes ({radix * shape.gpus} GPUs) per "
            f"rail on {model.id} ({radix}x{shape.port_speed_gbps}G); use topology roft"
        )
    b = FabricBuilder(model, shape.port_speed_gbps, radix)
    nodes = make_nodes(n_nodes, n_nodes, 0, spec.layout.nodes_per_rack)
    single = n_nodes * rails <= radix
    for plane in range(planes):
        if single:
            sw = b.add_switch(f"p{plane}-rail-all", "rail", plane, su=0)
        for rail in range(rails):
            if not single:
                sw = b.add_switch(f"p{plane}-rail-r{rail}", "rail", plane, su=0, rail=rail)
            port = _node_port(shape, plane, rail)
            for node in nodes:
                b.add_link("node-leaf", node.id, port, sw, b.take_port(sw), plane, rail)
    per_plane = 1 if single else rails
    return Design(
        name=spec.name,
        topology="rail-only",
        gpus=spec.cluster.gpus,
        planes=planes,
        shape=shape,
        sizing=Sizing(
            tiers=1,
            switch_model=model.id,
            radix=radix,
            oversubscription="1:1",
            leaf_down=radix,
            leaf_up=0,
            su_nodes=n_nodes,
            sus=1,
            pods=0,
            lower_bound_switches=planes * math.ceil(n_nodes * rails / radix)
            if single
            else planes * per_plane,
            whole_su=spec.fabric.whole_su,
        ),
        routing=default_routing(spec, "rail-only", 1),
        nodes=nodes,
        switches=tuple(b.switches),
        links=tuple(b.links),
        spec=spec.model_dump(mode="json"),
    )


def default_routing(spec: Spec, topology: str, tiers: int) -> Routing:
    """The routing policy a design records: the spec's choice, else the family's default."""
    policy = spec.fabric.routing.policy
    classes = tuple(spec.fabric.routing.adaptive_classes)
    if policy == "default":
        policy = "deterministic" if topology in ("matrix", "rail-only") else "ecmp"
    desc = {
        "ecmp": "ECMP at every tier with equal-cost choices; one RoCEv2 flow per QP "
        "(UDP source port from the QP numbers, destination port 4791)",
        "dmodk": "static D-mod-k: the up-port is chosen by destination index",
        "deterministic": "one path per NIC pair: "
        + ("A port -> B port, two switch hops" if topology == "matrix" else "a single switch"),
        "adaptive": "adaptive routing spreads each flow over every equal-cost path",
    }[policy]
    return Routing(policy=policy, adaptive_classes=classes, description=desc)
