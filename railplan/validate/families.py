"""Rules of one family each: Matrix bipartite groups, per-rack ToR membership, identical planes."""

from __future__ import annotations

from collections import Counter, defaultdict

from railplan.design import Design

MATRIX_ROLES = ("leaf-a", "leaf-b")


def matrix_bipartite(d: Design) -> list[str]:
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


def matrix_groups(d: Design) -> list[str]:
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


def matrix_oversubscription(d: Design) -> list[str]:
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


def rack_membership(d: Design) -> list[str]:
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


def plane_copies(d: Design) -> list[str]:
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
