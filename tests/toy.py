"""Small hand-wired designs (2-tier fat-tree, Matrix) for checking the analyzer against theory."""

from __future__ import annotations

from railplan.design import Design, Link, Node, NodeShape, Routing, Sizing, Switch

_KIND_PREFIX = {"node-leaf": "NL", "leaf-spine": "LS", "leaf-leaf": "LL"}


class _Wiring:
    def __init__(self, speed: int) -> None:
        self.speed = speed
        self.switches: list[Switch] = []
        self.links: list[Link] = []
        self.ports: dict[str, int] = {}

    def switch(self, sid: str, role: str, **attrs: object) -> str:
        self.switches.append(
            Switch(sid, "toy", role, 0, 1024, self.speed, 1, **attrs)  # type: ignore[arg-type]
        )
        self.ports[sid] = 0
        return sid

    def link(self, kind: str, a: str, a_port: int, b: str, rail: int = -1) -> None:
        b_port = self.ports[b]
        self.ports[b] += 1
        if kind != "node-leaf":
            a_port = self.ports[a]
            self.ports[a] += 1
        n = len(self.links) + 1
        self.links.append(
            Link(f"{_KIND_PREFIX[kind]}{n:06d}", kind, a, a_port, b, b_port, self.speed, 0, rail)
        )


def _shape(ports: int, speed: int, rails: tuple[int, ...] | None = None) -> NodeShape:
    return NodeShape(
        model="toy",
        gpus=ports,
        nics=ports,
        ports_per_nic=1,
        port_speed_gbps=speed,
        nic_model="toy",
        form_factor="osfp",
        ports_per_cage=1,
        port_plane=(0,) * ports,
        port_rail=rails if rails is not None else tuple(range(ports)),
    )


def _sizing(tiers: int, leaves: int, down: int, up: int) -> Sizing:
    return Sizing(tiers, "toy", 1024, "1:1", down, up, down, leaves, 0, 0, True)


def _node_id(i: int, n: int) -> str:
    return f"n{i:0{max(2, len(str(n - 1)))}d}"


def two_tier(
    leaves: int,
    nodes_per_leaf: int,
    spines: int,
    ports_per_node: int = 1,
    links_per_spine: int = 1,
    policy: str = "ecmp",
    speed: int = 400,
) -> Design:
    """Per-rack 2-tier fat-tree: every port of a node on its leaf; each leaf to every spine.

    >>> d = two_tier(leaves=2, nodes_per_leaf=2, spines=2)
    >>> d.link_counts()["leaf_spine"], len(d.switches)
    (4, 4)
    """
    w = _Wiring(speed)
    n = leaves * nodes_per_leaf
    nodes = tuple(
        Node(_node_id(i, n), i, i // nodes_per_leaf, 0, i // nodes_per_leaf) for i in range(n)
    )
    leaf_ids = [w.switch(f"leaf{j:02d}", "tor", su=j, rack=j) for j in range(leaves)]
    spine_ids = [w.switch(f"spine{j:02d}", "spine") for j in range(spines)]
    for node in nodes:
        for p in range(ports_per_node):
            w.link("node-leaf", node.id, p, leaf_ids[node.su], rail=p)
    for leaf in leaf_ids:
        for spine in spine_ids:
            for _ in range(links_per_spine):
                w.link("leaf-spine", leaf, 0, spine)
    down = nodes_per_leaf * ports_per_node
    return Design(
        name="toy-fat-tree",
        topology="fat-tree",
        gpus=n * ports_per_node,
        planes=1,
        shape=_shape(ports_per_node, speed),
        sizing=_sizing(2, leaves, down, spines * links_per_spine),
        routing=Routing(policy=policy),
        nodes=nodes,
        switches=tuple(w.switches),
        links=tuple(w.links),
    )


def matrix(
    nodes: int,
    rails: int,
    nodes_per_a: int,
    nodes_per_b: int,
    links_per_pair: int = 1,
    policy: str = "deterministic",
    speed: int = 200,
) -> Design:
    """Matrix of dual-port NICs: port 2i to the A leaf of rail i, port 2i+1 to a B leaf.

    >>> d = matrix(nodes=4, rails=2, nodes_per_a=2, nodes_per_b=2)
    >>> sorted({s.role for s in d.switches}), d.link_counts()["leaf_leaf"]
    (['leaf-a', 'leaf-b'], 8)
    """
    w = _Wiring(speed)
    node_objs = tuple(Node(_node_id(i, nodes), i, 0, 0, i // nodes_per_b) for i in range(nodes))
    a_groups = -(-nodes // nodes_per_a)
    b_groups = -(-nodes // nodes_per_b)
    a_ids = [
        [w.switch(f"a-r{r}-{g:02d}", "leaf-a", group="A", rail=r) for g in range(a_groups)]
        for r in range(rails)
    ]
    b_ids = [w.switch(f"b-{g:02d}", "leaf-b", group="B") for g in range(b_groups)]
    for node in node_objs:
        for r in range(rails):
            w.link("node-leaf", node.id, 2 * r, a_ids[r][node.index // nodes_per_a], rail=r)
            w.link("node-leaf", node.id, 2 * r + 1, b_ids[node.index // nodes_per_b], rail=r)
    for row in a_ids:
        for a in row:
            for b in b_ids:
                for _ in range(links_per_pair):
                    w.link("leaf-leaf", a, 0, b)
    shape = NodeShape(
        model="toy",
        gpus=2 * rails,
        nics=rails,
        ports_per_nic=2,
        port_speed_gbps=speed,
        nic_model="toy",
        form_factor="qsfp112",
        ports_per_cage=1,
        port_plane=(0,) * (2 * rails),
        port_rail=tuple(r for r in range(rails) for _ in range(2)),
    )
    return Design(
        name="toy-matrix",
        topology="matrix",
        gpus=nodes * 2 * rails,
        planes=1,
        shape=shape,
        sizing=_sizing(1, rails * a_groups + b_groups, nodes_per_a, b_groups * links_per_pair),
        routing=Routing(policy=policy),
        nodes=node_objs,
        switches=tuple(w.switches),
        links=tuple(w.links),
    )
