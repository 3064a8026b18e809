"""Single switch: every node port of a plane on one switch, or on a redundant pair joined by ISLs.

The field rule ("a single switch where the cluster fits inside one, and a rail-optimized fabric
where it does not", the NCCL maintainers quoted in *Why Your GPU Fabric Runs at Half Speed*):
the Asterfusion CX732Q-N test report runs two nodes on one CX732Q-N. With
``fabric.single_switch.redundant`` two switches share the rails (rail r on switch r mod 2) and
an ISL bundle joins them, one ISL port per node port at 1:1: the NVIDIA DGX BasePOD reference
architecture (RA-11127-001, Table 4.2) builds 8 DGX H100 on two QM9700 with 32 NDR ISLs.
"""

from __future__ import annotations

import dataclasses

from railplan.catalog import Catalog, SwitchModel
from railplan.design import Design, NodeShape
from railplan.errors import InfeasibleError
from railplan.spec import Spec
from railplan.topology.rail_only import rail_only
from railplan.topology.roft import default_routing, ports_per_rail, rails_per_plane
from railplan.topology.shape import resolve_shape
from railplan.topology.tiers import (
    TierModels,
    tier_shortlists,
    tier_speeds,
    tier_split,
    uniform_layout,
)

FAMILY = "single-switch"


def single_switch_capacity(spec: Spec, shape: NodeShape, model: SwitchModel) -> int:
    """Most nodes one plane of this family holds on ``model`` (0: none)."""
    speeds = tier_speeds(spec, shape)
    per_node = rails_per_plane(shape) * ports_per_rail(shape)
    if not model.radix(speeds.leaf_down):
        return 0
    if not spec.fabric.single_switch.redundant:
        return uniform_layout(model, speeds.leaf_down).radix // per_node
    if rails_per_plane(shape) < 2 or not model.radix(speeds.leaf_up):
        return 0
    split = tier_split(
        model, speeds.leaf_down, speeds.leaf_up, spec.fabric.oversubscription_fraction
    )
    # rail r on switch r mod 2: the fuller switch takes ceil(rails / 2) rails of every node
    heavy = (rails_per_plane(shape) + 1) // 2 * ports_per_rail(shape)
    return split.down // heavy


def single_switch(spec: Spec, shape: NodeShape, models: SwitchModel | TierModels) -> Design:
    """One switch per plane (or two joined by an ISL bundle when ``redundant``); refuses a
    cluster that does not fit, naming the limit."""
    model = TierModels.of(models).leaf
    opts = spec.fabric.single_switch
    n_nodes = spec.cluster.gpus // shape.gpus
    most = single_switch_capacity(spec, shape, model)
    if n_nodes > most:
        count = "two switches" if opts.redundant else "one switch"
        if opts.redundant and rails_per_plane(shape) < 2:
            why = "a redundant pair needs at least two rails per plane to share"
        else:
            why = f"{count} of {model.id} per plane hold(s) at most {most} nodes"
        raise InfeasibleError(
            f"cluster.gpus: {n_nodes} nodes do not fit the single-switch family: {why}; "
            "use topology roft or matrix (or more planes)"
        )
    inner = spec.model_copy(deep=True)
    inner.fabric.rail_only.switches = 2 if opts.redundant else 1
    inner.fabric.rail_only.isl = opts.redundant
    inner.fabric.rail_only.isl_links_per_pair = None
    design = rail_only(inner, shape, models)
    routing = default_routing(spec, FAMILY, 1)
    return dataclasses.replace(
        design, topology=FAMILY, routing=routing, spec=spec.model_dump(mode="json")
    )


def auto_family(spec: Spec, catalog: Catalog) -> str:
    """The field rule for ``topology: auto`` without an advisor: a single switch (or the
    redundant pair) when some allowed model holds the cluster, else ROFT. ``railplan plan``
    and ``railplan recommend`` search instead (``railplan.advise``)."""
    if spec.fabric.reserved_ports or spec.fabric.attachment != "auto":
        return "roft"  # reserved leaf ports and ToR attachment are ROFT's
    shape = resolve_shape(spec, catalog)
    speeds = tier_speeds(spec, shape)
    try:
        models = tier_shortlists(spec, catalog, speeds, FAMILY)["leaf"]
    except InfeasibleError:
        return "roft"
    nodes = spec.cluster.gpus // shape.gpus
    if any(single_switch_capacity(spec, shape, m) >= nodes for m in models):
        return FAMILY
    return "roft"
