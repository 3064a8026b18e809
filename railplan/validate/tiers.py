"""Rules of per-tier fabrics: port speed sections, reserved ports, devices, ToR pairs, ISLs."""

from __future__ import annotations

from collections import Counter, defaultdict
from fractions import Fraction

from railplan.design import Design
from railplan.spec.tiers import ratio_value


def port_sections(d: Design) -> list[str]:
    """On a switch that runs two speeds, links toward the tier below use its down section and
    links toward the tier above its up section (a cage runs one speed)."""
    if not any(sw.mixed_speed for sw in d.switches):
        return []  # one speed everywhere: no section to stray into
    switches = d.switch_by_id()
    out = []
    for lk in d.links:
        lower, upper = switches.get(lk.a_device), switches.get(lk.b_device)
        into_uplink = upper is not None and upper.mixed_speed and lk.b_port >= upper.up_from_port
        if upper is not None and into_uplink and lk.kind != "leaf-leaf":
            out.append(
                f"link {lk.id} comes up into {upper.id} port {upper.port_name(lk.b_port)}, "
                f"one of its {upper.up_speed_gbps}G uplink ports"
            )
        if lower is not None and lower.mixed_speed and lk.a_port < lower.up_from_port:
            out.append(
                f"link {lk.id} leaves {lower.id} upward from port "
                f"{lower.port_name(lk.a_port)}, one of its {lower.port_speed_gbps}G down ports"
            )
        if len(out) >= 10:
            break
    return out


def reserved_ports(d: Design) -> list[str]:
    """Leaves keep their reserved ports from the active nodes; every SU has its spare nodes;
    every device's ports are cabled once, to leaves of its plane."""
    out: list[str] = []
    keep = d.sizing.reserved_per_leaf
    if keep:
        leaf_down = _leaf_down(d)
        nodes = d.node_by_id()
        active: Counter[str] = Counter()
        for lk in d.links:
            node = nodes.get(lk.a_device)
            if lk.kind in ("node-leaf", "device-leaf") and (node is None or not node.spare):
                active[lk.b_device] += 1
        for sw in d.switches:
            if sw.tier == 1 and active[sw.id] > leaf_down - keep:
                out.append(
                    f"leaf {sw.id} gives {active[sw.id]} of its {leaf_down} down ports to "
                    f"active nodes and devices, into the {keep} it reserves"
                )
    spares = Counter(n.su for n in d.nodes if n.spare)
    if spares and len(set(spares.values())) > 1:
        out.append(f"scalable units hold different numbers of spare nodes: {dict(spares)}")
    out += _device_links(d)
    return out[:10]


def _leaf_down(d: Design) -> int:
    tier = next((t for t in d.sizing.tier_sizing if t.role in ("leaf", "tor")), None)
    return tier.down_ports if tier is not None else d.sizing.leaf_down


def _device_links(d: Design) -> list[str]:
    switches = d.switch_by_id()
    cabled: Counter[str] = Counter()
    out = []
    for lk in d.links:
        if lk.kind != "device-leaf":
            continue
        cabled[lk.a_device] += 1
        sw = switches.get(lk.b_device)
        if sw is not None and sw.tier != 1:
            out.append(f"device link {lk.id} lands on {sw.role} {sw.id}, not a leaf")
    for dev in d.devices:
        if cabled[dev.id] != dev.ports:
            out.append(f"device {dev.id} has {dev.ports} ports but {cabled[dev.id]} links")
    return out


def attachment(d: Design) -> list[str]:
    """single-tor: every NIC's ports land on one leaf; dual-tor: a NIC's ports land on
    different leaves, and those leaves serve the same nodes (a ToR pair)."""
    mode = d.sizing.attachment
    if mode not in ("single-tor", "dual-tor"):
        return []
    shape = d.shape
    leaf_of: dict[tuple[str, int], str] = {}
    served: dict[str, set[str]] = defaultdict(set)
    for lk in d.links:
        if lk.kind == "node-leaf":
            leaf_of[(lk.a_device, lk.a_port)] = lk.b_device
            served[lk.b_device].add(lk.a_device)
    out = []
    for node in d.nodes:
        for nic in range(shape.nics):
            ports = range(nic * shape.ports_per_nic, (nic + 1) * shape.ports_per_nic)
            leaves = [leaf_of.get((node.id, p), "") for p in ports]
            if mode == "single-tor" and len(set(leaves)) > 1:
                out.append(f"{node.id} NIC {nic} spreads its ports over {sorted(set(leaves))}")
            elif mode == "dual-tor":
                out += _tor_pair(node.id, nic, leaves, served)
            if len(out) >= 10:
                return out
    return out


def _tor_pair(node: str, nic: int, leaves: list[str], served: dict[str, set[str]]) -> list[str]:
    if len(set(leaves)) < 2:
        return [f"{node} NIC {nic} has every port on {leaves[0]}; dual-tor needs two ToRs"]
    if len({frozenset(served[lf]) for lf in leaves}) > 1:
        return [
            f"{node} NIC {nic} lands on {sorted(set(leaves))}, which serve different nodes; "
            "a dual-tor pair serves the same nodes"
        ]
    return []


def isl_bundles(d: Design) -> list[str]:
    """One-tier fabrics: ISLs join every pair of a plane's switches with equal bundles, and
    each switch's node bandwidth stays within the asked ratio of its ISL bandwidth."""
    rail = {s.id: s for s in d.switches if s.role == "rail"}
    bundles: Counter[tuple[str, str]] = Counter()
    isl_bw: Counter[str] = Counter()
    node_bw: Counter[str] = Counter()
    for lk in d.links:
        if lk.kind == "leaf-leaf" and lk.a_device in rail and lk.b_device in rail:
            bundles[tuple(sorted((lk.a_device, lk.b_device)))] += 1  # type: ignore[index]
            isl_bw[lk.a_device] += lk.rate_gbps
            isl_bw[lk.b_device] += lk.rate_gbps
        elif lk.kind == "node-leaf" and lk.b_device in rail:
            node_bw[lk.b_device] += lk.rate_gbps
    if not bundles:
        return []
    out = []
    for plane in range(d.planes):
        ids = sorted(s for s, sw in rail.items() if sw.plane == plane)
        sizes = {bundles[(a, b)] for i, a in enumerate(ids) for b in ids[i + 1 :]}
        if len(sizes) != 1 or 0 in sizes:
            out.append(f"plane {plane}: ISL bundles between its switches differ: {sorted(sizes)}")
    ratio: Fraction = ratio_value(d.sizing.oversubscription)
    for sw_id in sorted(rail):
        if node_bw[sw_id] > ratio * isl_bw[sw_id]:
            out.append(
                f"{sw_id} carries {node_bw[sw_id]}G of node ports over {isl_bw[sw_id]}G of ISLs, "
                f"over the asked {d.sizing.oversubscription}"
            )
    return out[:10]
