"""The fabric seen from the test plan: where node ports land, link groups and path classes."""

from __future__ import annotations

from collections import defaultdict

from railplan.design import Design, Link
from railplan.traffic.routing import effective_policy, paths

#: path classes from nearest to farthest, the order reports list them in
PATH_CLASSES = ("same-leaf", "a-to-b", "via-spine", "via-core")

Flow = tuple[str, int, str, int]  # (node, port, node, port)


class Fabric:
    """Where node ports land, which cable is which, and which link groups a flow may cross."""

    def __init__(self, design: Design) -> None:
        self.design = design
        self.switches = design.switch_by_id()
        self.cable_of: dict[str, str] = {c.link_id: c.id for c in design.cables}
        self.port_link: dict[tuple[str, int], Link] = {}
        self.up: dict[str, set[str]] = defaultdict(set)
        self.groups: dict[str, list[Link]] = defaultdict(list)
        self.inter: list[Link] = []
        self.direct: dict[tuple[str, str], str] = {}
        self.switch_links: dict[str, list[tuple[int, Link]]] = defaultdict(list)
        for link in design.links:
            if link.kind == "device-leaf":  # no GPU flow crosses it; the cabling check has it
                self.switch_links[link.b_device].append((link.b_port, link))
                continue
            if link.kind == "node-leaf":
                self.port_link[(link.a_device, link.a_port)] = link
                self.switch_links[link.b_device].append((link.b_port, link))
                continue
            self.inter.append(link)
            self.switch_links[link.a_device].append((link.a_port, link))
            self.switch_links[link.b_device].append((link.b_port, link))
            if link.kind == "leaf-leaf":
                key = f"ll:{link.a_device}|{link.b_device}"
                self.direct[(link.a_device, link.b_device)] = key
                self.direct[(link.b_device, link.a_device)] = key
            else:
                key = f"up:{link.a_device}"
                self.up[link.a_device].add(link.b_device)
            self.groups[key].append(link)
        self._cones: dict[str, list[frozenset[str]]] = {}
        self._elems: dict[tuple[str, str], tuple[str, frozenset[str]]] = {}
        self._flow_links: dict[Flow, frozenset[str]] = {}
        self.link_by_id = {lk.id: lk for lk in self.inter}
        self.policy = effective_policy(design)
        #: static routing: coverage counts the very links each flow takes (routing.paths)
        self.exact = self.policy in ("deterministic", "dmodk") and bool(self.inter)

    def universe(self) -> list[str]:
        """What coverage counts: link groups (hashed or adaptive routing) or link ids (static)."""
        return sorted(self.link_by_id) if self.exact else sorted(self.groups)

    def element_ref(self, element: str) -> str:
        """A link group's name, or a link's cable id with the port at its a end."""
        if element in self.groups:
            return element
        link = self.link_by_id[element]
        sw = self.switches[link.a_device]
        return f"{self.cable(link)}@{sw.id}:{sw.port_name(link.a_port)}"

    def element_links(self, element: str) -> list[Link]:
        return self.groups[element] if element in self.groups else [self.link_by_id[element]]

    def flow_elements(self, flow: Flow) -> frozenset[str]:
        """The link groups a flow may cross, or under static routing the links it does cross."""
        a, pa, b, pb = flow
        if not self.exact:
            return self.path(self.leaf(a, pa), self.leaf(b, pb))[1]
        if flow not in self._flow_links:
            hops = {h for p in paths(self.design, a, pa, b, pb, self.policy) for h in p.links}
            self._flow_links[flow] = frozenset(hops & self.link_by_id.keys())
        return self._flow_links[flow]

    def pair_elements(self, u: str, v: str) -> frozenset[str]:
        out: set[str] = set()
        for flow in self.flows(u, v):
            out |= self.flow_elements(flow)
        return frozenset(out)

    def cable(self, link: Link) -> str:
        return self.cable_of.get(link.id, link.id)

    def leaf(self, node: str, port: int) -> str:
        return self.port_link[(node, port)].b_device

    def node_ports(self) -> list[int]:
        return list(range(self.design.shape.ports))

    def is_a_port(self, node: str, port: int) -> bool:
        return self.switches[self.leaf(node, port)].role == "leaf-a"

    def flows(self, u: str, v: str) -> list[Flow]:
        """The NIC-to-NIC flows a two-node test makes: same port both ends, or A to B (Matrix)."""
        shape = self.design.shape
        if self.design.topology != "matrix":
            return [(u, p, v, p) for p in self.node_ports()]
        out: list[Flow] = []
        for src, dst in ((u, v), (v, u)):
            for pa in self.node_ports():
                if not self.is_a_port(src, pa):
                    continue
                pb = next(
                    p
                    for p in self.node_ports()
                    if not self.is_a_port(dst, p)
                    and shape.port_plane[p] == shape.port_plane[pa]
                    and shape.port_rail[p] == shape.port_rail[pa]
                )
                out.append((src, pa, dst, pb))
        return out

    def _cone(self, leaf: str) -> list[frozenset[str]]:
        if leaf not in self._cones:
            levels = [frozenset([leaf])]
            while True:
                nxt = frozenset(s for sw in levels[-1] for s in self.up.get(sw, ()))
                if not nxt:
                    break
                levels.append(nxt)
            self._cones[leaf] = levels
        return self._cones[leaf]

    def path(self, x: str, y: str) -> tuple[str, frozenset[str]]:
        """Path class between two leaves and the link groups its (equal-cost) paths cross."""
        key = (x, y) if x <= y else (y, x)
        if key in self._elems:
            return self._elems[key]
        if x == y:
            out: tuple[str, frozenset[str]] = ("same-leaf", frozenset())
        elif (x, y) in self.direct:
            out = ("a-to-b", frozenset([self.direct[(x, y)]]))
        else:
            cx, cy = self._cone(x), self._cone(y)
            out = ("unreachable", frozenset())
            for t in range(1, min(len(cx), len(cy))):
                common = cx[t] & cy[t]
                if common:
                    role = self.switches[min(common)].role
                    below = {s for lvl in (*cx[:t], *cy[:t]) for s in lvl}
                    out = (f"via-{role}", frozenset(f"up:{s}" for s in below if s in self.up))
                    break
        self._elems[key] = out
        return out

    def switch_hops(self, cls: str) -> int:
        """Switches a flow of this path class crosses."""
        if cls == "same-leaf":
            return 1
        if cls == "a-to-b":
            return 2
        return {"via-spine": 3, "via-core": 5}.get(cls, 3)

    def pair_groups(self, u: str, v: str) -> frozenset[str]:
        out: set[str] = set()
        for a, pa, b, pb in self.flows(u, v):
            out |= self.path(self.leaf(a, pa), self.leaf(b, pb))[1]
        return frozenset(out)

    def pair_class(self, u: str, v: str) -> str:
        """The farthest path class of a two-node test's flows."""
        classes = {
            self.path(self.leaf(a, pa), self.leaf(b, pb))[0] for a, pa, b, pb in self.flows(u, v)
        }
        return max(classes, key=class_rank)

    def signature(self, node: str) -> tuple[str, ...]:
        return tuple(self.leaf(node, p) for p in self.node_ports())


def class_rank(cls: str) -> tuple[int, str]:
    """Sort key of a path class: nearest first, unknown classes last (by name)."""
    return (PATH_CLASSES.index(cls) if cls in PATH_CLASSES else len(PATH_CLASSES), cls)
