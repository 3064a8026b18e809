"""Wiring rules every family obeys: unique ids, sound ends, NIC ports, spreading, rails, reach."""

from __future__ import annotations

from collections import Counter, defaultdict
from fractions import Fraction

from railplan.design import Design, Device, Link, Switch
from railplan.spec.tiers import ratio_value

MAX_REPORTED = 50
#: links from which ``ends`` first asks ``ends_arrays.sound`` (below, the walk is quick)
ARRAYS_FROM_LINKS = 20_000
UPWARD = {
    "node-leaf": (0, 1),
    "leaf-spine": (1, 2),
    "spine-core": (2, 3),
    "leaf-leaf": (1, 1),
    "device-leaf": (0, 1),
}


def unique_ids(d: Design) -> list[str]:
    out = []
    for what, ids in (
        ("node", [n.id for n in d.nodes]),
        ("switch", [s.id for s in d.switches]),
        ("link", [lk.id for lk in d.links]),
    ):
        if len(set(ids)) == len(ids):
            continue  # all distinct: nothing to count
        dup = [i for i, c in Counter(ids).items() if c > 1]
        out += [f"{what} id {i} is used more than once" for i in dup[:5]]
    return out


def ends(d: Design) -> list[str]:
    """Link ends exist, ports are in range, used once, speeds and planes agree, tiers go up.

    A large design is decided over arrays first (``ends_arrays.sound``, which loads numpy: not
    worth it for a small one); the links are walked one by one only to say what is wrong."""
    if len(d.links) >= ARRAYS_FROM_LINKS:
        from railplan.validate.ends_arrays import sound  # numpy loads here

        if sound(d, UPWARD):
            return []
    out: list[str] = []
    switches = d.switch_by_id()
    nodes = {n.id for n in d.nodes}
    devices = d.device_by_id()
    used: set[tuple[str, int]] = set()
    for lk in d.links:
        lo, hi = UPWARD.get(lk.kind, (-1, -1))
        if lo < 0:
            out.append(f"link {lk.id} has unknown kind {lk.kind}")
            continue
        for dev, port, tier in ((lk.a_device, lk.a_port, lo), (lk.b_device, lk.b_port, hi)):
            if (dev, port) in used:
                out.append(f"port {port} of {dev} is used by more than one link ({lk.id})")
            used.add((dev, port))
            if tier == 0:
                out += _host_end(d, lk, dev, port, nodes, devices)
                continue
            sw = switches.get(dev)
            if sw is None:
                out.append(f"link {lk.id}: switch {dev} does not exist")
                continue
            if sw.tier != tier:
                out.append(f"link {lk.id} ({lk.kind}) lands on {sw.role} {dev}")
            if not 0 <= port < sw.radix:
                out.append(f"link {lk.id}: {dev} has no port {port} (radix {sw.radix})")
            speed = sw.speed_of(port)
            if speed != lk.rate_gbps:
                out.append(f"link {lk.id} runs {lk.rate_gbps}G on a {speed}G port")
            if sw.plane != lk.plane:
                out.append(
                    f"link {lk.id} crosses from plane {lk.plane} to {dev} in plane {sw.plane}"
                )
        if len(out) >= MAX_REPORTED:
            break
    return out


def _host_end(
    d: Design, lk: Link, dev: str, port: int, nodes: set[str], devices: dict[str, Device]
) -> list[str]:
    """The lower end of a node-leaf (a node port) or device-leaf link (a device port)."""
    out = []
    if lk.kind == "device-leaf":
        device = devices.get(dev)
        if device is None:
            return [f"link {lk.id}: device {dev} does not exist"]
        if not 0 <= port < device.ports:
            out.append(f"link {lk.id}: {dev} has no port {port}")
        if device.plane_of(port) != lk.plane:
            out.append(f"link {lk.id}: port {port} of device {dev} belongs to another plane")
        if lk.rate_gbps != device.port_speed_gbps:
            out.append(
                f"link {lk.id} runs {lk.rate_gbps}G on a {device.port_speed_gbps}G device port"
            )
        return out
    shape = d.shape
    if dev not in nodes:
        out.append(f"link {lk.id}: node {dev} does not exist")
    elif not 0 <= port < shape.ports:
        out.append(f"link {lk.id}: {dev} has no port {port}")
    elif shape.port_plane[port] != lk.plane:
        out.append(f"link {lk.id}: node port {port} belongs to another plane")
    if lk.rate_gbps != shape.port_speed_gbps:
        out.append(f"link {lk.id} runs {lk.rate_gbps}G on a {shape.port_speed_gbps}G NIC")
    return out


def nic_ports_cabled_once(d: Design) -> list[str]:
    count = Counter((lk.a_device, lk.a_port) for lk in d.links if lk.kind == "node-leaf")
    out = []
    for node in d.nodes:
        for port in range(d.shape.ports):
            if count[(node.id, port)] != 1:
                out.append(
                    f"{node.id} port {d.shape.port_name(port)} is cabled {count[(node.id, port)]} times"
                )
                if len(out) >= 10:
                    return out
    return out


def every_switch_used(d: Design) -> list[str]:
    deg: Counter[str] = Counter()
    for lk in d.links:
        deg[lk.a_device] += 1
        deg[lk.b_device] += 1
    return [f"switch {s.id} has no links" for s in d.switches if deg[s.id] == 0][:10]


def down_up(d: Design) -> tuple[dict[str, int], dict[str, int]]:
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    for lk in d.links:
        if lk.kind == "leaf-leaf":
            continue
        up[lk.a_device] += 1
        down[lk.b_device] += 1
    return down, up


def bandwidth(d: Design) -> tuple[dict[str, int], dict[str, int]]:
    """Down and up bandwidth (Gb/s) of every switch, from the rates of its links."""
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    for lk in d.links:
        if lk.kind == "leaf-leaf":
            continue
        up[lk.a_device] += lk.rate_gbps
        down[lk.b_device] += lk.rate_gbps
    return down, up


def asked_ratios(d: Design) -> dict[str, Fraction | None]:
    """Asked down:up per tier role: the leaf ratio, the spine ratio (None: 1:1 toward cores)."""
    out: dict[str, Fraction | None] = {"leaf": ratio_value(d.sizing.oversubscription)}
    spine = next((t for t in d.sizing.tier_sizing if t.role == "spine"), None)
    out["spine"] = ratio_value(spine.oversubscription) if spine else None
    return out


def oversubscription(d: Design) -> list[str]:
    """Leaves keep down/up bandwidth <= the asked ratio; spines under cores keep theirs (1:1
    by default); spines of a 2-tier fabric that hold ports back for a core leave them free."""
    ratios = asked_ratios(d)
    leaf_ratio = ratios["leaf"]
    assert leaf_ratio is not None
    down, up = down_up(d)
    down_bw, up_bw = bandwidth(d)
    out = []
    for sw in d.switches:
        if sw.role in ("leaf", "tor"):
            if up[sw.id] == 0:
                out.append(f"leaf {sw.id} has no uplinks")
            elif down_bw[sw.id] > leaf_ratio * up_bw[sw.id]:
                out.append(_over(sw, "leaf", down, up, down_bw, up_bw, d.sizing.oversubscription))
        elif sw.role == "spine" and d.sizing.tiers == 3:
            spine_ratio = ratios["spine"] or Fraction(1)
            if down_bw[sw.id] > spine_ratio * up_bw[sw.id]:
                asked = "1:1" if ratios["spine"] is None else _text(spine_ratio)
                out.append(_over(sw, "spine", down, up, down_bw, up_bw, asked, toward=True))
        elif sw.role == "spine":
            out += _held_back(d, sw, down[sw.id])
    return out[:10]


def _text(ratio: Fraction) -> str:
    return f"{ratio.numerator}:{ratio.denominator}"


def _over(
    sw: Switch,
    what: str,
    down: dict[str, int],
    up: dict[str, int],
    down_bw: dict[str, int],
    up_bw: dict[str, int],
    asked: str,
    toward: bool = False,
) -> str:
    ports = f"{down[sw.id]}:{up[sw.id]}"
    if down_bw[sw.id] * up[sw.id] == up_bw[sw.id] * down[sw.id]:  # one speed: ports tell it
        if toward:
            return f"{what} {sw.id} is {ports}, oversubscribed toward the cores"
        return f"{what} {sw.id} is {ports} down:up, over the asked {asked}"
    return (
        f"{what} {sw.id} carries {down_bw[sw.id]}G down over {up_bw[sw.id]}G up "
        f"({ports} ports), over the asked {asked}"
    )


def _held_back(d: Design, sw: Switch, used_down: int) -> list[str]:
    """A 2-tier spine with a ratio of its own keeps its core-facing ports free."""
    tier = next((t for t in d.sizing.tier_sizing if t.role == "spine"), None)
    if tier is None or not tier.up_ports or used_down <= tier.down_ports:
        return []
    return [
        f"spine {sw.id} uses {used_down} leaf ports, more than the {tier.down_ports} its "
        f"{tier.oversubscription} ratio leaves beside {tier.up_ports} ports held for a core tier"
    ]


def even_spreading(d: Design) -> list[str]:
    """Each lower switch sends equal bundles to every upper switch of its plane (or pod)."""
    switches = d.switch_by_id()
    bundles: dict[str, Counter[str]] = defaultdict(Counter)
    for lk in d.links:
        if lk.kind in ("leaf-spine", "spine-core"):
            bundles[lk.a_device][lk.b_device] += 1
    expected: dict[tuple[int, int, int], set[str]] = defaultdict(set)
    groups = d.sizing.spine_groups if d.sizing.tiers == 2 else 1
    for sw in d.switches:
        if sw.role == "spine":
            pod = sw.pod if d.sizing.tiers == 3 else -1
            if groups > 1:  # a rail group's spines (topology.spine_groups) are its "pod"
                pod = int(sw.group.rsplit("-", 1)[1]) - 1 if sw.group else -1
            expected[(sw.plane, 2, pod)].add(sw.id)
    rails = len({r for r, p in zip(d.shape.port_rail, d.shape.port_plane, strict=True) if p == 0})
    out = []
    for lower, ups in bundles.items():
        sw = switches[lower]
        if len(set(ups.values())) != 1:
            out.append(f"{lower} spreads its uplinks unevenly: {dict(sorted(ups.items()))}")
        if sw.tier == 1:
            pod = sw.pod if d.sizing.tiers == 3 else -1
            where = "pod" if pod >= 0 else "plane"
            if groups > 1:
                pod, where = sw.rail // (rails // groups), "rail group"
            want = expected.get((sw.plane, 2, pod), set())
            if want and set(ups) != want:
                out.append(f"{lower} does not reach every spine of its {where}")
    return out[:10]


def rail_alignment(d: Design) -> list[str]:
    """Rail switches and ROFT leaves carry a single rail, and ROFT leaves a single SU."""
    if d.topology not in ("roft", "rail-only", "single-switch"):
        return []
    switches = d.switch_by_id()
    nodes = d.node_by_id()
    out = []
    for lk in d.links:
        if lk.kind != "node-leaf":
            continue
        sw = switches[lk.b_device]
        rail = d.shape.port_rail[lk.a_port]
        if sw.rail >= 0 and rail != sw.rail:
            out.append(f"{lk.a_device} rail {rail} lands on {sw.id}, the leaf of rail {sw.rail}")
        if d.topology == "roft" and nodes[lk.a_device].su != sw.su:
            out.append(
                f"{lk.a_device} (SU {nodes[lk.a_device].su + 1}) lands on {sw.id} of another SU"
            )
        if len(out) >= 10:
            break
    return out


def connected(d: Design) -> list[str]:
    """Every plane is one connected fabric (union-find over switch adjacencies)."""
    parent: dict[str, str] = {s.id: s.id for s in d.switches}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    # rails meet inside the nodes (NVLink / PXN): rail-only, and rail-grouped spines
    via_nodes = d.topology == "rail-only" or d.sizing.spine_groups > 1
    if via_nodes:
        for n in d.nodes:
            parent[n.id] = n.id
    for lk in d.links:
        if (
            (lk.kind != "node-leaf" or via_nodes)
            and lk.a_device in parent
            and lk.b_device in parent
        ):
            ra, rb = find(lk.a_device), find(lk.b_device)
            if ra != rb:
                parent[ra] = rb
    by_plane: dict[int, set[str]] = defaultdict(set)
    for s in d.switches:
        by_plane[s.plane].add(find(s.id))
    return [
        f"plane {p} falls apart into {len(roots)} disconnected pieces"
        for p, roots in sorted(by_plane.items())
        if len(roots) > 1
    ]


def counts(d: Design) -> list[str]:
    """Switch and node counts agree with the cluster; at least the closed-form lower bound."""
    out = []
    if d.active_nodes * d.shape.gpus != d.gpus:
        spares = len(d.nodes) - d.active_nodes
        also = f" (besides {spares} spare nodes)" if spares else ""
        out.append(
            f"{d.active_nodes} nodes x {d.shape.gpus} GPUs{also} is not the {d.gpus} GPUs asked"
        )
    if len(d.switches) < d.sizing.lower_bound_switches:
        out.append(
            f"{len(d.switches)} switches is below the lower bound {d.sizing.lower_bound_switches}"
        )
    planes = {s.plane for s in d.switches}
    if planes != set(range(d.planes)):
        out.append(f"switches sit in planes {sorted(planes)}, expected 0..{d.planes - 1}")
    return out
