"""Classic per-rack fat-tree: every NIC of a rack's nodes on that rack's ToR(s), ToRs to spines."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from railplan.catalog import SwitchModel
from railplan.design import Design, Node, NodeShape, Sizing
from railplan.errors import InfeasibleError, SpecError
from railplan.spec import Spec, spec_to_dict
from railplan.topology.clos import CapacityExceeded, UpLeaf, build_upper, pod_capacity_groups
from railplan.topology.reserved import refuse_reserved
from railplan.topology.roft import default_routing, node_id, tier_sizing_of, upper_lower_bound
from railplan.topology.tiers import (
    TierModels,
    TierSplit,
    UpperTiers,
    per_tier,
    tier_speeds,
    tier_split,
    upper_tiers,
)
from railplan.topology.wiring import FabricBuilder


def tor_of(slot: int, tors: int) -> int:
    """Which of a rack's ToRs takes the rack's ``slot``-th node port: they alternate.

    >>> [tor_of(s, 2) for s in range(4)]
    [0, 1, 0, 1]
    """
    return slot % tors


def tor_load(nodes_per_rack: int, ports: int, tors: int, tor: int) -> int:
    """Node ports ToR ``tor`` of a rack carries when the rack holds ``nodes_per_rack`` nodes.

    >>> tor_load(4, 8, 2, 0), tor_load(3, 1, 2, 1)
    (16, 1)
    """
    slots = nodes_per_rack * ports
    return len(range(tor, slots, tors))


def rack_nodes(count: int, nodes_per_rack: int, groups_per_pod: int) -> tuple[Node, ...]:
    """Nodes numbered rack by rack; ``su`` and ``rack`` are the rack index, ``pod`` its pod."""
    return tuple(
        Node(
            id=node_id(i, count),
            index=i,
            su=i // nodes_per_rack,
            pod=(i // nodes_per_rack) // groups_per_pod if groups_per_pod else 0,
            rack=i // nodes_per_rack,
        )
        for i in range(count)
    )


def _check_rack_fits(spec: Spec, shape: NodeShape, split: TierSplit, model: SwitchModel) -> None:
    per_rack = spec.layout.nodes_per_rack
    tors = spec.fabric.fat_tree.tors_per_rack
    for plane in range(spec.fabric.planes):
        ports = shape.port_plane.count(plane)
        if per_rack * ports < tors:
            raise SpecError(
                f"fabric.fat_tree.tors_per_rack: a rack of {per_rack} node(s) has "
                f"{per_rack * ports} port(s) per plane, too few for {tors} ToRs; "
                "use tors_per_rack: 1"
            )
        if tor_load(per_rack, ports, tors, 0) > split.down:
            most = split.down * tors // ports
            raise InfeasibleError(
                f"layout.nodes_per_rack: {per_rack} nodes x {ports} port(s) per plane need "
                f"{per_rack * ports} ToR ports, but {tors} ToR(s) of {model.id} at "
                f"{spec.fabric.oversubscription} offer {split.down * tors} down ports; use at "
                f"most {most} nodes per rack, fabric.fat_tree.tors_per_rack: 2 or a larger switch"
            )


def _wire_racks(
    b: FabricBuilder,
    spec: Spec,
    shape: NodeShape,
    nodes: Sequence[Node],
    plane: int,
    split: TierSplit,
) -> list[UpLeaf]:
    per_rack = spec.layout.nodes_per_rack
    tors = spec.fabric.fat_tree.tors_per_rack
    ports = [p for p, pl in enumerate(shape.port_plane) if pl == plane]
    leaves: list[UpLeaf] = []
    for rack in range(math.ceil(len(nodes) / per_rack)):
        members = nodes[rack * per_rack : (rack + 1) * per_rack]
        ids = [
            b.add_switch(
                f"p{plane}-tor-rk{rack + 1:03d}-{'ab'[i]}", "tor", plane, su=rack, rack=rack
            )
            for i in range(tors)
        ]
        if b.counting:  # each ToR's ports in the order the loop below takes them
            runs: list[list[tuple[str, int]]] = [[] for _ in ids]
            for j, node in enumerate(members):
                for q, port in enumerate(ports):
                    runs[tor_of(j * len(ports) + q, tors)].append((node.id, port))
            for tor, run in zip(ids, runs, strict=True):
                b.attach("node-leaf", run, tor, plane)
        else:
            for j, node in enumerate(members):
                for q, port in enumerate(ports):
                    tor = ids[tor_of(j * len(ports) + q, tors)]
                    rail = shape.port_rail[port]
                    b.add_link("node-leaf", node.id, port, tor, b.take_port(tor), plane, rail)
        for i, tor in enumerate(ids):
            planned = per_rack if spec.fabric.whole_su else len(members)
            leaves.append(UpLeaf(tor, split.up_for(tor_load(planned, len(ports), tors, i)), rack))
            b.skip_to(tor, split.up_start)
    return leaves


def _capacity_message(
    spec: Spec, shape: NodeShape, model: SwitchModel, split: TierSplit, upper: UpperTiers
) -> str:
    tors = spec.fabric.fat_tree.tors_per_rack
    radix = split.layout.radix
    if spec.fabric.tiers == 2:
        racks, kind = upper.two_tier_capacity() // tors, "2-tier"
    else:
        racks, kind = upper.core.radix * pod_capacity_groups(upper.spine.down, tors), "3-tier"
    most = racks * spec.layout.nodes_per_rack * shape.gpus
    return (
        f"cluster.gpus: {spec.cluster.gpus} GPUs exceed a {kind} {spec.fabric.oversubscription} "
        f"per-rack fat-tree of {model.id} ({radix}x{shape.port_speed_gbps}G) with "
        f"{tors} ToR(s) per rack and {spec.fabric.planes} plane(s), which holds at most "
        f"{most} GPUs; add planes or pick a larger switch"
    )


def fat_tree(spec: Spec, shape: NodeShape, models: SwitchModel | TierModels) -> Design:
    """Each rack's nodes on its own ToR(s); ToRs spread their uplinks evenly over the spines."""
    refuse_reserved(spec, "fat-tree")
    tm = TierModels.of(models)
    model = tm.leaf
    n_nodes = spec.cluster.gpus // shape.gpus
    speeds = tier_speeds(spec, shape)
    split = tier_split(
        model, speeds.leaf_down, speeds.leaf_up, spec.fabric.oversubscription_fraction
    )
    upper = upper_tiers(spec, tm, speeds)
    radix = split.layout.radix
    _check_rack_fits(spec, shape, split, model)
    tors = spec.fabric.fat_tree.tors_per_rack
    tiers = None if spec.fabric.tiers == "auto" else int(spec.fabric.tiers)
    nodes = rack_nodes(n_nodes, spec.layout.nodes_per_rack, 0)
    b = FabricBuilder(split.layout, spine=upper.spine_all, core=upper.core)
    up_total = 0
    upper_plan = None
    for plane in range(spec.fabric.planes):
        leaves = _wire_racks(b, spec, shape, nodes, plane, split)
        up_total += sum(leaf.up for leaf in leaves)
        try:
            upper_plan = build_upper(b, leaves, plane, tiers, tors, upper)
        except CapacityExceeded:
            raise InfeasibleError(_capacity_message(spec, shape, model, split, upper)) from None
    assert upper_plan is not None
    switches = tuple(b.switches)
    if upper_plan.tiers == 3:
        nodes = rack_nodes(n_nodes, spec.layout.nodes_per_rack, upper_plan.groups_per_pod)
        switches = tuple(
            replace(s, pod=s.rack // upper_plan.groups_per_pod) if s.role == "tor" else s
            for s in switches
        )
    racks = math.ceil(n_nodes / spec.layout.nodes_per_rack)
    detailed = per_tier(spec, tm, speeds)
    lower = spec.fabric.planes * racks * tors + upper_lower_bound(
        up_total, upper_plan.tiers, upper, detailed
    )
    return Design(
        name=spec.name,
        topology="fat-tree",
        gpus=spec.cluster.gpus,
        planes=spec.fabric.planes,
        shape=shape,
        sizing=Sizing(
            tiers=upper_plan.tiers,
            switch_model=model.id,
            radix=radix,
            oversubscription=spec.fabric.oversubscription,
            leaf_down=split.down,
            leaf_up=split.up,
            su_nodes=spec.layout.nodes_per_rack,
            sus=racks,
            pods=upper_plan.pods,
            lower_bound_switches=lower,
            whole_su=spec.fabric.whole_su,
            attachment=spec.fabric.attachment,
            notes=(f"{tors} ToR(s) per rack of {spec.layout.nodes_per_rack} nodes",),
            tier_sizing=tier_sizing_of(spec, split, upper, upper_plan.tiers, "tor")
            if detailed
            else (),
        ),
        routing=default_routing(spec, "fat-tree", upper_plan.tiers, model.protocol),
        nodes=nodes,
        switches=switches,
        links=tuple(b.links),
        spec=spec_to_dict(spec),
    )
