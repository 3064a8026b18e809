"""Rail-only (one tier): rails on one switch each, on one switch for all, or alternating over a
few switches joined by inter-switch link (ISL) bundles instead of a spine.

The NVIDIA DGX BasePOD reference architecture (RA-11127-001, Table 4.2) builds 4 or 8 DGX
nodes on two QM9700 switches joined by NDR DAC ISLs: 8 twin-port DACs (16 links) at 4 nodes,
16 (32 links) at 8 nodes, i.e. one ISL port per node port on each switch (1:1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from railplan.catalog import SwitchModel
from railplan.design import Design, Node, NodeShape, Sizing
from railplan.errors import InfeasibleError
from railplan.spec import Spec, spec_to_dict
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


@dataclass(frozen=True)
class _Shared:
    """How the rails share the switches of a plane: count, loads, layout, ISL bundle."""

    switches: int
    loads: tuple[int, ...]
    split: TierSplit
    isl: int

    @property
    def down_cap(self) -> int:
        return self.split.down

    @property
    def up_cap(self) -> int:
        return self.split.up


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
    sh = _share(spec, shape, tm.leaf, n_nodes)
    k, isl, split = sh.switches, sh.isl, sh.split
    b = FabricBuilder(split.layout)
    nodes = make_nodes(n_nodes, n_nodes, 0, spec.layout.nodes_per_rack)
    for plane in range(spec.fabric.planes):
        _wire_plane(b, shape, nodes, plane, sh, rails)
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
            radix=split.layout.radix,
            oversubscription=spec.fabric.oversubscription if isl else "1:1",
            leaf_down=sh.down_cap,
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
        spec=spec_to_dict(spec),
    )


def _share(spec: Spec, shape: NodeShape, model: SwitchModel, n_nodes: int) -> _Shared:
    """Switch count, node ports per switch, port split and ISL bundle; refuses what does not
    fit."""
    rails, ppr = rails_per_plane(shape), ports_per_rail(shape)
    k = _switch_count(spec, shape, model, n_nodes, rails, ppr)
    speeds = tier_speeds(spec, shape)
    loads = tuple(n_nodes * ppr * len(range(j, rails, k)) for j in range(k))
    ratio = spec.fabric.oversubscription_fraction
    if spec.fabric.rail_only.isl and k > 1:
        split = tier_split(model, speeds.leaf_down, speeds.leaf_up, ratio)
        isl = _isl_per_pair(spec, split, max(loads), k)
    else:
        layout = uniform_layout(model, speeds.leaf_down)
        split, isl = TierSplit(layout, layout.radix, 0, ratio), 0
    if max(loads) > split.down or isl * (k - 1) > split.up:
        raise InfeasibleError(
            f"cluster.gpus: {n_nodes} nodes on {k} {model.id} switch(es) need "
            f"{max(loads)} node ports and {isl * (k - 1)} ISL ports per switch, more than its "
            f"{split.down} + {split.up} at {spec.fabric.oversubscription}; use more switches "
            "(fabric.rail_only.switches) or topology roft"
        )
    return _Shared(k, loads, split, isl)


def _wire_plane(
    b: FabricBuilder, shape: NodeShape, nodes: Sequence[Node], plane: int, sh: _Shared, rails: int
) -> None:
    """One plane: rail r on switch r mod k, then equal ISL bundles between every pair."""
    k = sh.switches
    ids = [
        b.add_switch(
            f"p{plane}-rail-{j + 1:02d}", "rail", plane, su=0, rail=j if k == rails else -1
        )
        for j in range(k)
    ]
    for rail in range(rails):
        sw = ids[rail % k]
        for node in nodes:
            for port in node_ports(shape, plane, rail):
                b.add_link("node-leaf", node.id, port, sw, b.take_port(sw), plane, rail)
    for j, lo in enumerate(ids):
        b.skip_to(lo, sh.split.up_start if sh.isl else sh.loads[j])
    for j, lo in enumerate(ids):
        for hi in ids[j + 1 :]:
            b.connect("leaf-leaf", lo, hi, plane, sh.isl)


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
        spec=spec_to_dict(spec),
    )
