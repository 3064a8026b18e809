"""Matrix: a spineless fabric of two orthogonal leaf groups, A (single-rail) and B (multi-rail)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from railplan.catalog import SwitchModel
from railplan.design import Design, Node, NodeShape, Sizing
from railplan.errors import InfeasibleError, SpecError
from railplan.spec import Spec, spec_to_dict
from railplan.topology.reserved import refuse_reserved
from railplan.topology.roft import default_routing, make_nodes
from railplan.topology.shape import LeafSplit, leaf_split, switch_radix
from railplan.topology.tiers import TierModels
from railplan.topology.wiring import FabricBuilder

_EPS = 1e-9


@dataclass(frozen=True)
class PlaneGroups:
    """The node ports of one plane wired to group A and to group B, each in rail order."""

    a_ports: tuple[int, ...]
    b_ports: tuple[int, ...]

    @property
    def rails(self) -> int:
        return len(self.a_ports)


@dataclass(frozen=True)
class MatrixLayout:
    """How one plane is sized: nodes per A leaf and per B leaf, leaf counts, links per pair."""

    rails: int
    nodes_per_a: int
    a_per_rail: int
    nodes_per_b: int
    b_leaves: int
    links_per_pair: int

    @property
    def a_leaves(self) -> int:
        return self.rails * self.a_per_rail

    @property
    def leaves(self) -> int:
        return self.a_leaves + self.b_leaves


# -- which node ports go to which group -------------------------------------------------------


def plane_ports(shape: NodeShape, plane: int) -> list[int]:
    """The node ports of ``plane``, in port order."""
    return [p for p, pl in enumerate(shape.port_plane) if pl == plane]


def default_groups(shape: NodeShape, plane: int) -> PlaneGroups:
    """Port 0 of each NIC to A and port 1 to B; a NIC with one port here: first half of NICs to A.

    >>> from railplan.design import NodeShape
    >>> s = NodeShape("x", 8, 4, 2, 200, "n", "qsfp112", 1, (0,) * 8, tuple(range(8)))
    >>> default_groups(s, 0)
    PlaneGroups(a_ports=(0, 2, 4, 6), b_ports=(1, 3, 5, 7))
    """
    ports = plane_ports(shape, plane)
    by_nic: dict[int, list[int]] = {}
    for port in ports:
        by_nic.setdefault(shape.nic_of(port), []).append(port)
    if all(len(nic_ports) >= 2 for nic_ports in by_nic.values()):
        a = [p for nic_ports in by_nic.values() for p in nic_ports[0::2]]
        b = [p for nic_ports in by_nic.values() for p in nic_ports[1::2]]
    else:
        half = len(ports) // 2
        a, b = ports[:half], ports[half:]
    if len(a) != len(b) or not a:
        raise SpecError(
            f"fabric.planes: plane {plane} has {len(ports)} port(s) per node, which cannot be "
            "split evenly into a Matrix A and B group; use fewer planes or set "
            "fabric.matrix.a_ports"
        )
    return PlaneGroups(tuple(sorted(a)), tuple(sorted(b)))


def _checked_a_ports(a_ports: Sequence[int], ports: int) -> set[int]:
    chosen = set(a_ports)
    if not chosen:
        raise SpecError("fabric.matrix.a_ports: list at least one node port for group A")
    bad = sorted(p for p in chosen if not 0 <= p < ports)
    if bad:
        raise SpecError(
            f"fabric.matrix.a_ports: port(s) {bad} do not exist; a node has ports 0..{ports - 1}"
        )
    if len(chosen) != len(a_ports):
        raise SpecError("fabric.matrix.a_ports: list each node port once")
    if len(chosen) == ports:
        raise SpecError(
            "fabric.matrix.a_ports: lists every node port, leaving none for group B; "
            "list half of them"
        )
    return chosen


def matrix_groups(spec: Spec, shape: NodeShape) -> list[PlaneGroups]:
    """A and B ports per plane: the spec's ``fabric.matrix.a_ports`` or the default split.

    Every plane must give group A and group B the same number of ports: a flow leaves on an
    A port and arrives on a B port, so equal counts keep send and receive bandwidth equal and
    pair every A port with one B port (the two ports of a NIC, or a NIC and its partner).
    """
    planes = spec.fabric.planes
    chosen_list = spec.fabric.matrix.a_ports
    if chosen_list is None:
        return [default_groups(shape, plane) for plane in range(planes)]
    chosen = _checked_a_ports(chosen_list, shape.ports)
    groups = []
    for plane in range(planes):
        ports = plane_ports(shape, plane)
        a = tuple(p for p in ports if p in chosen)
        b = tuple(p for p in ports if p not in chosen)
        if len(a) != len(b) or not a:
            raise SpecError(
                f"fabric.matrix.a_ports: plane {plane} gets {len(a)} A and {len(b)} B port(s) "
                f"out of its ports {list(ports)}; give each plane as many A ports as B ports"
            )
        groups.append(PlaneGroups(a, b))
    return groups


def matrix_shape(shape: NodeShape, groups: Sequence[PlaneGroups]) -> NodeShape:
    """The shape with ``port_rail`` = a port's index among its plane's A (or B) ports."""
    rails = list(shape.port_rail)
    for g in groups:
        for ports in (g.a_ports, g.b_ports):
            for rail, port in enumerate(ports):
                rails[port] = rail
    return replace(shape, port_rail=tuple(rails))


# -- sizing ------------------------------------------------------------------------------------


def _links_per_pair(
    split: LeafSplit, a_leaves: int, b_leaves: int, load_a: int, load_b: int, whole: bool
) -> int:
    """Largest m both groups' up ports hold (whole build), else the least m keeping the ratio."""
    if whole:
        return min(split.up // b_leaves, split.up // a_leaves)
    need_a = math.ceil(load_a / (split.ratio * b_leaves) - _EPS)
    need_b = math.ceil(load_b / (split.ratio * a_leaves) - _EPS)
    return max(1, need_a, need_b)


def _fits(split: LeafSplit, lay: MatrixLayout) -> bool:
    m = lay.links_per_pair
    load_b = lay.rails * lay.nodes_per_b
    return (
        m >= 1
        and lay.b_leaves * m <= split.up
        and lay.a_leaves * m <= split.up
        and lay.nodes_per_a <= split.ratio * lay.b_leaves * m + _EPS
        and load_b <= split.ratio * lay.a_leaves * m + _EPS
    )


def _fills(nodes: int, most: int, least_leaves: int, max_leaves: int) -> list[tuple[int, int]]:
    """(leaves, nodes per leaf) choices with no empty leaf, fewest leaves first."""
    out = []
    for leaves in range(least_leaves, max_leaves + 1):
        per = math.ceil(nodes / leaves)
        if per <= most and math.ceil(nodes / per) == leaves:
            out.append((leaves, per))
    return out


def size_matrix(
    nodes: int,
    rails: int,
    split: LeafSplit,
    links_per_pair: int | None = None,
    whole: bool = True,
) -> MatrixLayout | None:
    """Fewest leaves (then the most links per pair) that hold ``nodes`` per plane, or None.

    A leaves hold one rail of ``nodes_per_a`` nodes; a B leaf takes all ``rails`` B ports of
    ``nodes_per_b`` nodes. Every A leaf has ``m`` links to every B leaf, and each leaf keeps
    node ports <= ratio x A-B links within its ``split.up`` ports.

    >>> from railplan.topology.shape import leaf_split
    >>> lay = size_matrix(4096, 4, leaf_split(256, 1.0))
    >>> lay.a_leaves, lay.nodes_per_a, lay.b_leaves, lay.nodes_per_b, lay.links_per_pair
    (128, 128, 128, 32, 1)
    >>> size_matrix(4097, 4, leaf_split(256, 1.0)) is None
    True
    """
    if nodes < 1 or rails < 1 or split.down // rails < 1:
        return None
    a_fills = _fills(nodes, split.down, math.ceil(nodes / split.down), split.up // rails)
    b_max = split.down // rails
    b_fills = _fills(nodes, b_max, math.ceil(nodes / b_max), split.up)
    best: MatrixLayout | None = None
    best_key: tuple[int, int, int] | None = None
    for a_per_rail, per_a in a_fills:
        for b_leaves, per_b in b_fills:
            if best_key is not None and rails * a_per_rail + b_leaves > best_key[0]:
                break
            m = links_per_pair or _links_per_pair(
                split, rails * a_per_rail, b_leaves, per_a, rails * per_b, whole
            )
            lay = MatrixLayout(rails, per_a, a_per_rail, per_b, b_leaves, m)
            if not _fits(split, lay):
                continue
            links = lay.a_leaves * b_leaves * m
            key = (lay.leaves, -links if whole else links, lay.a_leaves)
            if best_key is None or key < best_key:
                best, best_key = lay, key
    return best


def matrix_capacity(rails: int, split: LeafSplit, links_per_pair: int | None = None) -> int:
    """Most nodes one plane of a Matrix holds (R^2/4 A-B port pairs at 1:1 with m = 1)."""
    m = links_per_pair or 1
    if rails < 1 or split.down // rails < 1:
        return 0
    upper = min(
        (split.up // (rails * m)) * split.down,
        (split.up // m) * (split.down // rails),
    )
    lo, hi = 0, upper
    while lo < hi:  # largest feasible count; feasibility shrinks as nodes grow
        mid = (lo + hi + 1) // 2
        if size_matrix(mid, rails, split, links_per_pair) is not None:
            lo = mid
        else:
            hi = mid - 1
    return lo


def matrix_lower_bound(nodes: int, groups: Sequence[PlaneGroups], down: int) -> int:
    """Closed-form least leaves: each rail needs its own A leaves, a B leaf holds whole nodes.

    >>> matrix_lower_bound(4096, [PlaneGroups((0, 2, 4, 6), (1, 3, 5, 7))], 128)
    256
    """
    return sum(
        g.rails * math.ceil(nodes / down) + math.ceil(nodes / max(1, down // g.rails))
        for g in groups
    )


# -- wiring ------------------------------------------------------------------------------------


def _wire_plane(
    b: FabricBuilder,
    nodes: Sequence[Node],
    g: PlaneGroups,
    lay: MatrixLayout,
    plane: int,
    down: int,
) -> None:
    a_ids: list[str] = []
    for rail, port in enumerate(g.a_ports):
        for k in range(lay.a_per_rail):
            leaf = b.add_switch(
                f"p{plane}-leafA-r{rail}-{k + 1:02d}", "leaf-a", plane, su=k, group="A", rail=rail
            )
            a_ids.append(leaf)
            for node in nodes[k * lay.nodes_per_a : (k + 1) * lay.nodes_per_a]:
                b.add_link("node-leaf", node.id, port, leaf, b.take_port(leaf), plane, rail)
            b.skip_to(leaf, down)
    b_ids: list[str] = []
    for k in range(lay.b_leaves):
        leaf = b.add_switch(f"p{plane}-leafB-{k + 1:02d}", "leaf-b", plane, su=k, group="B")
        b_ids.append(leaf)
        for node in nodes[k * lay.nodes_per_b : (k + 1) * lay.nodes_per_b]:
            for rail, port in enumerate(g.b_ports):
                b.add_link("node-leaf", node.id, port, leaf, b.take_port(leaf), plane, rail)
        b.skip_to(leaf, down)
    for a_leaf in a_ids:
        for b_leaf in b_ids:
            b.connect("leaf-leaf", a_leaf, b_leaf, plane, lay.links_per_pair)


def _too_big(
    spec: Spec, shape: NodeShape, model: SwitchModel, radix: int, split: LeafSplit, rails: int
) -> str:
    most = matrix_capacity(rails, split, spec.fabric.matrix.links_per_pair)
    m = spec.fabric.matrix.links_per_pair
    with_m = f" with {m} links per A-B pair" if m else ""
    return (
        f"cluster.gpus: {spec.cluster.gpus} GPUs exceed the largest {spec.fabric.oversubscription} "
        f"Matrix of {model.id} ({radix}x{shape.port_speed_gbps}G){with_m} with "
        f"{spec.fabric.planes} plane(s), which holds at most {most} nodes ({most * shape.gpus} "
        f"GPUs, {most * shape.nics} NICs); use topology roft, more planes (fabric.planes) or a "
        "larger switch"
    )


def _layout(spec: Spec, n_nodes: int, rails: int, split: LeafSplit) -> MatrixLayout | None:
    m = spec.fabric.matrix.links_per_pair
    lay = size_matrix(n_nodes, rails, split, m, spec.fabric.whole_su)
    if lay is None and m is not None and size_matrix(n_nodes, rails, split) is not None:
        raise InfeasibleError(
            f"fabric.matrix.links_per_pair: {m} links per A-B leaf pair do not fit the leaves' "
            f"{split.up} up ports for {n_nodes} nodes; lower it or leave it out"
        )
    return lay


def matrix(spec: Spec, shape: NodeShape, models: SwitchModel | TierModels) -> Design:
    """Every A leaf linked to every B leaf with m links; A leaves single-rail, B multi-rail."""
    model = TierModels.of(models).leaf
    leaf_tier = spec.fabric.leaf
    if leaf_tier is not None and leaf_tier.up_gbps not in (None, shape.port_speed_gbps):
        raise SpecError(
            f"fabric.leaf.up_gbps: a Matrix links its leaves at the node speed "
            f"({shape.port_speed_gbps}G); leave up_gbps out or use topology roft"
        )
    refuse_reserved(spec, "matrix")
    n_nodes = spec.cluster.gpus // shape.gpus
    radix = switch_radix(model, shape.port_speed_gbps)
    split = leaf_split(radix, spec.fabric.oversubscription_ratio)
    groups = matrix_groups(spec, shape)
    shape = matrix_shape(shape, groups)
    layouts: dict[int, MatrixLayout] = {}
    for g in groups:
        if g.rails not in layouts:
            lay = _layout(spec, n_nodes, g.rails, split)
            if lay is None:
                raise InfeasibleError(_too_big(spec, shape, model, radix, split, g.rails))
            layouts[g.rails] = lay
    first = layouts[groups[0].rails]
    nodes = make_nodes(n_nodes, first.nodes_per_a, 0, spec.layout.nodes_per_rack)
    b = FabricBuilder(model, shape.port_speed_gbps, radix)
    for plane, g in enumerate(groups):
        _wire_plane(b, nodes, g, layouts[g.rails], plane, split.down)
    return Design(
        name=spec.name,
        topology="matrix",
        gpus=spec.cluster.gpus,
        planes=spec.fabric.planes,
        shape=shape,
        sizing=Sizing(
            tiers=1,
            switch_model=model.id,
            radix=radix,
            oversubscription=spec.fabric.oversubscription,
            leaf_down=split.down,
            leaf_up=split.up,
            su_nodes=first.nodes_per_a,
            sus=first.a_per_rail,
            pods=0,
            lower_bound_switches=matrix_lower_bound(n_nodes, groups, split.down),
            whole_su=spec.fabric.whole_su,
            attachment=spec.fabric.attachment,
            notes=_notes(first),
        ),
        routing=default_routing(spec, "matrix", 1),
        nodes=nodes,
        switches=tuple(b.switches),
        links=tuple(b.links),
        spec=spec_to_dict(spec),
    )


def _notes(lay: MatrixLayout) -> tuple[str, ...]:
    return (
        f"A leaves per plane: {lay.rails} rails x {lay.a_per_rail}, "
        f"up to {lay.nodes_per_a} nodes each",
        f"B leaves per plane: {lay.b_leaves}, each taking all {lay.rails} B ports of up to "
        f"{lay.nodes_per_b} nodes",
        f"links per A-B leaf pair: {lay.links_per_pair}",
    )
