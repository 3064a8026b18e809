"""Rail-only (one tier): rails on one switch each, on one switch for all, or alternating over a
few switches joined by inter-switch link (ISL) bundles instead of a spine.

The NVIDIA DGX BasePOD reference architecture (RA-11127-001, Table 4.2) builds 4 or 8 DGX
nodes on two QM9700 switches joined by NDR DAC ISLs: 8 twin-port DACs (16 links) at 4 nodes,
16 (32 links) at 8 nodes, i.e. one ISL port per node port on each switch (1:1).
"""

from __future__ import annotations

import math

from railplan.catalog import SwitchModel
from railplan.design import Design, NodeShape, Sizing
from railplan.errors import InfeasibleError
from railplan.spec import Spec
from railplan.topology.reserved import refuse_reserved
from railplan.topology.roft import (
    default_routing,
    make_nodes,
    node_ports,
    ports_per_rail,
    rails_per_plane,
)
from railplan.topology.shape import switch_radix
from railplan.topology.tiers import (
    TierModels,
    TierSplit,
    tier_speeds,
    tier_split,
    uniform_layout,
    uplinks_for,
)
from railplan.topology.wiring import FabricBuilder


def rail_only(spec: Spec, shape: NodeShape, models: SwitchModel | TierModels) -> Design:
    """One switch per rail (or one for every port when they fit, or ``rail_only.switches``
    sharing the rails), joined by ISL bundles when ``rail_only.isl`` asks for them."""
    refuse_reserved(spec, "rail-only")
    tm = TierModels.of(models)
    opts = spec.fabric.rail_only
    if opts.switches == "auto" and not opts.isl:
        return _classic(spec, shape, tm.leaf)
    n_nodes = spec.cluster.gpus // shape.gpus
    rails, ppr = rails_per_plane(shape), ports_per_rail(shape)
    k = _switch_count(spec, shape, tm.leaf, n_nodes, rails, ppr)
    speeds = tier_speeds(spec, shape)
    loads = [n_nodes * ppr * len(range(j, rails, k)) for j in range(k)]
    if opts.isl and k > 1:
        split = tier_split(
            tm.leaf, speeds.leaf_down, speeds.leaf_up, spec.fabric.oversubscription_fraction
        )
        layout, down_cap, up_cap = split.layout, split.down, split.up
        isl = _isl_per_pair(spec, split, max(loads), k)
    else:
        layout = uniform_layout(tm.leaf, speeds.leaf_down)
        split = TierSplit(layout, layout.radix, 0, spec.fabric.oversubscription_fraction)
        down_cap, up_cap, isl = layout.radix, 0, 0
    if max(loads) > down_cap or isl * (k - 1) > up_cap:
        raise InfeasibleError(
            f"cluster.gpus: {n_nodes} nodes on {k} {tm.leaf.id} switch(es) need "
            f"{max(loads)} node ports and {isl * (k - 1)} ISL ports per switch, more than its "
            f"{down_cap} + {up_cap} at {spec.fabric.oversubscription}; use more switches "
            "(fabric.rail_only.switches) or topology roft"
        )
    b = FabricBuilder(layout)
    nodes = make_nodes(n_nodes, n_nodes, 0, spec.layout.nodes_per_rack)
    for plane in range(spec.fabric.planes):
        ids = [
            b.add_switch(
                f"p{plane}-rail-{j + 1:02d}",
                "rail",
                plane,
                su=0,
                rail=j if k == rails else -1,
            )
            for j in range(k)
        ]
        for rail in range(rails):
            sw = ids[rail % k]
            for node in nodes:
                for port in node_ports(shape, plane, rail):
                    b.add_link("node-leaf", node.id, port, sw, b.take_port(sw), plane, rail)
        for j, lo in enumerate(ids):
            b.skip_to(lo, split.up_start if isl else loads[j])
        for j, lo in enumerate(ids):
            for hi in ids[j + 1 :]:
                b.connect("leaf-leaf", lo, hi, plane, isl)
    notes = (
        f"{k} switch(es) per plane, rail r on switch r mod {k}",
        *((f"{isl} ISL link(s) between each pair of switches",) if isl else ()),
    )
    return Design(
        name=spec.name,
        topology="rail-only",
        gpus=spec.cluster.gpus,
        planes=spec.fabric.planes,
        shape=shape,
        sizing=Sizing(
            tiers=1,
            switch_model=tm.leaf.id,
            radix=layout.radix,
            oversubscription=spec.fabric.oversubscription if isl else "1:1",
            leaf_down=down_cap,
            leaf_up=isl * (k - 1),
            su_nodes=n_nodes,
            sus=1,
            pods=0,
            lower_bound_switches=_lower_bound(spec, n_nodes * rails * ppr, split, isl, k),
            whole_su=spec.fabric.whole_su,
            attachment=spec.fabric.attachment,
            notes=notes,
            tier_sizing=(split.sizing("rail", spec.fabric.oversubscription),) if isl else (),
        ),
        routing=default_routing(spec, "rail-only", 1),
        nodes=nodes,
        switches=tuple(b.switches),
        links=tuple(b.links),
        spec=spec.model_dump(mode="json"),
    )


def _switch_count(
    spec: Spec, shape: NodeShape, model: SwitchModel, n_nodes: int, rails: int, ppr: int
) -> int:
    opts = spec.fabric.rail_only
    if opts.switches != "auto":
        k = int(opts.switches)
        if k > rails:
            raise InfeasibleError(
                f"fabric.rail_only.switches: {k} switches for {rails} rail(s) leaves some "
                f"without a rail; use at most {rails}"
            )
        return k
    radix = model.radix(shape.port_speed_gbps)
    return 1 if n_nodes * rails * ppr <= radix else rails


def _isl_per_pair(spec: Spec, split: TierSplit, load: int, k: int) -> int:
    given = spec.fabric.rail_only.isl_links_per_pair
    if given is not None:
        return given
    lay = split.layout
    need = uplinks_for(load, lay.down_gbps, lay.up_gbps, split.ratio)
    return math.ceil(need / (k - 1))


def _lower_bound(spec: Spec, node_ports: int, split: TierSplit, isl: int, k: int) -> int:
    planes = spec.fabric.planes
    if not isl:
        return planes * math.ceil(node_ports / split.layout.radix)
    lay = split.layout
    isl_ports = uplinks_for(node_ports, lay.down_gbps, lay.up_gbps, split.ratio)
    return planes * max(k if k > 1 else 1, math.ceil((node_ports + isl_ports) / lay.radix))


def _classic(spec: Spec, shape: NodeShape, model: SwitchModel) -> Design:
    """One switch per rail (or one switch for every port when they all fit); no spines."""
    n_nodes = spec.cluster.gpus // shape.gpus
    planes = spec.fabric.planes
    radix = switch_radix(model, shape.port_speed_gbps)
    rails = rails_per_plane(shape)
    ppr = ports_per_rail(shape)
    if n_nodes * ppr > radix:
        raise InfeasibleError(
            f"cluster.gpus: rail-only holds at most {radix // ppr} nodes ({radix // ppr * shape.gpus} "
            f"GPUs) per rail on {model.id} ({radix}x{shape.port_speed_gbps}G); use topology roft"
        )
    b = FabricBuilder(model, shape.port_speed_gbps, radix)
    nodes = make_nodes(n_nodes, n_nodes, 0, spec.layout.nodes_per_rack)
    single = n_nodes * rails * ppr <= radix
    for plane in range(planes):
        if single:
            sw = b.add_switch(f"p{plane}-rail-all", "rail", plane, su=0)
        for rail in range(rails):
            if not single:
                sw = b.add_switch(f"p{plane}-rail-r{rail}", "rail", plane, su=0, rail=rail)
            for port in node_ports(shape, plane, rail):
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
            lower_bound_switches=planes * math.ceil(n_nodes * rails * ppr / radix)
            if single
            else planes * per_plane,
            whole_su=spec.fabric.whole_su,
            attachment=spec.fabric.attachment,
        ),
        routing=default_routing(spec, "rail-only", 1),
        nodes=nodes,
        switches=tuple(b.switches),
        links=tuple(b.links),
        spec=spec.model_dump(mode="json"),
    )
