"""Paths through a Design: equal-cost groups per switch, single-pair paths and a bulk router."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path

from railplan.design import Design
from railplan.errors import RailplanError
from railplan.traffic.hashing import (
    ROCEV2_UDP_DPORT,
    five_tuple_crc,
    switch_hash,
    switch_seeds,
)

POLICIES = ("ecmp", "dmodk", "deterministic", "adaptive")
HASHES = ("crc32", "random")
_UNREACHABLE = np.iinfo(np.int16).max
_MAX_HOPS = 16


class RoutingError(RailplanError):
    """A flow cannot be routed: unknown endpoint, uncabled port or no path."""


@dataclass(frozen=True, slots=True)
class Hop:
    """One link crossed in one direction: ``link`` id, from device ``src`` to device ``dst``."""

    link: str
    src: str
    dst: str


@dataclass(frozen=True, slots=True)
class Path:
    """A path from a NIC port to a NIC port; ``weight`` is its share of the flow.

    Under adaptive routing the weight is the fraction of the flow's bytes on this path; under
    ECMP it is the chance that the hash picks it (uniform hashing); a static route has 1.
    """

    hops: tuple[Hop, ...]
    weight: float = 1.0

    @property
    def links(self) -> tuple[str, ...]:
        return tuple(h.link for h in self.hops)

    @property
    def switches(self) -> tuple[str, ...]:
        return tuple(h.dst for h in self.hops[:-1])

    @property
    def switch_hops(self) -> int:
        """Switches the path crosses (1 under one leaf, 2 for Matrix A->B, 3 up to a spine)."""
        return len(self.hops) - 1


class FabricIndex:
    """Integer arrays describing a Design, built once and shared by every routing call.

    Directed link ``2*i`` is link ``i`` from its a end to its b end (toward the core), ``2*i+1``
    the way back. A flow's equal-cost next hops at a switch are the outgoing links to neighbours
    one hop closer (in switch hops) to the destination leaf: ECMP over shortest paths, which on
    the Clos families is the up*/down* rule and on Matrix the direct A-B bundle.
    """

    def __init__(self, design: Design) -> None:
        self.design = design
        shape = design.shape
        self.node_ids = [n.id for n in design.nodes]
        self.node_pos = {n: i for i, n in enumerate(self.node_ids)}
        self.switch_ids = [s.id for s in design.switches]
        self.switch_pos = {s: i for i, s in enumerate(self.switch_ids)}
        self.roles = [s.role for s in design.switches]
        self.n_nodes = len(self.node_ids)
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
        # D-mod-k destination index: endpoints numbered in leaf-port order (as OpenSM ftree)
        cabled = self.ep_leaf >= 0
        order = np.lexsort((ep_leaf_port[cabled], self.ep_leaf[cabled]))
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.arange(order.size)
        self.ep_rank = np.full((self.n_nodes, self.n_ports), -1, dtype=np.int64)
        self.ep_rank[cabled] = rank
        # 32-bit host address per NIC port: 10.x.y.z, unique per (node, port)
        ids = np.arange(self.n_nodes * self.n_ports, dtype=np.int64).reshape(cabled.shape)
        self.ep_ip = ((10 << 24) | ((ids + 1) & 0xFFFFFF)).astype(np.uint32)
        self._build_groups()
        self._seed_cache: dict[tuple[str, int], NDArray] = {}
        self._matrix_ports()

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
        if leaves.size:
            dist = shortest_path(graph, directed=False, unweighted=True, indices=leaves)
        else:
            dist = np.zeros((0, self.n_switches))
        dist[~np.isfinite(dist)] = _UNREACHABLE
        self.dist = dist.T.astype(np.int16)  # (switch, leaf column)
        # outgoing switch-to-switch directed links of each switch, grouped by neighbour
        out_dl = np.concatenate([2 * sw_links, 2 * sw_links + 1])
        out_from = self.dl_from[out_dl]
        out_to = self.dl_to[out_dl]
        order = np.lexsort((out_dl, out_to, out_from))
        out_dl, out_from, out_to = out_dl[order], out_from[order], out_to[order]
        starts = np.searchsorted(out_from, np.arange(self.n_switches + 1))
        n_cols = leaves.size
        self.group_of = np.full((self.n_switches, n_cols), -1, dtype=np.int32)
        g_start: list[int] = []
        g_size: list[int] = []
        g_nbrs: list[int] = []
        members: list[NDArray] = []
        total = 0
        for s in range(self.n_switches):
            lo, hi = starts[s], starts[s + 1]
            if lo == hi:
                continue
            nbr_of = out_to[lo:hi]
            dls = out_dl[lo:hi]
            nbrs, first, counts = np.unique(nbr_of, return_index=True, return_counts=True)
            ds = self.dist[s].astype(np.int32)
            cand = self.dist[nbrs].astype(np.int32) == (ds - 1)[None, :]
            cand &= (ds > 0)[None, :] & (ds < _UNREACHABLE)[None, :]
            useful = cand.any(axis=0)
            if not useful.any():
                continue
            packed = np.packbits(cand[:, useful], axis=0).T.copy()
            keys = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
            uniq, inverse = np.unique(keys, return_inverse=True)
            cols = np.nonzero(useful)[0]
            ids = np.empty(uniq.size, dtype=np.int32)
            for k in range(uniq.size):
                rep = cols[np.argmax(inverse == k)]
                chosen = np.nonzero(cand[:, rep])[0]
                # interleave the bundles: first link to each neighbour, then second, ...
                per = [dls[first[j] : first[j] + counts[j]] for j in chosen]
                width = max(len(p) for p in per)
                seq = [p[r] for r in range(width) for p in per if r < len(p)]
                ids[k] = len(g_start)
                g_start.append(total)
                g_size.append(len(seq))
                g_nbrs.append(len(chosen))
                members.append(np.asarray(seq, dtype=np.int64))
                total += len(seq)
            self.group_of[s, cols] = ids[inverse.ravel()]
        self.g_start = np.asarray(g_start, dtype=np.int64)
        self.g_size = np.asarray(g_size, dtype=np.int64)
        self.g_nbrs = np.asarray(g_nbrs, dtype=np.int64)
        self.g_members = np.concatenate(members) if members else np.zeros(0, dtype=np.int64)

    # -- Matrix: which node ports are A and B ----------------------------------------------------
    def _matrix_ports(self) -> None:
        """For Matrix designs: the B port paired with each A port (same plane and rail)."""
        self.is_matrix = "leaf-a" in self.roles
        self.a_ports: tuple[int, ...] = ()
        self.b_ports: tuple[int, ...] = ()
        if not self.is_matrix or not self.n_nodes:
            return
        shape = self.design.shape
        role = np.array([*self.roles, ""])
        group = role[self.ep_leaf]  # ep_leaf -1 picks ""
        a_cols = np.all(group == "leaf-a", axis=0)
        b_cols = np.all(group == "leaf-b", axis=0)
        a = [p for p in range(self.n_ports) if a_cols[p]]
        b_by_key = {(shape.port_plane[p], shape.port_rail[p]): p for p in range(self.n_ports)}
        pairs = []
        for p in a:
            q = b_by_key.get((shape.port_plane[p], shape.port_rail[p]))
            if q is None or not b_cols[q] or q == p:
                q = next((x for x in range(self.n_ports) if b_cols[x] and x not in pairs), -1)
            if q < 0:
                raise RoutingError(f"Matrix design: node port {p} (group A) has no B partner")
            pairs.append(q)
        self.a_ports, self.b_ports = tuple(a), tuple(pairs)

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
        bad = self.dist[src_leaf, cols] >= _UNREACHABLE
        if bad.any():
            k = int(np.argmax(bad))
            raise RoutingError(
                f"no path from {self.switch_ids[src_leaf[k]]} to {self.switch_ids[dst_leaf[k]]}: "
                "they are in different planes or parts of the fabric (cross-rail traffic on a "
                "rail-only fabric needs PXN through NVLink)"
            )


_CACHE: OrderedDict[int, tuple[Design, FabricIndex]] = OrderedDict()


def fabric_index(design: Design) -> FabricIndex:
    """The FabricIndex of a design, cached for the last few designs seen."""
    hit = _CACHE.get(id(design))
    if hit is not None and hit[0] is design:
        _CACHE.move_to_end(id(design))
        return hit[1]
    index = FabricIndex(design)
    _CACHE[id(design)] = (design, index)
    while len(_CACHE) > 4:
        _CACHE.popitem(last=False)
    return index


def effective_policy(design: Design, routing: str | None = None, traffic_class: int = 0) -> str:
    """The routing a flow of ``traffic_class`` sees: ``routing`` if given, else the design's.

    Adaptive routing is enabled per traffic class (IB service level): a design whose policy is
    adaptive with a class list applies it only to those classes and hashes the rest with ECMP
    (Matrix: deterministic); a class listed on a non-adaptive design is routed adaptively.
    """
    if routing is not None:
        if routing not in POLICIES:
            raise RoutingError(f"routing {routing!r} is not a policy; use {', '.join(POLICIES)}")
        return routing
    r = design.routing
    fallback = "deterministic" if design.topology in ("matrix", "rail-only") else "ecmp"
    if r.policy == "adaptive":
        if not r.adaptive_classes or traffic_class in r.adaptive_classes:
            return "adaptive"
        return fallback
    if traffic_class in r.adaptive_classes:
        return "adaptive"
    if r.policy not in POLICIES:
        raise RoutingError(f"design routing policy {r.policy!r} is not one railplan models")
    return r.policy


# -- single pair ------------------------------------------------------------------------------


def paths(
    design: Design,
    src_node: str,
    src_port: int,
    dst_node: str,
    dst_port: int,
    routing: str | None = None,
) -> list[Path]:
    """Every path a flow from (src_node, src_port) to (dst_node, dst_port) may take.

    ECMP and adaptive routing give every equal-cost path (weights: the share of the flow under
    an even split, or the chance of being hashed onto it); D-mod-k and deterministic routing
    give the single static path.

    >>> from railplan import plan, spec_from_dict
    >>> cluster = {"gpus": 256, "node": "hgx-h100-8x400g"}  # 2 SUs of 16 nodes
    >>> d = plan(spec_from_dict({"cluster": cluster, "fabric": {"switches": ["cx732q-n"]}}))
    >>> [p.switch_hops for p in paths(d, "node0001", 0, "node0002", 0)]  # one leaf
    [1]
    >>> up = paths(d, "node0001", 0, "node0032", 0, routing="ecmp")  # over the spines
    >>> len(up), {p.switch_hops for p in up}
    (32, {3})
    """
    ix = fabric_index(design)
    policy = effective_policy(design, routing)
    s, s_leaf = ix.endpoint(src_node, src_port)
    d, d_leaf = ix.endpoint(dst_node, dst_port)
    first = int(2 * ix.ep_link[s, src_port])
    last = int(2 * ix.ep_link[d, dst_port] + 1)
    ix.check_reachable(np.array([s_leaf]), np.array([d_leaf]))
    col = int(ix.leaf_col[d_leaf])
    rank = int(ix.ep_rank[d, dst_port])
    found: list[tuple[list[int], float]] = []

    def walk(sw: int, hops: list[int], weight: float, div: int) -> None:
        if sw == d_leaf:
            found.append((hops, weight))
            return
        g = int(ix.group_of[sw, col])
        start, size = int(ix.g_start[g]), int(ix.g_size[g])
        if policy in ("dmodk", "deterministic"):
            k = (rank // div) % size
            dl = int(ix.g_members[start + k])
            walk(int(ix.dl_to[dl]), [*hops, dl], weight, div * int(ix.g_nbrs[g]))
            return
        for k in range(size):
            dl = int(ix.g_members[start + k])
            walk(int(ix.dl_to[dl]), [*hops, dl], weight / size, div)

    walk(s_leaf, [first], 1.0, 1)
    out = []
    for hops, weight in found:
        seq = [*hops, last]
        out.append(Path(tuple(Hop(*ix.describe_dlink(dl)) for dl in seq), weight))
    return out


# -- bulk -------------------------------------------------------------------------------------


@dataclass
class Routed:
    """Directed links of many flows: entry k puts ``weight[k]`` of flow ``flow[k]`` on ``dlink[k]``.

    Adaptive routing is stored factored: ``comm_of_flow`` maps flows to (source leaf,
    destination leaf) commodities, whose split over the fabric is ``comm``/``comm_dlink``/
    ``comm_weight``; the NIC links stay in the per-flow part.
    """

    flow: NDArray[np.int64]
    dlink: NDArray[np.int64]
    weight: NDArray[np.float64]
    comm_of_flow: NDArray[np.int64] | None = None
    comm: NDArray[np.int64] | None = None
    comm_dlink: NDArray[np.int64] | None = None
    comm_weight: NDArray[np.float64] | None = None
    n_comm: int = 0


def flow_hash(
    ix: FabricIndex,
    src: tuple[NDArray, NDArray],
    dst: tuple[NDArray, NDArray],
    lqpn: NDArray,
    rqpn: NDArray,
) -> NDArray[np.uint32]:
    """CRC-32 (seed 0) of each flow's RoCEv2 header fields the design's switches hash."""
    from railplan.traffic.hashing import rocev2_udp_sport

    sport = rocev2_udp_sport(lqpn, rqpn)
    return five_tuple_crc(
        ix.ep_ip[src],
        ix.ep_ip[dst],
        sport,
        ROCEV2_UDP_DPORT,
        fields=ix.design.routing.hash_fields,
    )


def route_bulk(
    ix: FabricIndex,
    src_node: NDArray,
    src_port: NDArray,
    dst_node: NDArray,
    dst_port: NDArray,
    policy: str,
    *,
    hash_base: NDArray | None = None,
    hash_seeds: str = "per-switch",
    rng: np.random.Generator | None = None,
    include_nic: bool = True,
) -> Routed:
    """Route many flows at once; vectorized over flows, one numpy step per switch hop.

    ``policy``: ``ecmp`` picks a member of each equal-cost group by the flow's hash
    (``hash_base``, the CRC of its header, through each switch's ``switch_hash``) or, with
    ``hash_base`` None, uniformly at random from ``rng``; ``dmodk``/``deterministic`` pick
    member (d // div) mod n, d = destination index in leaf-port order; ``adaptive`` splits each
    flow evenly over every member of every group (packet spraying, fluid).
    ``include_nic`` False leaves out the two NIC links (node to leaf, leaf to node).
    """
    n = len(src_node)
    s_leaf = ix.ep_leaf[src_node, src_port]
    d_leaf = ix.ep_leaf[dst_node, dst_port]
    if n and ((s_leaf < 0).any() or (d_leaf < 0).any()):
        raise RoutingError("a flow starts or ends on a node port that is not cabled")
    ix.check_reachable(s_leaf, d_leaf)
    flows = np.arange(n, dtype=np.int64)
    first = 2 * ix.ep_link[src_node, src_port].astype(np.int64)
    last = 2 * ix.ep_link[dst_node, dst_port].astype(np.int64) + 1
    nic_flow = np.concatenate([flows, flows]) if include_nic else flows[:0]
    nic_dl = np.concatenate([first, last]) if include_nic else first[:0]
    if policy == "adaptive":
        comm_keys = s_leaf.astype(np.int64) * ix.n_switches + d_leaf
        uniq, comm_of_flow = np.unique(comm_keys, return_inverse=True)
        c, dl, w = _spray(ix, (uniq // ix.n_switches).astype(np.int32), uniq % ix.n_switches)
        return Routed(
            nic_flow,
            nic_dl,
            np.ones(nic_dl.size),
            comm_of_flow.astype(np.int64).ravel(),
            c,
            dl,
            w,
            int(uniq.size),
        )
    out_f = [nic_flow]
    out_dl = [nic_dl]
    cur = s_leaf.astype(np.int32).copy()
    col = ix.leaf_col[d_leaf]
    live = np.nonzero(cur != d_leaf)[0]
    rank = ix.ep_rank[dst_node, dst_port]
    div = np.ones(n, dtype=np.int64)
    seeds = ix.hash_seeds(hash_seeds) if hash_base is not None else None
    static = policy in ("dmodk", "deterministic")
    for _ in range(_MAX_HOPS):
        if not live.size:
            break
        sw = cur[live]
        g = ix.group_of[sw, col[live]]
        size = ix.g_size[g]
        if static:
            k = (rank[live] // div[live]) % size
            div[live] *= ix.g_nbrs[g]
        elif hash_base is not None:
            assert seeds is not None
            h = switch_hash(hash_base[live], seeds[sw], hash_seeds)
            k = h.astype(np.int64) % size
        else:
            gen = rng or np.random.default_rng(0)
            k = (gen.random(live.size) * size).astype(np.int64)
        dl = ix.g_members[ix.g_start[g] + k]
        out_f.append(live)
        out_dl.append(dl)
        cur[live] = ix.dl_to[dl]
        live = live[cur[live] != d_leaf[live]]
    else:
        raise RoutingError("a flow did not reach its leaf within 16 switch hops")
    f = np.concatenate(out_f)
    dls = np.concatenate(out_dl)
    return Routed(f, dls, np.ones(f.size))


def _spray(
    ix: FabricIndex, src_leaf: NDArray, dst_leaf: NDArray
) -> tuple[NDArray, NDArray, NDArray]:
    """Even split of each (source leaf, destination leaf) commodity over its equal-cost paths."""
    m = len(src_leaf)
    comm = np.arange(m, dtype=np.int64)
    cur = src_leaf.astype(np.int64)
    w: NDArray = np.ones(m)
    col = ix.leaf_col[dst_leaf].astype(np.int64)
    target = dst_leaf.astype(np.int64)
    out_c, out_dl, out_w = [], [], []
    for _ in range(_MAX_HOPS):
        live = cur != target[comm]
        comm, cur, w = comm[live], cur[live], w[live]
        if not comm.size:
            break
        g = ix.group_of[cur, col[comm]]
        size = ix.g_size[g]
        rep = np.repeat(np.arange(comm.size), size)
        offs = np.arange(rep.size) - np.repeat(np.cumsum(size) - size, size)
        dl = ix.g_members[ix.g_start[g][rep] + offs]
        c2 = comm[rep]
        w2 = w[rep] / size[rep]
        out_c.append(c2)
        out_dl.append(dl)
        out_w.append(w2)
        nxt = ix.dl_to[dl].astype(np.int64)
        key = c2 * ix.n_switches + nxt
        uk, inv = np.unique(key, return_inverse=True)
        comm = uk // ix.n_switches
        cur = uk % ix.n_switches
        w = np.bincount(inv.ravel(), weights=w2, minlength=uk.size).astype(np.float64)
    else:
        raise RoutingError("an adaptive flow did not reach its leaf within 16 switch hops")
    if not out_c:
        z = np.zeros(0, dtype=np.int64)
        return z, z, np.zeros(0)
    return np.concatenate(out_c), np.concatenate(out_dl), np.concatenate(out_w)


def matrix_connection_ports(
    ix: FabricIndex, src_node: NDArray, dst_node: NDArray, nic: NDArray
) -> tuple[NDArray, NDArray]:
    """Node ports a Matrix connection uses for NIC index ``nic``: A -> B, or one leaf if shared.

    A flow leaves on the source's A port and arrives on the destination's B port; when both
    nodes' A ports (or both B ports) of that NIC sit on one leaf, it stays on that leaf.
    """
    a = np.asarray(ix.a_ports, dtype=np.int64)[nic]
    b = np.asarray(ix.b_ports, dtype=np.int64)[nic]
    same_a = ix.ep_leaf[src_node, a] == ix.ep_leaf[dst_node, a]
    same_b = ix.ep_leaf[src_node, b] == ix.ep_leaf[dst_node, b]
    sp = np.where(same_a, a, np.where(same_b, b, a))
    dp = np.where(same_a, a, b)
    return sp, dp


def rail_ports(ix: FabricIndex) -> Sequence[int]:
    """The per-NIC connection indices of a node: Matrix NIC indices, else cabled node ports."""
    if ix.is_matrix:
        return range(len(ix.a_ports))
    return [p for p in range(ix.n_ports) if (ix.ep_leaf[:, p] >= 0).all()]
