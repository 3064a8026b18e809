"""check(design): re-derive every hard rule from the wiring alone, trusting no generator or solver."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

from railplan.catalog import Catalog, load_catalog
from railplan.model import Design, Switch

MAX_REPORTED = 50
UPWARD = {"node-leaf": (0, 1), "leaf-spine": (1, 2), "spine-core": (2, 3), "leaf-leaf": (1, 1)}


def check(design: Design, catalog: Catalog | None = None) -> list[str]:
    """Every violated rule as a sentence; an empty list means the design is sound.

    A laid-out design (with cables) is also checked for one cable per link, media that reach
    their routed lengths and fit their cages (against ``catalog``, default the bundled one),
    and devices that sit inside their racks without overlapping.
    """
    problems: list[str] = []
    for rule in RULES:
        problems.extend(rule(design))
        if len(problems) >= MAX_REPORTED:
            return problems[:MAX_REPORTED]
    if design.cables or design.placements:
        from railplan.analysis.media import check_cables  # cables are checked against parts

        problems.extend(_one_cable_per_link(design))
        problems.extend(_placements(design))
        if design.cables:
            problems.extend(check_cables(design, catalog or load_catalog()))
    return problems[:MAX_REPORTED]


def _one_cable_per_link(d: Design) -> list[str]:
    per_link = Counter(c.link_id for c in d.cables)
    out = [f"link {lk.id} has {per_link[lk.id]} cables" for lk in d.links if per_link[lk.id] != 1]
    dup = [i for i, c in Counter(c.id for c in d.cables).items() if c > 1]
    out += [f"cable id {i} is used more than once" for i in dup[:5]]
    return out[:10]


def _placements(d: Design) -> list[str]:
    """Every node and switch sits once, inside an existing rack, without overlapping another."""
    racks = {r.id: r for r in d.racks}
    devices = [n.id for n in d.nodes] + [s.id for s in d.switches]
    placed = Counter(p.device for p in d.placements)
    out = [f"{dev} is placed {placed[dev]} times" for dev in devices if placed[dev] != 1][:10]
    used: dict[tuple[str, int], str] = {}
    for p in d.placements:
        rack = racks.get(p.rack)
        if rack is None:
            out.append(f"{p.device} sits in rack {p.rack}, which is not on the floor")
            continue
        if p.u < 1 or p.u + p.height_u - 1 > rack.height_u:
            out.append(
                f"{p.device} at U{p.u} ({p.height_u}U) does not fit the {rack.height_u}U rack {p.rack}"
            )
        for u in range(p.u, p.u + p.height_u):
            other = used.setdefault((p.rack, u), p.device)
            if other != p.device:
                out.append(f"{p.device} and {other} both occupy {p.rack} U{u}")
                break
        if len(out) >= 10:
            break
    return out


def _unique_ids(d: Design) -> list[str]:
    out = []
    for what, ids in (
        ("node", [n.id for n in d.nodes]),
        ("switch", [s.id for s in d.switches]),
        ("link", [lk.id for lk in d.links]),
    ):
        dup = [i for i, c in Counter(ids).items() if c > 1]
        out += [f"{what} id {i} is used more than once" for i in dup[:5]]
    return out


def _ends(d: Design) -> list[str]:
    """Link ends exist, ports are in range, used once, speeds and planes agree, tiers go up."""
    out: list[str] = []
    switches = d.switch_by_id()
    nodes = {n.id for n in d.nodes}
    shape = d.shape
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
                if dev not in nodes:
                    out.append(f"link {lk.id}: node {dev} does not exist")
                elif not 0 <= port < shape.ports:
                    out.append(f"link {lk.id}: {dev} has no port {port}")
                elif shape.port_plane[port] != lk.plane:
                    out.append(f"link {lk.id}: node port {port} belongs to another plane")
                if lk.rate_gbps != shape.port_speed_gbps:
                    out.append(
                        f"link {lk.id} runs {lk.rate_gbps}G on a {shape.port_speed_gbps}G NIC"
                    )
                continue
            sw = switches.get(dev)
            if sw is None:
                out.append(f"link {lk.id}: switch {dev} does not exist")
                continue
            if sw.tier != tier:
                out.append(f"link {lk.id} ({lk.kind}) lands on {sw.role} {dev}")
            if not 0 <= port < sw.radix:
                out.append(f"link {lk.id}: {dev} has no port {port} (radix {sw.radix})")
            if sw.port_speed_gbps != lk.rate_gbps:
                out.append(f"link {lk.id} runs {lk.rate_gbps}G on a {sw.port_speed_gbps}G port")
            if sw.plane != lk.plane:
                out.append(
                    f"link {lk.id} crosses from plane {lk.plane} to {dev} in plane {sw.plane}"
                )
        if len(out) >= MAX_REPORTED:
            break
    return out


def _nic_ports_cabled_once(d: Design) -> list[str]:
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


def _every_switch_used(d: Design) -> list[str]:
    deg: Counter[str] = Counter()
    for lk in d.links:
        deg[lk.a_device] += 1
        deg[lk.b_device] += 1
    return [f"switch {s.id} has no links" for s in d.switches if deg[s.id] == 0][:10]


def _down_up(d: Design) -> tuple[dict[str, int], dict[str, int]]:
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    for lk in d.links:
        if lk.kind == "leaf-leaf":
            continue
        up[lk.a_device] += 1
        down[lk.b_device] += 1
    return down, up


def _oversubscription(d: Design) -> list[str]:
    """Leaves keep down/up <= the asked ratio; spines under cores stay 1:1 or better."""
    ratio = float(d.sizing.oversubscription.split(":")[0])
    down, up = _down_up(d)
    out = []
    for sw in d.switches:
        if sw.role in ("leaf", "tor"):
            if up[sw.id] == 0:
                out.append(f"leaf {sw.id} has no uplinks")
            elif down[sw.id] > ratio * up[sw.id] + 1e-9:
                out.append(
                    f"leaf {sw.id} is {down[sw.id]}:{up[sw.id]} down:up, over the asked "
                    f"{d.sizing.oversubscription}"
                )
        elif sw.role == "spine" and d.sizing.tiers == 3 and down[sw.id] > up[sw.id]:
            out.append(
                f"spine {sw.id} is {down[sw.id]}:{up[sw.id]}, oversubscribed toward the cores"
            )
    return out[:10]


def _even_spreading(d: Design) -> list[str]:
    """Each lower switch sends equal bundles to every upper switch of its plane (or pod)."""
    switches = d.switch_by_id()
    bundles: dict[str, Counter[str]] = defaultdict(Counter)
    for lk in d.links:
        if lk.kind in ("leaf-spine", "spine-core"):
            bundles[lk.a_device][lk.b_device] += 1
    expected: dict[tuple[int, int, int], set[str]] = defaultdict(set)
    for sw in d.switches:
        if sw.role == "spine":
            expected[(sw.plane, 2, sw.pod if d.sizing.tiers == 3 else -1)].add(sw.id)
    out = []
    for lower, ups in bundles.items():
        sw = switches[lower]
        if len(set(ups.values())) != 1:
            out.append(f"{lower} spreads its uplinks unevenly: {dict(sorted(ups.items()))}")
        if sw.tier == 1:
            pod = sw.pod if d.sizing.tiers == 3 else -1
            want = expected.get((sw.plane, 2, pod), set())
            if want and set(ups) != want:
                out.append(
                    f"{lower} does not reach every spine of its {'pod' if pod >= 0 else 'plane'}"
                )
    return out[:10]


def _rail_alignment(d: Design) -> list[str]:
    """Rail switches and ROFT leaves carry a single rail, and ROFT leaves a single SU."""
    if d.topology not in ("roft", "rail-only"):
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


def _connected(d: Design) -> list[str]:
    """Every plane is one connected fabric (union-find over switch adjacencies)."""
    parent: dict[str, str] = {s.id: s.id for s in d.switches}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    if d.topology == "rail-only":  # rails meet inside the nodes (NVLink / PXN)
        for n in d.nodes:
            parent[n.id] = n.id
    for lk in d.links:
        if (
            (lk.kind != "node-leaf" or d.topology == "rail-only")
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


def _counts(d: Design) -> list[str]:
    """Switch and node counts agree with the cluster; at least the closed-form lower bound."""
    out = []
    if len(d.nodes) * d.shape.gpus != d.gpus:
        out.append(f"{len(d.nodes)} nodes x {d.shape.gpus} GPUs is not the {d.gpus} GPUs asked")
    if len(d.switches) < d.sizing.lower_bound_switches:
        out.append(
            f"{len(d.switches)} switches is below the lower bound {d.sizing.lower_bound_switches}"
        )
    planes = {s.plane for s in d.switches}
    if planes != set(range(d.planes)):
        out.append(f"switches sit in planes {sorted(planes)}, expected 0..{d.planes - 1}")
    return out


# -- Matrix, per-rack fat-tree and planes (issue 3) -------------------------------------------

MATRIX_ROLES = ("leaf-a", "leaf-b")


def _matrix_bipartite(d: Design) -> list[str]:
    """Matrix: leaf-leaf links run A -> B and every A-B pair of a plane has the same bundle."""
    a_leaves = {s.id: s for s in d.switches if s.role == "leaf-a"}
    b_leaves = {s.id: s for s in d.switches if s.role == "leaf-b"}
    if d.topology != "matrix" and not a_leaves and not b_leaves:
        return []
    out: list[str] = []
    bundles: Counter[tuple[str, str]] = Counter()
    for lk in d.links:
        if lk.kind == "leaf-leaf":
            if lk.a_device in a_leaves and lk.b_device in b_leaves:
                bundles[(lk.a_device, lk.b_device)] += 1
            else:
                out.append(
                    f"link {lk.id} joins {lk.a_device} and {lk.b_device}; a leaf-leaf link "
                    "must run from an A leaf (a end) to a B leaf (b end)"
                )
        elif lk.kind != "node-leaf" and d.topology == "matrix":
            out.append(f"link {lk.id} is a {lk.kind} link, but a Matrix has no spine layer")
    if d.topology == "matrix":
        others = [s.id for s in d.switches if s.role not in MATRIX_ROLES]
        out += [f"switch {s} is neither an A nor a B leaf of the Matrix" for s in others[:5]]
    for plane in range(d.planes):
        a_ids = sorted(s.id for s in a_leaves.values() if s.plane == plane)
        b_ids = sorted(s.id for s in b_leaves.values() if s.plane == plane)
        if not a_ids or not b_ids:
            if d.topology == "matrix":
                out.append(f"plane {plane} lacks an A or a B leaf group")
            continue
        sizes = Counter(bundles[(a, b)] for a in a_ids for b in b_ids)
        if len(sizes) == 1 and 0 not in sizes:
            continue
        common = max((n for n in sizes if n), key=lambda n: (sizes[n], n), default=0)
        odd = [(a, b) for a in a_ids for b in b_ids if bundles[(a, b)] != common][:4]
        out.append(
            f"plane {plane} is not a complete bipartite A x B with equal bundles: A-B pairs "
            f"carry {common} link(s) but "
            + ", ".join(f"{a}-{b} carries {bundles[(a, b)]}" for a, b in odd)
        )
    return out[:10]


def _matrix_groups(d: Design) -> list[str]:
    """A leaves carry one rail; a B leaf takes every B port of its nodes; all nodes split alike."""
    switches = d.switch_by_id()
    if not any(s.role in MATRIX_ROLES for s in d.switches):
        return []
    shape = d.shape
    out: list[str] = []
    groups: dict[tuple[str, int, str], set[int]] = defaultdict(set)
    b_home: dict[tuple[str, int], set[str]] = defaultdict(set)
    for lk in d.links:
        sw = switches.get(lk.b_device)
        if lk.kind != "node-leaf" or sw is None or sw.role not in MATRIX_ROLES:
            continue
        if not 0 <= lk.a_port < shape.ports:
            continue
        groups[(lk.a_device, sw.plane, sw.group or sw.role)].add(lk.a_port)
        if sw.role == "leaf-b":
            b_home[(lk.a_device, sw.plane)].add(sw.id)
            continue
        rail = shape.port_rail[lk.a_port]
        if sw.rail < 0 or rail != sw.rail:
            out.append(
                f"{lk.a_device} {shape.port_name(lk.a_port)} (rail {rail}) lands on {sw.id}, "
                f"an A leaf of rail {sw.rail}; an A leaf carries a single rail"
            )
    for plane in range(d.planes):
        ref: tuple[frozenset[int], frozenset[int]] | None = None
        for node in d.nodes:
            split = (
                frozenset(groups[(node.id, plane, "A")]),
                frozenset(groups[(node.id, plane, "B")]),
            )
            if ref is None:
                ref = split
                if len(split[0]) != len(split[1]):
                    out.append(
                        f"plane {plane} gives nodes {len(split[0])} A port(s) and "
                        f"{len(split[1])} B port(s); a Matrix pairs each A port with a B port"
                    )
            elif split != ref:
                out.append(
                    f"{node.id} wires ports A {sorted(split[0])} / B {sorted(split[1])} in "
                    f"plane {plane}, unlike A {sorted(ref[0])} / B {sorted(ref[1])} of the others"
                )
            homes = b_home[(node.id, plane)]
            if len(homes) > 1:
                out.append(
                    f"{node.id} spreads its B ports over {sorted(homes)}; a B leaf takes every "
                    "B port (all rails) of its nodes"
                )
            if len(out) >= 10:
                return out
    return out


def _matrix_oversubscription(d: Design) -> list[str]:
    """Matrix leaves keep node ports <= ratio x links to the other group."""
    ratio = float(d.sizing.oversubscription.split(":")[0])
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    for lk in d.links:
        if lk.kind == "node-leaf":
            down[lk.b_device] += 1
        elif lk.kind == "leaf-leaf":
            up[lk.a_device] += 1
            up[lk.b_device] += 1
    out = []
    for sw in d.switches:
        if sw.role not in MATRIX_ROLES:
            continue
        if up[sw.id] == 0:
            out.append(f"{sw.id} has no links to the other leaf group")
        elif down[sw.id] > ratio * up[sw.id] + 1e-9:
            out.append(
                f"{sw.id} is {down[sw.id]}:{up[sw.id]} node:A-B ports, over the asked "
                f"{d.sizing.oversubscription}"
            )
    return out[:10]


def _rack_membership(d: Design) -> list[str]:
    """Per-rack fat-tree: every node port lands on a ToR of the node's own rack."""
    tors = {s.id: s for s in d.switches if s.role == "tor"}
    if d.topology != "fat-tree" and not tors:
        return []
    nodes = d.node_by_id()
    out = []
    for lk in d.links:
        node = nodes.get(lk.a_device)
        if lk.kind != "node-leaf" or node is None:
            continue
        tor = tors.get(lk.b_device)
        if tor is None:
            if d.topology == "fat-tree":
                out.append(f"{node.id} is cabled to {lk.b_device}, which is not a ToR")
        elif tor.rack != node.rack:
            out.append(
                f"{node.id} of rack {node.rack + 1} is cabled to {tor.id} of rack "
                f"{tor.rack + 1}; a ToR carries only the nodes of its own rack"
            )
        if len(out) >= 10:
            break
    if d.topology == "fat-tree":
        per_rack = Counter(n.rack for n in d.nodes)
        out += [
            f"rack {r + 1} holds {c} nodes, more than the {d.sizing.su_nodes} per rack planned"
            for r, c in sorted(per_rack.items())
            if c > d.sizing.su_nodes
        ][:5]
    return out


def _plane_copies(d: Design) -> list[str]:
    """Planes are independent copies: each gets node ports and the same switches and links."""
    out = []
    port_planes = set(d.shape.port_plane)
    if port_planes != set(range(d.planes)):
        out.append(
            f"node ports go to planes {sorted(port_planes)}, expected each of 0..{d.planes - 1}"
        )
    roles: dict[int, Counter[str]] = defaultdict(Counter)
    kinds: dict[int, Counter[str]] = defaultdict(Counter)
    for s in d.switches:
        roles[s.plane][s.role] += 1
    for lk in d.links:
        kinds[lk.plane][lk.kind] += 1
    for p in range(1, d.planes):
        if roles[p] != roles[0] or kinds[p] != kinds[0]:
            out.append(
                f"plane {p} has switches {dict(sorted(roles[p].items()))} and links "
                f"{dict(sorted(kinds[p].items()))}, plane 0 has "
                f"{dict(sorted(roles[0].items()))} and {dict(sorted(kinds[0].items()))}; "
                "planes must be identical copies"
            )
    return out


RULES: list[Callable[[Design], list[str]]] = [
    _unique_ids,
    _ends,
    _nic_ports_cabled_once,
    _every_switch_used,
    _counts,
    _oversubscription,
    _even_spreading,
    _rail_alignment,
    _connected,
    _matrix_bipartite,
    _matrix_groups,
    _matrix_oversubscription,
    _rack_membership,
    _plane_copies,
]


__all__ = ["Switch", "check"]
