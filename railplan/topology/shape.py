"""Resolve what a node looks like (GPUs, NIC ports, planes, rails) and how a leaf splits its radix."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from railplan.catalog import Catalog, NicModel, SwitchModel
from railplan.design import NodeShape
from railplan.errors import InfeasibleError, SpecError
from railplan.spec import Spec


def resolve_shape(spec: Spec, catalog: Catalog) -> NodeShape:
    """The node shape from a catalog node model or explicit fields, with planes and rails."""
    c = spec.cluster
    nic: NicModel | None
    domain_nodes = 1
    if c.node:
        model = catalog.node(c.node)
        domain_nodes = model.domain_nodes
        nic = catalog.nic(c.nic or model.nic)
        gpus_per_node = c.gpus_per_node or model.gpus
        nics = c.nics_per_node or model.nics
        form_factor, ports_per_cage, name = model.form_factor, model.ports_per_cage, model.id
    else:
        if c.gpus_per_node is None:
            raise SpecError(
                "cluster: give either node (a catalog node model such as hgx-h100-8x400g) "
                "or gpus_per_node"
            )
        nic = catalog.nic(c.nic) if c.nic else None
        gpus_per_node = c.gpus_per_node
        nics = c.nics_per_node or gpus_per_node
        form_factor = nic.form_factor if nic else "osfp-rhs"  # NIC cages take flat-top plugs
        ports_per_cage, name = 1, "custom"
    ports_per_nic = c.ports_per_nic or (nic.ports if nic else 1)
    speed = c.port_speed_gbps or (nic.port_speed_gbps if nic else 400)
    if c.gpus % gpus_per_node:
        up = math.ceil(c.gpus / gpus_per_node) * gpus_per_node
        raise SpecError(
            f"cluster.gpus: {c.gpus} is not a multiple of {gpus_per_node} GPUs per node; "
            f"use {up} or {up - gpus_per_node}"
        )
    plane_of = _assign_planes(spec, nics, ports_per_nic)
    rail_of = _assign_rails(spec, plane_of, ports_per_nic)
    return NodeShape(
        model=name,
        gpus=gpus_per_node,
        nics=nics,
        ports_per_nic=ports_per_nic,
        port_speed_gbps=speed,
        nic_model=nic.id if nic else "custom",
        form_factor=form_factor,
        ports_per_cage=ports_per_cage,
        port_plane=tuple(plane_of),
        port_rail=tuple(rail_of),
        domain_nodes=domain_nodes,
    )


def rack_scale_spec(spec: Spec, catalog: Catalog) -> Spec:
    """The spec with its node model's rack facts: a rack-scale system (GB200/GB300 NVL72) puts
    its compute trays, one NVLink domain, in one rack, so ``layout.nodes_per_rack`` is the tray
    count and ``layout.node_height_u`` the tray's; whole domains only. A model that gives its
    node's rack units sets ``node_height_u`` where the spec leaves it out. Other specs pass
    through unchanged (the same object)."""
    c = spec.cluster
    if not c.node:
        return spec
    model = catalog.node(c.node)
    layout = spec.layout
    given = layout.model_fields_set
    update: dict[str, int] = {}
    if model.rack_units and "node_height_u" not in given:
        update["node_height_u"] = model.rack_units
    if model.trays_per_rack:
        domain = model.nvlink_domain_gpus
        if c.gpus % domain:
            low = c.gpus // domain * domain
            raise SpecError(
                f"cluster.gpus: {c.gpus} GPUs are not whole {model.id} racks of {domain} GPUs "
                f"(one NVLink domain each); use {low + domain}" + (f" or {low}" if low else "")
            )
        if "nodes_per_rack" in given and layout.nodes_per_rack != model.trays_per_rack:
            raise SpecError(
                f"layout.nodes_per_rack: a {model.id} rack holds its {model.trays_per_rack} "
                f"compute trays (one NVLink domain); leave nodes_per_rack out or set "
                f"{model.trays_per_rack}"
            )
        update["nodes_per_rack"] = model.trays_per_rack
    if not update or all(getattr(layout, k) == v for k, v in update.items()):
        return spec
    from pydantic import ValidationError

    try:
        new_layout = type(layout).model_validate({**layout.model_dump(), **update})
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise SpecError(f"layout: {msg} (for the {model.id} racks)") from None
    return spec.model_copy(update={"layout": new_layout})


def _assign_rails(spec: Spec, plane_of: list[int], ports_per_nic: int) -> list[int]:
    """Rail of each node port inside its plane: its index among the plane's ports, or with
    ``attachment: single-tor`` its NIC's index among the plane's NICs (a NIC's ports share a
    rail, so they land on one leaf)."""
    attachment = spec.fabric.attachment
    if attachment == "dual-tor" and ports_per_nic < 2:
        raise SpecError(
            "fabric.attachment: dual-tor puts a NIC's ports on two ToRs, but the NICs have "
            "one port; use NICs with two ports or attachment: auto"
        )
    rail_of = []
    seen: dict[int, int] = {}
    last_nic: dict[int, int] = {}
    for port, plane in enumerate(plane_of):
        nic = port // ports_per_nic
        if attachment == "single-tor":
            if plane in last_nic and last_nic[plane] != nic:
                seen[plane] = seen.get(plane, 0) + 1
            last_nic[plane] = nic
            rail_of.append(seen.get(plane, 0))
            continue
        rail_of.append(seen.get(plane, 0))
        seen[plane] = seen.get(plane, 0) + 1
    return rail_of


def _assign_planes(spec: Spec, nics: int, ports_per_nic: int) -> list[int]:
    planes = spec.fabric.planes
    ports = nics * ports_per_nic
    mode = spec.fabric.plane_assignment
    if mode == "auto":
        mode = "port" if ports_per_nic > 1 and ports_per_nic % planes == 0 else "nic"
    if planes == 1:
        return [0] * ports
    if mode == "port":
        if ports_per_nic % planes:
            raise SpecError(
                f"fabric.planes: {planes} planes cannot split {ports_per_nic} ports per NIC "
                "evenly; use plane_assignment: nic or a plane count that divides the ports"
            )
        return [p % ports_per_nic % planes for p in range(ports)]
    if nics % planes:
        raise SpecError(
            f"fabric.planes: {planes} planes cannot split {nics} NICs per node evenly; "
            f"use a plane count that divides {nics}"
        )
    return [(p // ports_per_nic) % planes for p in range(ports)]


@dataclass(frozen=True)
class LeafSplit:
    """How a leaf divides its radix between node-facing and spine-facing ports."""

    radix: int
    down: int
    up: int
    ratio: float | Fraction

    def up_for(self, used_down: int) -> int:
        """Uplinks that keep the ratio for ``used_down`` node ports (at least one)."""
        if isinstance(self.ratio, Fraction):
            need = math.ceil(used_down / self.ratio)
        else:
            need = math.ceil(used_down / self.ratio - 1e-9)
        return max(1, min(self.up, need))


def leaf_split(radix: int, ratio: float | Fraction) -> LeafSplit:
    """Largest down-port count whose uplinks keep down/up <= ratio within the radix.

    An exact ``Fraction`` ratio (``17/15``) is split exactly; a float keeps a tolerance.
    """
    if isinstance(ratio, Fraction):
        down = math.floor(radix * ratio / (1 + ratio))
        while down > 0 and down + math.ceil(down / ratio) > radix:
            down -= 1
        up = math.ceil(down / ratio)
    else:
        down = math.floor(radix * ratio / (1 + ratio) + 1e-9)
        while down > 0 and down + math.ceil(down / ratio - 1e-9) > radix:
            down -= 1
        up = math.ceil(down / ratio - 1e-9)
    if down < 1 or up < 1:
        raise InfeasibleError(f"a {radix}-port leaf cannot be split {float(ratio):g}:1")
    return LeafSplit(radix=radix, down=down, up=up, ratio=ratio)


def switch_radix(model: SwitchModel, speed_gbps: int) -> int:
    radix = model.radix(speed_gbps)
    if radix == 0:
        speeds = ", ".join(f"{s}G" for s in model.speeds())
        raise InfeasibleError(
            f"switch {model.id} cannot run {speed_gbps}G ports (it runs {speeds}); "
            "pick a switch that does or change cluster.port_speed_gbps"
        )
    return radix


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def allowed_switches(spec: Spec, catalog: Catalog, speed_gbps: int) -> list[SwitchModel]:
    """The spec's switch shortlist, or every catalog switch that runs the NIC port speed."""
    if spec.fabric.switches:
        return [catalog.switch(s) for s in spec.fabric.switches]
    models = [m for m in catalog.switches.values() if m.radix(speed_gbps)]
    if not models:
        raise InfeasibleError(f"no catalog switch runs {speed_gbps}G ports; add one to catalogs/")
    return sorted(models, key=lambda m: m.id)


#: the largest design railplan builds (README "Security and limits"): 32,768 nodes and
#: 262,144 NIC ports over all planes, e.g. 262,144 GPUs on 8-GPU nodes with one port per GPU,
#: about 800,000 links in 3 tiers
MAX_NODES = 32_768
MAX_NODE_PORTS = 262_144


def fabric_capacity(radix: int, ratio: float, tiers: int) -> int:
    """Most NIC ports one plane of ``tiers`` tiers of ``radix``-port switches can hold.

    An upper bound for every family railplan builds, in closed form: a leaf (or ToR) has at
    most ``down`` node ports; 2 tiers join at most ``radix`` leaves (a spine port each); in 3
    tiers a pod holds at most ``radix // 2`` leaves (its spines keep half their ports for the
    cores) and the cores join at most ``radix`` pods.
    """
    down = leaf_split(radix, ratio).down
    if tiers <= 2:
        return radix * down
    return radix * (radix // 2) * down


def check_capacity(
    spec: Spec, shape: NodeShape, models: list[SwitchModel], speeds_gbps: Sequence[int] = ()
) -> None:
    """Refuse, before anything is built, a cluster no allowed model can hold (or beyond the
    ceiling); the message names the limit. Generators still check their exact capacity.

    ``models`` are every model any tier may use and ``speeds_gbps`` every tier's port speed
    (default: the NIC's); the bound takes each model's largest radix at any of them, so it
    stays an upper bound for mixed-speed, per-tier fabrics."""
    nodes = spec.cluster.gpus // shape.gpus
    ports = nodes * shape.ports
    if nodes > MAX_NODES:
        raise InfeasibleError(
            f"cluster.gpus: {spec.cluster.gpus} GPUs on {shape.gpus}-GPU nodes are {nodes:,} "
            f"nodes, beyond railplan's ceiling of {MAX_NODES:,} per design; plan the cluster "
            "in parts"
        )
    if ports > MAX_NODE_PORTS:
        raise InfeasibleError(
            f"cluster.gpus: {spec.cluster.gpus} GPUs on {nodes:,} nodes of {shape.ports} NIC "
            f"port(s) need {ports:,} NIC ports, beyond railplan's ceiling of "
            f"{MAX_NODE_PORTS:,} per design; plan the cluster in parts"
        )
    speeds = sorted(set(speeds_gbps) | {shape.port_speed_gbps})
    radixes = {m.id: max(m.radix(v) for v in speeds) for m in models}
    usable = {m: r for m, r in radixes.items() if r > 0}
    if not usable:
        return  # the generator names the speed no model runs
    model, radix = max(sorted(usable.items()), key=lambda mr: mr[1])
    tiers = 3 if spec.fabric.tiers == "auto" else int(spec.fabric.tiers)
    limit = fabric_capacity(radix, spec.fabric.oversubscription_ratio, tiers)
    if tiers <= 2:
        limit *= spec.fabric.spine_groups  # each rail group is a 2-tier fabric of its own
    per_plane = ports // spec.fabric.planes
    if per_plane > limit:
        most = limit * spec.fabric.planes // shape.ports * shape.gpus
        raise InfeasibleError(
            f"cluster.gpus: {spec.cluster.gpus} GPUs exceed what fits: a {tiers}-tier "
            f"{spec.fabric.oversubscription} fabric of {model} ({radix}x{shape.port_speed_gbps}G) "
            f"with {spec.fabric.planes} plane(s) in any family holds at most {most} GPUs "
            f"({limit:,} NIC ports per plane); add planes or pick a larger switch"
        )
