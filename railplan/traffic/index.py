"""FabricIndex: a Design as integer arrays (links, equal-cost groups, leaf positions), cached."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.sparse import coo_matrix

from railplan.design import Design, Link
from railplan.design.endpoints import endpoints
from railplan.errors import RailplanError
from railplan.traffic.ecmp_groups import UNREACHABLE, equal_cost_groups, leaf_distances
from railplan.traffic.hashing import switch_seeds


class RoutingError(RailplanError):
    """A flow cannot be routed: unknown endpoint, uncabled port or no path."""


class FabricIndex:
    """Integer arrays describing a Design, built once and shared by every routing call.

    Directed link ``2*i`` is link ``i`` from its a end to its b end (toward the core), ``2*i+1``
    the way back. A flow's equal-cost next hops at a switch are the outgoing links to neighbours
    one hop closer (in switch hops) to the destination leaf: ECMP over shortest paths, which on
    the Clos families is the up*/down* rule and on Matrix the direct A-B bundle.
    """

    def __init__(self, design: Design, intact: Design | None = None) -> None:
        self.design = design
        #: a design with failed parts (``intact`` given): flows with no route are lost, not
        #: an error
        self.degraded = intact is not None
        shape = design.shape
        self.node_ids = [n.id for n in design.nodes]
        self.node_pos = {n: i for i, n in enumerate(self.node_ids)}
        self.switch_ids = [s.id for s in design.switches]
        self.switch_pos = {s: i for i, s in enumerate(self.switch_ids)}
        self.roles = [s.role for s in design.switches]
        self.n_nodes = len(self.node_ids)
        #: NVLink domain of every node (its own index unless the node model is rack-scale)
        self.domain_nodes = getattr(shape, "domain_nodes", 1)
        self.node_domain = (
            np.array([n.index for n in design.nodes], dtype=np.int64) // self.domain_nodes
        )
        self.n_ports = shape.ports
        self.n_switches = len(self.switch_ids)
        self.port_speed = float(shape.port_speed_gbps)
        links = design.links
        self.link_ids = [lk.id for lk in links]
        nl = len(links)
        self.n_dlinks = 2 * nl
        rate = np.array([lk.rate_gbps for lk in links], dtype=np.float64)
        self.capacity = np.repeat(rate, 2)
        # device of each directed link's tail and head (switch index, or -1 for a node)
        self.dl_from = np.full(2 * nl, -1, dtype=np.int32)
        self.dl_to = np.full(2 * nl, -1, dtype=np.int32)
        self.ep_link = np.full((self.n_nodes, self.n_ports), -1, dtype=np.int32)
        self.ep_leaf = np.full((self.n_nodes, self.n_ports), -1, dtype=np.int32)
        ep_leaf_port = np.full((self.n_nodes, self.n_ports), -1, dtype=np.int64)
        for i, lk in enumerate(links):
            if lk.kind == "node-leaf":
                node = self.node_pos.get(lk.a_device)
                leaf = self.switch_pos.get(lk.b_device)
                if node is None or leaf is None or not 0 <= lk.a_port < self.n_ports:
                    raise RoutingError(f"link {lk.id} joins devices the design does not have")
                self.ep_link[node, lk.a_port] = i
                self.ep_leaf[node, lk.a_port] = leaf
                ep_leaf_port[node, lk.a_port] = lk.b_port
                self.dl_to[2 * i] = leaf
                self.dl_from[2 * i + 1] = leaf
            elif lk.kind != "device-leaf":  # attached devices carry no GPU traffic
                a = self.switch_pos[lk.a_device]
                b = self.switch_pos[lk.b_device]
                self.dl_from[2 * i], self.dl_to[2 * i] = a, b
                self.dl_from[2 * i + 1], self.dl_to[2 * i + 1] = b, a
        cabled = self.ep_leaf >= 0
        self.ep_rank = np.full((self.n_nodes, self.n_ports), -1, dtype=np.int64)
        self.ep_rank[cabled] = _ftree_ranks(
            self.ep_leaf[cabled], ep_leaf_port[cabled], [s.plane for s in design.switches]
        )
        # 32-bit host address per NIC port: 10.x.y.z, unique per (node, port)
        ids = np.arange(self.n_nodes * self.n_ports, dtype=np.int64).reshape(cabled.shape)
        self.ep_ip = ((10 << 24) | ((ids + 1) & 0xFFFFFF)).astype(np.uint32)
        self._build_groups()
        self._seed_cache: dict[tuple[str, int], NDArray] = {}
        self._slots(intact.links if intact is not None else links)
        self.endpoints = endpoints(intact if intact is not None else design)
        self.is_matrix = self.endpoints.orthogonal

    # -- equal-cost groups ----------------------------------------------------------------------
    def _build_groups(self) -> None:
        leaves = np.unique(self.ep_leaf[self.ep_leaf >= 0])
        self.leaf_col = np.full(self.n_switches, -1, dtype=np.int32)
        self.leaf_col[leaves] = np.arange(leaves.size, dtype=np.int32)
        self.col_leaf = leaves.astype(np.int32)
        sw_links = np.nonzero(self.dl_from[0::2] >= 0)[0]
        a = self.dl_from[2 * sw_links]
        b = self.dl_to[2 * sw_links]
        graph = coo_matrix(
            (np.ones(sw_links.size), (a, b)), shape=(self.n_switches, self.n_switches)
        ).tocsr()
        self.dist = leaf_distances(graph, leaves).T  # (switch, leaf column)
        # outgoing switch-to-switch directed links of each switch, grouped by neighbour
        out_dl = np.concatenate([2 * sw_links, 2 * sw_links + 1])
        out_from = self.dl_from[out_dl]
        out_to = self.dl_to[out_dl]
        order = np.lexsort((out_dl, out_to, out_from))
        out_dl, out_from, out_to = out_dl[order], out_from[order], out_to[order]
        (self.group_of, self.g_start, self.g_size, self.g_nbrs, self.g_members) = equal_cost_groups(
            self.dist, out_dl, out_from, out_to, self.n_switches
        )

    # -- where each node port sits on its leaf --------------------------------------------------
    def _slots(self, links: Sequence[Link]) -> None:
        """``ep_slot``: a node port's position among its leaf's ports of the same rail.

        On a Matrix A leaf (one rail) and B leaf (every rail of a few nodes) alike this is the
        node's position on the leaf, which the deterministic rule spreads bundles by.
        """
        rail_of = self.design.shape.port_rail
        leaf_no: dict[str, int] = {}
        rows = [
            (leaf_no.setdefault(lk.b_device, len(leaf_no)), rail_of[lk.a_port], lk.b_port,
             self.node_pos[lk.a_device], lk.a_port)
            for lk in links
            if lk.kind == "node-leaf" and 0 <= lk.a_port < self.n_ports
        ]  # fmt: skip
        self.ep_slot = np.full((self.n_nodes, self.n_ports), -1, dtype=np.int64)
        self.slot_stride = 1
        if not rows:
            return
        leaf, rail, port, node, nport = np.array(rows, dtype=np.int64).T
        order = np.lexsort((port, rail, leaf))
        key = (leaf * (self.n_ports + 1) + rail)[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        sizes = np.diff(np.r_[starts, key.size])
        pos = np.empty(order.size, dtype=np.int64)
        pos[order] = np.arange(order.size) - np.repeat(starts, sizes)
        self.ep_slot[node, nport] = pos
        #: most ports one rail has on one leaf: the stride between rails in ``slots``
        self.slot_stride = int(sizes.max())

    def slots(
        self, src_node: ArrayLike, src_port: ArrayLike, dst_node: ArrayLike, dst_port: ArrayLike
    ) -> tuple[NDArray, NDArray, NDArray]:
        """(s, t, shift) of the deterministic rule: the source's ``ep_slot``, the destination
        node's at the source's port number (the same rail and leaf group: on a Matrix
        X.A -> Y.B counts Y's position on its A leaf; at its own port where that one is not
        cabled), and for a flow from one rail to another ``slot_stride`` times the rail
        distance (0 for rail-aligned flows), so cross-rail traffic over a shared bundle, e.g.
        the ISLs between rail-only switches, reaches every link of it."""
        sn, sp, dn, dp = (
            np.asarray(a, dtype=np.int64) for a in (src_node, src_port, dst_node, dst_port)
        )
        t = self.ep_slot[dn, sp]
        rail = np.asarray(self.design.shape.port_rail, dtype=np.int64)
        rails = int(rail.max()) + 1 if rail.size else 1
        shift = self.slot_stride * ((rail[dp] - rail[sp]) % rails)
        return self.ep_slot[sn, sp], np.where(t >= 0, t, self.ep_slot[dn, dp]), shift

    # -- endpoints --------------------------------------------------------------------------------
    def endpoint(self, node: str, port: int) -> tuple[int, int]:
        """(node index, leaf switch index) of a cabled NIC port, or RoutingError."""
        i = self.node_pos.get(node)
        if i is None:
            raise RoutingError(f"node {node} is not in design {self.design.name}")
        if not 0 <= port < self.n_ports or self.ep_leaf[i, port] < 0:
            raise RoutingError(f"port {port} of {node} is not cabled in design {self.design.name}")
        return i, int(self.ep_leaf[i, port])

    def describe_dlink(self, dl: int) -> tuple[str, str, str]:
        """(link id, from device, to device) of a directed link."""
        lk = self.design.links[dl // 2]
        if dl % 2 == 0:
            return lk.id, lk.a_device, lk.b_device
        return lk.id, lk.b_device, lk.a_device

    def hash_seeds(self, mode: str, salt: int = 0) -> NDArray:
        """ECMP hash seed of every switch under seeding ``mode`` (per-switch or same)."""
        key = (mode, salt)
        if key not in self._seed_cache:
            self._seed_cache[key] = switch_seeds(self.switch_ids, mode, salt)
        return self._seed_cache[key]

    def check_reachable(self, src_leaf: NDArray, dst_leaf: NDArray) -> None:
        cols = self.leaf_col[dst_leaf]
        bad = self.dist[src_leaf, cols] >= UNREACHABLE
        if bad.any():
            k = int(np.argmax(bad))
            raise RoutingError(
                f"no path from {self.switch_ids[src_leaf[k]]} to {self.switch_ids[dst_leaf[k]]}: "
                "they are in different planes or parts of the fabric (cross-rail traffic on a "
                "rail-only fabric needs PXN through NVLink)"
            )


def _ftree_ranks(leaf: NDArray, leaf_port: NDArray, plane_of_switch: Sequence[int]) -> NDArray:
    """The D-mod-k destination index of each cabled NIC port, numbered as OpenSM's fat-tree
    routing engine numbers its destinations (opensm/osm_ucast_ftree.c, ``fabric_route_to_cns``):
    leaf switches in index order, on each leaf its compute-node ports in port order, and every
    leaf padded to ``max_cn_per_leaf`` (the most ports any leaf has: ``fabric_set_max_cn_per_leaf``
    routes "dummy" destinations on a leaf with fewer), so a leaf's k-th port has index
    ``leaf * max_cn_per_leaf + k``. Each plane is a subnet of its own, numbered from 0.

    The leaf order is the design's (its switch order: SU by SU, rail by rail in an SU, pod by
    pod): ftree's indexing walks the tree breadth first from the first leaf and numbers pods and
    the leaves under each spine in the order it meets them, which for cabling in port order is
    that order (``tests/test_ftree_reference.py`` checks the routes against that walk).
    """
    if not leaf.size:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((leaf_port, leaf))
    sl = leaf[order]
    starts = np.flatnonzero(np.r_[True, sl[1:] != sl[:-1]])
    sizes = np.diff(np.r_[starts, sl.size])
    pos = np.arange(sl.size) - np.repeat(starts, sizes)
    planes = np.asarray(plane_of_switch, dtype=np.int64)[sl[starts]]
    # the leaf's position among the leaves of its plane (leaves already in switch order)
    p_order = np.argsort(planes, kind="stable")
    ordinal = np.empty(starts.size, dtype=np.int64)
    sp = planes[p_order]
    p_starts = np.flatnonzero(np.r_[True, sp[1:] != sp[:-1]])
    p_sizes = np.diff(np.r_[p_starts, sp.size])
    ordinal[p_order] = np.arange(sp.size) - np.repeat(p_starts, p_sizes)
    max_cn = int(sizes.max())
    rank = np.empty(sl.size, dtype=np.int64)
    rank[order] = np.repeat(ordinal, sizes) * max_cn + pos
    return rank


_CACHE: OrderedDict[int, tuple[Design, FabricIndex]] = OrderedDict()


def fabric_index(design: Design, intact: Design | None = None) -> FabricIndex:
    """The FabricIndex of a design, cached for the last few designs seen.

    ``intact``: the design ``design`` was failed from (``failures.fail``); the connection
    endpoints and the ports' leaf positions (``ep_slot``) come from it, so the flows that
    survive keep their deterministic links and a dead port's connections are lost, not
    forgotten.
    """
    hit = _CACHE.get(id(design))
    if hit is not None and hit[0] is design:
        _CACHE.move_to_end(id(design))
        return hit[1]
    index = FabricIndex(design, intact)
    _CACHE[id(design)] = (design, index)
    while len(_CACHE) > 4:
        _CACHE.popitem(last=False)
    return index
