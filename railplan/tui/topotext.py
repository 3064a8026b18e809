"""A text picture of a design: per plane, its tiers top-down, groups, and the cable bundles."""

from __future__ import annotations

from collections import Counter, defaultdict

from railplan.design import ROLE_TIER, Design, Switch

ROLE_ORDER = ("core", "spine", "leaf-b", "leaf-a", "leaf", "tor", "rail")
KIND_BELOW = {3: "spine-core", 2: "leaf-spine"}


def _bundles(pairs: Counter[tuple[str, str]]) -> str:
    """``bundles 512 of 2`` (or several sizes): parallel links between the same two devices."""
    sizes = Counter(pairs.values())
    return "bundles " + ", ".join(f"{n} of {size}" for size, n in sorted(sizes.items()))


def _spread(switches: list[Switch]) -> str:
    """How a tier's switches divide: pods, scalable units, named groups, rails."""
    parts = []
    for what, values in (
        ("pod(s)", {s.pod for s in switches if s.pod >= 0}),
        ("SU(s)", {s.su for s in switches if s.su >= 0}),
        ("group(s)", {s.group for s in switches if s.group}),
        ("rail(s)", {s.rail for s in switches if s.rail >= 0}),
    ):
        if len(values) > 1:
            parts.append(f"{len(values)} {what}")
    return f" in {', '.join(parts)}" if parts else ""


def topology_text(design: Design) -> str:
    """Tiers (top first), switch groups and link bundles of each plane, as plain text."""
    s = design.sizing
    lines = [
        f"{design.name}: {design.topology}, {s.tiers} tier(s), {design.planes} plane(s), "
        f"{s.switch_model} ({s.radix} x {design.shape.port_speed_gbps}G), {s.oversubscription}",
        f"{design.gpus} GPUs on {len(design.nodes)} nodes; {design.shape.ports} NIC ports per node",
        "",
    ]
    plane_of = {sw.id: sw.plane for sw in design.switches}
    tiers: dict[int, dict[str, list[Switch]]] = defaultdict(lambda: defaultdict(list))
    for sw in design.switches:
        tiers[sw.plane][sw.role].append(sw)
    bundles: dict[tuple[int, str], Counter[tuple[str, str]]] = defaultdict(Counter)
    for lk in design.links:
        plane = plane_of.get(lk.b_device, plane_of.get(lk.a_device, lk.plane))
        bundles[(plane, lk.kind)][(lk.a_device, lk.b_device)] += 1
    for plane in sorted(tiers):
        lines.append(f"plane {plane}")
        roles = tiers[plane]
        for r in sorted(roles, key=lambda r: (-ROLE_TIER[r], ROLE_ORDER.index(r))):
            lines.append(f"  {r:<10} {len(roles[r]):>6} switch(es){_spread(roles[r])}")
        for kind in ("spine-core", "leaf-spine", "leaf-leaf", "node-leaf"):
            pairs = bundles.get((plane, kind))
            if pairs:
                total = sum(pairs.values())
                lines.append(f"  {kind:<10} {total:>6} link(s): {_bundles(pairs)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
